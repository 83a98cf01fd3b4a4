// The paying stdio bridge, driven as an MCP host drives it: the official SDK's stdio client starts
// `node dist/bin/mcp-bridge.js`, lists the tools, and calls them with local file paths; the bridge
// quotes, pays on the local chains within its caps, and writes file results to its output folder.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, type TestService } from '../support/service.js';
import { balancesOf } from '../support/paying.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';
import { operations } from '../../operations/index.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BRIDGE = path.join(root, 'dist/bin/mcp-bridge.js');

type Text = { type: 'text'; text: string };
type Link = { type: 'resource_link'; uri: string; mimeType: string; size: number; name: string };

function textOf(result: CallToolResult): string {
  return result.content.filter((c): c is Text => c.type === 'text').map((c) => c.text).join('\n');
}

describe('the paying stdio bridge (paydoc-mcp)', () => {
  let svc: TestService;
  let dir: string;
  let photo: string;
  const clients: Client[] = [];

  /** Starts the bridge as a host would, with the given environment, in the given working directory. */
  async function bridge(env: Record<string, string>, cwd = dir): Promise<Client> {
    const client = new Client({ name: 'test-host', version: '1.0.0' });
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => k === 'PATH' || k === 'HOME')) as Record<string, string>;
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BRIDGE], cwd, env: { ...inherited, PAYDOC_URL: svc.url, ...env }, stderr: 'ignore' }));
    clients.push(client);
    return client;
  }

  before(async () => {
    svc = await startTestService({ solana: true });
    dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-bridge-'));
    photo = path.join(dir, 'photo.jpg');
    await writeFile(photo, await sharp({ create: { width: 800, height: 600, channels: 3, background: '#2a6f97' } }).jpeg().toBuffer());
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await svc?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`serves the same ${operations.length} tools, whose files may be local paths`, async () => {
    const client = await bridge({ PAYER_KEY: svc.evm.payerKey, OUTPUT_DIR: path.join(dir, 'out-list') });
    const { tools } = await client.listTools();
    expect(tools.length).to.equal(operations.length);
    const resize = tools.find((t) => t.name === 'svc_image_resize')!;
    const file = resize.inputSchema.properties!.file as { anyOf: Array<{ required: string[] }> };
    // A local path beside the service's own choices: a URL it fetches, or base64 data.
    expect(file.anyOf.map((s) => s.required)).to.equal([['path'], ['url'], ['data']]);
    const merge = tools.find((t) => t.name === 'svc_pdf_merge')!;
    expect((merge.inputSchema.properties!.files as { items: { anyOf: unknown[] } }).items.anyOf).to.have.length(3);
    expect(resize.inputSchema.properties).to.include(['delivery', 'deliver_to']);
    expect(resize.description).to.contain('Through this bridge');
    expect(resize.annotations).to.include({ readOnlyHint: true });
  });

  it('quotes, pays on Base and writes the resized image to OUTPUT_DIR, returning its path and the receipt', async () => {
    const out = path.join(dir, 'out-base');
    const client = await bridge({ PAYER_KEY: svc.evm.payerKey, OUTPUT_DIR: out });
    const before = await balancesOf(svc.evm);
    const result = await client.callTool({ name: 'svc_image_resize', arguments: { file: { path: photo }, width: 200, format: 'webp' } }) as CallToolResult;
    expect(result.isError, textOf(result)).to.not.equal(true);
    const link = result.content.find((c): c is Link => c.type === 'resource_link')!;
    expect(link.mimeType).to.equal('image/webp');
    const written = fileURLToPath(link.uri);
    expect(path.dirname(written)).to.equal(out);
    const bytes = await readFile(written);
    expect(link.size).to.equal(bytes.length);
    expect(await sharp(bytes).metadata()).to.include({ format: 'webp', width: 200, height: 150 });
    expect(textOf(result)).to.contain(`Wrote ${written} (image/webp, ${bytes.length} bytes)`);
    expect(textOf(result)).to.match(/Paid 0\.005 USD on eip155:8453, transaction 0x[0-9a-f]{64}\. Spent so far: 0\.005 of 1 USD/);
    expect((result._meta!['x402/payment-response'] as { success: boolean }).success).to.equal(true);
    const after = await balancesOf(svc.evm);
    expect(before.payer - after.payer).to.equal(5000n);
    expect(after.payTo - before.payTo).to.equal(5000n);
  });

  it('passes JSON results through as structured content, paid per page', async () => {
    const pdf = path.join(dir, 'three.pdf');
    await writeFile(pdf, makePdf(textPages(3)));
    const client = await bridge({ PAYER_KEY: svc.evm.payerKey, OUTPUT_DIR: path.join(dir, 'out-json') });
    const before = await balancesOf(svc.evm);
    const result = await client.callTool({ name: 'svc_pdf_extract', arguments: { file: { path: pdf } } }) as CallToolResult;
    expect(result.isError, textOf(result)).to.not.equal(true);
    expect(result.structuredContent).to.include({ pageCount: 3 });
    expect(textOf(result)).to.contain('Paid 0.03 USD on eip155:8453');
    expect(before.payer - (await balancesOf(svc.evm)).payer).to.equal(30000n);
    expect(await readdir(path.join(dir, 'out-json')).catch(() => [])).to.equal([]);
  });

  it('refuses a price above MAX_USD_PER_CALL with a tool error naming both, signing nothing', async () => {
    const pdf = path.join(dir, 'eleven.pdf');
    await writeFile(pdf, makePdf(textPages(11)));
    const client = await bridge({ PAYER_KEY: svc.evm.payerKey, OUTPUT_DIR: path.join(dir, 'out-cap') });
    const before = await balancesOf(svc.evm);
    const result = await client.callTool({ name: 'svc_pdf_extract', arguments: { file: { path: pdf } } }) as CallToolResult;
    expect(result.isError).to.equal(true);
    expect(textOf(result)).to.contain('the price is 0.11 USD, above MAX_USD_PER_CALL (0.1 USD); nothing was signed or paid');
    expect(await balancesOf(svc.evm)).to.equal(before);
  });

  it('stops at MAX_USD_TOTAL: pays while the budget lasts, then refuses naming what is left', async () => {
    const client = await bridge({ PAYER_KEY: svc.evm.payerKey, MAX_USD_TOTAL: '0.012', OUTPUT_DIR: path.join(dir, 'out-total') });
    const before = await balancesOf(svc.evm);
    const args = { file: { path: photo }, width: 100 };
    for (const spent of ['0.005', '0.01']) {
      const paid = await client.callTool({ name: 'svc_image_resize', arguments: args }) as CallToolResult;
      expect(paid.isError, textOf(paid)).to.not.equal(true);
      expect(textOf(paid)).to.contain(`Spent so far: ${spent} of 0.012 USD`);
    }
    const refused = await client.callTool({ name: 'svc_image_resize', arguments: args }) as CallToolResult;
    expect(refused.isError).to.equal(true);
    expect(textOf(refused)).to.contain('the price is 0.005 USD, and only 0.002 USD of MAX_USD_TOTAL (0.012 USD) is left; nothing was signed or paid');
    expect(before.payer - (await balancesOf(svc.evm)).payer).to.equal(10000n);
    expect(await readdir(path.join(dir, 'out-total'))).to.have.length(2);
  });

  it('pays on Solana with SVM_PAYER_KEY, into a new folder in the working directory by default', async () => {
    const cwd = await mkdtemp(path.join(dir, 'cwd-'));
    const client = await bridge({ SVM_PAYER_KEY: svc.svm!.payerSecretKey, SVM_RPC_URL: svc.svm!.rpcUrl }, cwd);
    const before = await balancesOf(svc.svm!);
    // Read from the working directory, the only folder the bridge reads files from by default.
    await writeFile(path.join(cwd, 'two.pdf'), makePdf(textPages(2)));
    const result = await client.callTool({ name: 'svc_pdf_split', arguments: { file: { path: 'two.pdf' }, ranges: '1' } }) as CallToolResult;
    expect(result.isError, textOf(result)).to.not.equal(true);
    const link = result.content.find((c): c is Link => c.type === 'resource_link')!;
    expect(link.mimeType).to.equal('application/zip');
    const folders = (await readdir(cwd)).filter((name) => name !== 'two.pdf');
    expect(folders).to.have.length(1);
    expect(folders[0]).to.startWith('paydoc-results-');
    expect(path.dirname(fileURLToPath(link.uri))).to.equal(path.join(cwd, folders[0]));
    expect((await readFile(fileURLToPath(link.uri))).subarray(0, 4).toString('latin1')).to.equal('PK\x03\x04');
    expect(textOf(result)).to.contain('on solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp');
    const after = await balancesOf(svc.svm!);
    expect(before.payer - after.payer).to.equal(after.payTo - before.payTo);
    expect(before.payer - after.payer > 0n).to.equal(true);
  });

  it('refuses a missing path and passes the service\'s own refusals on, charging nothing', async () => {
    const client = await bridge({ PAYER_KEY: svc.evm.payerKey, OUTPUT_DIR: path.join(dir, 'out-bad') });
    const before = await balancesOf(svc.evm);
    const missing = await client.callTool({ name: 'svc_image_resize', arguments: { file: { path: path.join(dir, 'nope.jpg') }, width: 10 } }) as CallToolResult;
    expect(missing.isError).to.equal(true);
    expect(textOf(missing)).to.contain(`file.path: no file at ${path.join(dir, 'nope.jpg')}`);
    const notImage = path.join(dir, 'text.jpg');
    await writeFile(notImage, 'not an image at all');
    const refused = await client.callTool({ name: 'svc_image_resize', arguments: { file: { path: notImage }, width: 10 } }) as CallToolResult;
    expect(refused.isError).to.equal(true);
    expect((refused.structuredContent as { error: { code: string } }).error.code).to.equal('UNSUPPORTED_TYPE');
    const unwritable = await bridge({ PAYER_KEY: svc.evm.payerKey, OUTPUT_DIR: path.join(photo, 'out') });
    const noFolder = await unwritable.callTool({ name: 'svc_image_resize', arguments: { file: { path: photo }, width: 10 } }) as CallToolResult;
    expect(noFolder.isError).to.equal(true);
    expect(textOf(noFolder)).to.contain('the output folder cannot be made');
    expect(textOf(noFolder)).to.contain('Nothing was signed or paid');
    expect(await balancesOf(svc.evm)).to.equal(before);
  });

  it('will not start without a wallet, or with a cap that is not an amount', async () => {
    const { execFile } = await import('node:child_process');
    const start = (env: Record<string, string>) => new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const options = { env: { PATH: process.env.PATH!, PAYDOC_URL: svc.url, ...env } };
      const child = execFile(process.execPath, [BRIDGE], options, (err, _out, stderr) => {
        resolve({ code: child.exitCode ?? (err as { code?: number } | null)?.code ?? null, stderr });
      });
    });
    const noKey = await start({});
    expect(noKey.code).to.equal(1);
    expect(noKey.stderr).to.contain('set PAYER_KEY');
    const badCap = await start({ PAYER_KEY: svc.evm.payerKey, MAX_USD_PER_CALL: 'ten' });
    expect(badCap.stderr).to.contain('MAX_USD_PER_CALL must be an amount of US dollars such as 0.10');
  });
});
