// The four public descriptions (routes, MCP tools, OpenAPI, catalog) agree with the operation
// table on every operation, field, bound, default and price; the OpenAPI document validates and
// a typed client generated from it type-checks against a call of every endpoint.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, readFile, writeFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import sharp from 'sharp';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { extractDiscoveryInfo, validateDiscoveryExtension } from '@x402/extensions/bazaar';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { operations } from '../../operations/index.js';
import type { Operation } from '../../operations/define.js';
import { acroFormPdf, makePdf, textPages } from '../support/pdf-fixtures.js';
import { docx } from '../support/office-fixtures.js';
import { toUsd } from '../../core/usd.js';
import { toOas30 } from '../../server/derive/openapi.js';
import { startTestService, form, type TestService } from '../support/service.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

type Schema = {
  type?: string; properties?: Record<string, Schema>; required?: string[]; enum?: unknown[]; minimum?: number; maximum?: number;
  default?: unknown; minLength?: number; maxLength?: number; items?: Schema; minItems?: number; maxItems?: number;
};

describe('routes, MCP tools, OpenAPI and the catalog agree with the operation table', () => {
  let t: TestService;
  let openapi: { paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: Schema }> }; responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>; 'x-x402': Record<string, unknown> }>> };
  let catalog: {
    x402Version: number; service: Record<string, unknown> & { mcp: Record<string, unknown> };
    items: Array<Record<string, unknown> & {
      metadata: Record<string, unknown> & { inputSchema: Schema }; accepts: Array<Record<string, unknown>>;
    }>;
  };
  let tools: Array<{ name: string; inputSchema: Schema }>;

  before(async () => {
    t = await startTestService({ solana: true });
    openapi = await (await fetch(`${t.url}/openapi.json`)).json() as typeof openapi;
    catalog = await (await fetch(`${t.url}/v1/discovery`)).json() as typeof catalog;
    const client = new Client({ name: 'surfaces-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    tools = (await client.listTools()).tools as typeof tools;
    await client.close();
  });
  after(async () => { await t?.stop(); });

  it('agree on every operation, field, bound, default and price', () => {
    const free = new Set(['/v1/health', '/openapi.json', '/v1/openapi.json', '/v1/discovery', '/.well-known/x402', '/llms.txt', '/v1/results/{token}', '/v1/jobs/{token}', '/v1/channels/refund']);
    expect(Object.keys(openapi.paths).filter((p) => !free.has(p)).sort())
      .to.equal(operations.map((op) => op.path).sort());
    expect(catalog.items.length).to.equal(operations.length);
    expect(tools.length).to.equal(operations.length);
    for (const op of operations) {
      const oa = openapi.paths[op.path].post;
      const form = oa.requestBody.content['multipart/form-data'].schema;
      const item = catalog.items.find((i) => i.resource === `${t.url}${op.path}`)!;
      const tool = tools.find((x) => x.name === op.tool)!;
      expect(item, op.path).to.exist();
      expect(tool, op.tool).to.exist();
      // The JSON body is the MCP tool's arguments, in OpenAPI 3.0's dialect.
      expect(oa.requestBody.content['application/json'].schema, op.path).to.equal(toOas30(tool.inputSchema) as Schema);
      for (const schema of [form, item.metadata.inputSchema, tool.inputSchema]) {
        const fileField = op.input.count.max > 1 ? (schema.properties!.files ?? schema.properties!.file) : schema.properties!.file;
        // An operation that fetches its page (from-url) takes no file on any surface.
        if (op.input.count.max === 0) expect([fileField, schema.properties!.file_url], op.path).to.equal([undefined, undefined]);
        else expect(fileField, op.path).to.exist();
        for (const name of op.fields.filter((f) => f.required).map((f) => f.name)) expect(schema.required, op.path).to.include(name);
        for (const f of op.fields) {
          const s = schema.properties![f.name];
          expect(s, `${op.path} ${f.name}`).to.exist();
          expect(s.type).to.equal(f.type);
          if (f.type === 'integer') {
            expect(s.minimum).to.equal(f.minimum);
            expect(s.maximum).to.equal(f.maximum);
          } else if (f.type === 'string' && f.maxLength !== undefined) {
            expect(s.maxLength).to.equal(f.maxLength);
          }
          expect(s.enum).to.equal('enum' in f && f.enum ? [...f.enum] : undefined);
          expect(s.default).to.equal(f.default);
        }
        // Besides the operation's fields: the file(s), a form's file_url in a file's place, and how the result leaves.
        const named = op.input.namedFile?.name;
        const fileNames = schema === tool.inputSchema
          ? [op.input.count.max > 1 ? 'files' : 'file', ...(named ? [named] : [])]
          : ['file', 'file_url', ...(named ? [named, `${named}_url`] : [])];
        const files = op.input.count.max === 0 ? [] : fileNames;
        expect(Object.keys(schema.properties!).sort(), op.path).to.equal([...files, ...op.fields.map((f) => f.name), 'delivery', 'deliver_to'].sort());
      }
      // Prices: the catalog's per-chain amount is the rate; OpenAPI carries the same and the dynamic range.
      expect(item.accepts.map((a) => `${a.scheme} ${a.network}`)).to.equal(['exact eip155:8453', 'exact solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', 'batch-settlement eip155:8453']);
      for (const a of item.accepts) expect(a).to.include({ amount: String(op.price.rate), asset: 'USDC', maxTimeoutSeconds: 300 });
      expect(item.metadata).to.include({ bodyType: 'multipart/form-data', pricingModel: op.price.model, priceUsd: toUsd(BigInt(op.price.rate)) });
      expect(item).to.include({ category: op.category, method: 'POST', type: 'http', x402Version: 2 });
      expect(item.metadata.thirdParty !== undefined, op.path).to.equal('provider' in op.content);
      expect(oa['x-x402']).to.include({ amount: String(op.price.rate), pricingModel: op.price.model });
      if (op.maxAmount !== undefined) expect((oa['x-x402'].dynamicPrice as { maxAmount: string }).maxAmount).to.equal(String(op.maxAmount));
      for (const status of ['200', '402', '413', '422', '501', '503']) expect(oa.responses[status], `${op.path} ${status}`).to.exist();
      expect(oa.responses['402'].headers!['PAYMENT-REQUIRED']).to.exist();
    }
  });

  it('follows the specification\'s catalog shape and price ranges', () => {
    expect(catalog.x402Version).to.equal(2);
    expect(catalog.service.mcp).to.equal({
      paymentMetaKey: 'x402/payment', protocolVersion: '2025-11-25', stateless: true,
      tools: operations.map((op) => op.tool), transport: 'streamable-http', url: `${t.url}/mcp`,
    });
    const max = (p: string) => (openapi.paths[p].post['x-x402'].dynamicPrice as { maxUsd: string }).maxUsd;
    expect(max('/v1/pdf/ocr')).to.equal('0.9');
    expect(max('/v1/pdf/tables')).to.equal('0.9');
    expect(max('/v1/pdf/structured')).to.equal('1.2');
    expect(max('/v1/pdf/render')).to.equal('0.5');
    // Unconfigured model provider: the catalog says so.
    const ocr = catalog.items.find((i) => String(i.resource).endsWith('/v1/pdf/ocr'))!;
    expect((ocr.metadata.thirdParty as { available: boolean }).available).to.equal(false);
  });

  it('agents find the service: /.well-known/x402 lists every paid URL, /llms.txt every operation with its price, server.json names the MCP remote', async () => {
    const wellKnown = await fetch(`${t.url}/.well-known/x402`);
    expect(wellKnown.status).to.equal(200);
    const discovery = await wellKnown.json() as { version: number; resources: string[]; instructions: string };
    expect(discovery.version).to.equal(1);
    expect(discovery.resources).to.equal(operations.map((op) => `${t.url}${op.path}`));
    // The payment channels are named where crawlers look first, with where the rest comes back.
    expect(discovery.instructions).to.contain('batch-settlement');
    expect(discovery.instructions).to.contain(`${t.url}/v1/channels/refund`);
    const llms = await fetch(`${t.url}/llms.txt`);
    expect(llms.headers.get('content-type')).to.contain('text/markdown');
    const text = await llms.text();
    expect(text.startsWith('# paydoc\n')).to.be.true();
    for (const op of operations) expect(text).to.contain(`](${t.url}${op.path}): ${toUsd(BigInt(op.price.rate))} USD per ${op.price.model === 'flat' ? 'call' : 'page'}`);
    expect(text).to.contain(`${t.url}/mcp`);
    expect(text).to.contain('PAYMENT-SIGNATURE');
    expect(text).to.contain('Payment channels (x402 batch-settlement) on eip155:8453');
    expect((catalog.service.channels as { refund: string }).refund).to.equal(`${t.url}/v1/channels/refund`);
    const paths = openapi.paths as unknown as Record<string, Record<string, { operationId?: string; 'x-x402'?: { schemes: unknown[] } }>>;
    expect(paths['/v1/channels/refund'].get.operationId).to.equal('channelRefund');
    expect(paths['/v1/image/resize'].post['x-x402']!.schemes).to.include({ scheme: 'batch-settlement', network: 'eip155:8453' });
    const server = JSON.parse(await readFile(path.join(root, 'server.json'), 'utf8')) as { name: string; version: string; description: string; remotes: Array<{ type: string; url: string }> };
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string };
    // The registry's rules: a namespaced name, the package's version, at most 100 characters of description.
    expect(server.name).to.match(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(server.version).to.equal(pkg.version);
    expect(server.description.length).to.be.at.most(100);
    expect(server.remotes).to.have.length(1);
    expect(server.remotes[0]).to.include({ type: 'streamable-http', url: 'https://{host}/mcp' });
  });

  it('the OpenAPI document carries what linters and agent wallets ask for: contact, licence URL, tag and free-endpoint descriptions, no authentication anywhere, the price of every paid operation in x-payment-info, the payment header as an optional parameter; the catalog names image types once', () => {
    type Parameter = { in: string; name: string; required: boolean };
    const doc = openapi as unknown as {
      info: { contact?: { url?: string }; license: { url?: string } }; tags: Array<{ description?: string }>;
      components: { securitySchemes?: unknown; parameters: Record<string, Parameter> };
    };
    expect(doc.info.contact?.url).to.equal(`${t.url}/`);
    expect(doc.info.license.url).to.exist();
    for (const tag of doc.tags) expect(tag.description).to.exist();
    for (const [route, item] of Object.entries(openapi.paths)) {
      const operation = Object.values(item)[0] as unknown as { description?: string; security?: unknown[] };
      expect(operation.description, route).to.exist();
      // The payment is no credential: a security scheme would read as an API key to obtain.
      expect(operation.security, route).to.equal([]);
    }
    expect(doc.components.securitySchemes).to.not.exist();
    expect(doc.components.parameters.PaymentSignature).to.include({ in: 'header', name: 'PAYMENT-SIGNATURE', required: false });
    for (const op of operations) {
      const max = op.maxAmount !== undefined ? { max: toUsd(BigInt(op.maxAmount)) } : {};
      const price = op.price.model === 'flat'
        ? { mode: 'fixed', currency: 'USD', amount: toUsd(BigInt(op.price.rate)) }
        : { mode: 'dynamic', currency: 'USD', min: toUsd(BigInt(op.price.rate)), ...max };
      expect((openapi.paths[op.path].post as unknown as Record<string, unknown>)['x-payment-info'], op.path).to.equal({ price, protocols: [{ x402: {} }] });
    }
    const resize = catalog.items.find((i) => String(i.resource).endsWith('/v1/image/resize'))!;
    expect((resize.metadata.output as string).match(/image\/webp/g)).to.have.length(1);
  });

  it('the OpenAPI document passes a standard validator', async () => {
    const doc = structuredClone(openapi) as never;
    await SwaggerParser.validate(doc);
    expect((openapi as unknown as { openapi: string }).openapi).to.equal('3.0.3');
    expect((openapi as unknown as { info: { version: string } }).info.version).to.equal('0.1.0');
    const v1 = await (await fetch(`${t.url}/v1/openapi.json`)).json();
    expect(v1).to.equal(openapi);
  });

  it('a typed client generated from it type-checks against a call of every endpoint', async () => {
    const dir = await mkdtemp(path.join(root, 'dist', 'typed-client-'));
    try {
      await writeFile(path.join(dir, 'api.d.ts'), astToString(await openapiTS(openapi as never)));
      const calls = operations.map((op) => {
        const body: string[] = [op.input.count.max > 1 ? 'file: [blob, blob]' : 'file: blob'];
        for (const f of op.fields.filter((x) => x.required)) body.push(`${f.name}: ${f.type === 'integer' ? (f.enum ? f.enum[0] : f.minimum ?? 1) : f.type === 'string' && f.enum ? `'${f.enum[0]}'` : "'x'"}`);
        return `  await client.POST('${op.path}', { body: { ${body.join(', ')} } });`;
      }).join('\n');
      await writeFile(path.join(dir, 'calls.ts'), `import createClient from 'openapi-fetch';
import type { paths } from './api.js';
const client = createClient<paths>({ baseUrl: 'http://localhost:8080' });
const blob = 'binary' as unknown as string;
export async function callEveryEndpoint(): Promise<void> {
${calls}
  const health = await client.GET('/v1/health');
  void health;
}
`);
      await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: true, types: [] }, files: ['calls.ts'] }));
      await symlink(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
      const { stdout } = await promisify(execFile)(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir]).catch((e: { stdout: string }) => ({ stdout: `FAILED ${e.stdout}` }));
      expect(stdout).to.equal('');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('every 402 is listable by the Bazaar (HTTP and MCP)', () => {
  let t: TestService;
  let client: Client;
  const pdf = makePdf(textPages(3));
  let files: Record<'image' | 'pdf' | 'markdown' | 'office' | 'web' | 'encrypted', Buffer>;
  // A value for every required field (and one of each pair the operation needs).
  const fields: Partial<Record<string, Record<string, string | number>>> = {
    'image.resize': { width: 10 }, 'image.rotate': { angle: 90 }, 'image.flip': { direction: 'horizontal' }, 'image.crop': { width: 10, height: 10 },
    'pdf.split': { ranges: '1-2' }, 'pdf.pages': { pages: '1-2' }, 'pdf.protect': { password: 'a-new-password' }, 'pdf.unlock': { password: 'pw' },
    'pdf.structured': { schema: '{"type":"object","properties":{"total":{"type":"number"}}}' },
    'pdf.redact': { text: '["Jane Doe"]' }, 'pdf.from-url': { url: 'https://example.com/' },
    'pdf.stamp': { text: 'Page {n} of {total}' },
    'pdf.form-fill': { values: '{"name":"Ada"}' }, 'pdf.set-metadata': { title: 'A title' },
  };

  before(async () => {
    // A provider URL is configured (never contacted by a quote), so the four model operations quote too.
    t = await startTestService({ config: { modelBaseUrl: 'http://127.0.0.1:9/v1', modelName: 'any' } });
    client = new Client({ name: 'bazaar-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'paydoc-bazaar-'));
    await writeFile(path.join(scratch, 'in.pdf'), pdf);
    await promisify(execFile)('qpdf', ['--encrypt', 'pw', 'pw', '256', '--', path.join(scratch, 'in.pdf'), path.join(scratch, 'enc.pdf')]);
    files = {
      image: await sharp({ create: { width: 40, height: 30, channels: 3, background: '#336699' } }).png().toBuffer(),
      pdf, markdown: Buffer.from('# Title\n\nText.\n'), office: await docx(), web: Buffer.from('<!doctype html><p>Text.</p>'), encrypted: await readFile(path.join(scratch, 'enc.pdf')),
    };
    await rm(scratch, { recursive: true, force: true });
  });
  after(async () => { await client?.close(); await t?.stop(); });

  // form-fill's quote reads the form: it needs one holding the field it names.
  const fileFor = (op: Operation) => (op.id === 'pdf.unlock' ? files.encrypted : op.id === 'pdf.form-fill' ? acroFormPdf()
    : files[op.input.kind === 'page-image' ? 'image' : op.input.kind]);

  function listable(pr: PaymentRequired, where: string): void {
    expect(pr.resource.description?.length ?? 0, where).to.be.at.most(500);
    const bazaar = pr.extensions?.bazaar;
    expect(validateDiscoveryExtension(bazaar as never), where).to.equal({ valid: true });
    // What a facilitator sees: the client's payment carries the 402's resource and extensions.
    const payment = {
      x402Version: 2, resource: pr.resource, accepted: pr.accepts[0], payload: {}, extensions: pr.extensions,
    } as PaymentPayload;
    const info = extractDiscoveryInfo(payment, pr.accepts[0], true);
    expect(info, where).to.not.be.null();
    expect(info!.resourceUrl, where).to.equal(pr.resource.url);
    expect(pr.extensions?.['payment-identifier'], where).to.include({ info: { required: false } });
  }

  for (const op of operations) {
    it(`${op.path} and ${op.tool}`, async () => {
      const uploads = Array.from({ length: op.input.count.min }, () => fileFor(op));
      const res = await fetch(`${t.url}${op.path}`, { method: 'POST', body: form(uploads, fields[op.id] ?? {}) });
      expect(res.status, op.path).to.equal(402);
      const http = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
      expect(http.resource.url).to.equal(`${t.url}${op.path}`);
      listable(http, op.path);
      // Agent wallets read the Bazaar entry to build the call: the JSON body, the file by URL.
      const input = (http.extensions!.bazaar as { info: { input: { bodyType: string; body: Record<string, unknown> } } }).info.input;
      expect(input.bodyType, op.path).to.equal('json');
      const example = (op.input.count.max > 1 ? (input.body.files as unknown[])[0] : input.body.file ?? input.body) as { url: string };
      expect(example.url, op.path).to.match(/^https:\/\/example\.com\//);

      const encoded = uploads.map((bytes) => ({ data: bytes.toString('base64') }));
      const fileArgs = op.input.count.max === 0 ? {} : op.input.count.max > 1 ? { files: encoded } : { file: encoded[0] };
      const args = { ...fileArgs, ...fields[op.id] };
      const quote = await client.callTool({ name: op.tool, arguments: args });
      const mcp = quote.structuredContent as unknown as PaymentRequired;
      expect(mcp.resource.url, op.tool).to.equal(`${t.url}/mcp`);
      listable(mcp, op.tool);
    });
  }
});
