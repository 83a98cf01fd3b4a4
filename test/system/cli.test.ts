// The embedded default as a newcomer meets it: the service started as `npm start` runs it (with
// its own local chains), the paying CLI pays for a resize on Base and an extract on Solana, and
// the MCP example lists the tools, gets a quote and pays for one call.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, writeFile, readFile, rm, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import nodeHttp from 'node:http';
import { once } from 'node:events';
import { createPublicClient, http, erc20Abi } from 'viem';
import { makePdf, textPages } from '../support/pdf-fixtures.js';
import { freePort } from '../support/paying.js';
import { operations } from '../../operations/index.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const run = promisify(execFile);

describe('npm start, the paying CLI and the MCP example', () => {
  let child: ChildProcess;
  let output = '';
  let base: string;
  let dir: string;
  let tmpDir: string;

  // A loopback origin the service may fetch from (URL_FETCH_ALLOW): it serves one PDF.
  let origin: nodeHttp.Server;
  let originUrl: string;

  before(async () => {
    origin = nodeHttp.createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/pdf' }); res.end(makePdf(textPages(3))); });
    origin.listen(0, '127.0.0.1');
    await once(origin, 'listening');
    originUrl = `http://127.0.0.1:${(origin.address() as { port: number }).port}`;
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-cli-'));
    tmpDir = await mkdtemp(path.join('/dev/shm', 'paydoc-cli-jobs-'));
    child = spawn(process.execPath, [path.join(root, 'dist/bin/start.js')], {
      cwd: root,
      env: { PATH: process.env.PATH, PORT: String(port), HOST: '127.0.0.1', BASE_URL: base, TMP_DIR: tmpDir, WORKERS: '2', LOG_LEVEL: 'warn', URL_FETCH_ALLOW: originUrl.slice('http://'.length) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => { output += d.toString(); });
    child.stderr!.on('data', (d: Buffer) => { output += d.toString(); });
    for (let i = 0; i < 300 && !output.includes('Stop with Ctrl-C'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(output).to.contain('LOCAL TEST CHAINS');
  });

  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    origin?.close();
    await rm(dir, { recursive: true, force: true });
    await rm(tmpDir, { recursive: true, force: true });
  });

  const grab = (re: RegExp) => { const m = re.exec(output); expect(m, String(re)).to.exist(); return m![1]; };

  it('the start-up message says how to pay on Base and on Solana', () => {
    expect(output).to.contain(`${base}/openapi.json`);
    expect(grab(/its key \(dev only\): (0x[0-9a-f]{64})/)).to.equal('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
    expect(output).to.match(/Solana \(solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp\) local chain: RPC http:\/\/127\.0\.0\.1:\d+/);
    expect(output).to.contain('node dist/bin/pay.js');
  });

  it('the CLI pays for a resize on Base: a valid image, and the balances moved by the price', async () => {
    const key = grab(/its key \(dev only\): (0x[0-9a-f]{64})/);
    const rpc = grab(/Base \(eip155:8453\) local chain: RPC (http:\/\/127\.0\.0\.1:\d+)/);
    const payer = grab(/demo payer (0x[0-9a-fA-F]{40}) holds/) as `0x${string}`;
    const chain = createPublicClient({ transport: http(rpc) });
    const usdc = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
    const balance = () => chain.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [payer] });
    const photo = path.join(dir, 'photo.jpg');
    await writeFile(photo, await sharp({ create: { width: 400, height: 300, channels: 3, background: '#cc8844' } }).jpeg().toBuffer());
    const before = await balance();
    const out = path.join(dir, 'small.jpg');
    const { stderr } = await run(process.execPath, [path.join(root, 'dist/bin/pay.js'), `${base}/v1/image/resize`, `file=@${photo}`, 'width=100', '--out', out], { env: { ...process.env, PAYER_KEY: key } });
    expect(stderr).to.match(/paid 5000 atomic USDC \(0\.005 USD\) on eip155:8453; transaction 0x[0-9a-f]{64}/);
    expect(await sharp(await readFile(out)).metadata()).to.include({ format: 'jpeg', width: 100, height: 75 });
    expect(before - await balance()).to.equal(5000n);
  });

  it('the CLI pays for a file given by URL, its result by link written to --out', async () => {
    const key = grab(/its key \(dev only\): (0x[0-9a-f]{64})/);
    const out = path.join(dir, 'linked.json');
    const { stderr } = await run(process.execPath, [path.join(root, 'dist/bin/pay.js'), `${base}/v1/pdf/extract`, `file_url=${originUrl}/doc.pdf`, '--delivery', 'link', '--out', out], { env: { ...process.env, PAYER_KEY: key } });
    expect(stderr).to.match(/paid 30000 atomic USDC \(0\.03 USD\) on eip155:8453; transaction 0x[0-9a-f]{64}; wrote \d+ bytes to /);
    expect(JSON.parse(await readFile(out, 'utf8'))).to.include({ pageCount: 3 });
  });

  it('the CLI pays on Solana when asked', async () => {
    const key = grab(/its secret key \(dev only\): (\w+)/);
    const rpc = grab(/Solana \(solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp\) local chain: RPC (http:\/\/127\.0\.0\.1:\d+)/);
    const pdf = path.join(dir, 'doc.pdf');
    await writeFile(pdf, makePdf(textPages(2)));
    const out = path.join(dir, 'text.json');
    const { stderr } = await run(process.execPath, [path.join(root, 'dist/bin/pay.js'), '--chain', 'solana', `${base}/v1/pdf/extract`, `file=@${pdf}`, '--out', out], { env: { ...process.env, SVM_PAYER_KEY: key, SVM_RPC_URL: rpc } });
    expect(stderr).to.contain('paid 20000 atomic USDC (0.02 USD) on solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp');
    expect(JSON.parse(await readFile(out, 'utf8'))).to.include({ pageCount: 2, likelyScanned: false });
  });

  it('the CLI pays a price above 1 USD only when --max-usd allows it', async () => {
    const key = grab(/its key \(dev only\): (0x[0-9a-f]{64})/);
    const pdf = path.join(dir, 'long.pdf');
    await writeFile(pdf, makePdf(textPages(120)));
    const args = [path.join(root, 'dist/bin/pay.js'), `${base}/v1/pdf/extract`, `file=@${pdf}`, '--out', path.join(dir, 'long.json')];
    const env = { env: { ...process.env, PAYER_KEY: key } };
    const refused = await run(process.execPath, args, env).catch((err: { code: number; stderr: string }) => err);
    expect((refused as { code: number }).code).to.equal(1);
    expect((refused as { stderr: string }).stderr).to.contain('above the most this call may cost (--max-usd, 1 USD unless given); nothing was paid');
    const { stderr } = await run(process.execPath, [...args, '--max-usd', '2'], env);
    expect(stderr).to.match(/paid 1200000 atomic USDC \(1\.2 USD\) on eip155:8453/);
    expect(JSON.parse(await readFile(path.join(dir, 'long.json'), 'utf8'))).to.include({ pageCount: 120 });
  });

  it('the MCP example lists the tools, gets a quote and pays for one call', async () => {
    const { stdout } = await run(process.execPath, [path.join(root, 'dist/examples/mcp-pay.js')], { env: { ...process.env, BASE_URL: base } });
    expect(stdout).to.contain(`${operations.length} tools: svc_image_compress`);
    expect(stdout).to.match(/quote: 5000 atomic USDC on eip155:8453/);
    expect(stdout).to.contain('result: image/webp 320x240');
    expect(stdout).to.match(/receipt: settled on eip155:8453, transaction 0x[0-9a-f]{64}/);
  });

  it('stops cleanly on SIGTERM, leaving no job directories', async () => {
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
    expect(await readdir(tmpDir)).to.equal([]);
  });
});
