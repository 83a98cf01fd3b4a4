// The service as the production image holds it: the built dist/ with only the production
// dependencies (npm ci --omit=dev, as the Dockerfile's npm prune leaves them), started as the
// image starts it (node dist/bin/start.js, PAYMENTS=live) and paid through a facilitator it
// knows only by URL. The local chains' packages (anvil, litesvm, solc) are development
// dependencies, so live mode must run without them. The Base chain and facilitator it pays
// through are started here, from this tree's devchains/.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { wrapFetchWithPayment } from '@x402/fetch';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { startEvmRig, type EvmRig } from '../../devchains/index.js';
import { createPayer } from '../../client/payer.js';
import { form } from '../support/service.js';
import { freePort } from '../support/paying.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
// What the image has besides node_modules (see the Dockerfile): the build output without the
// local chains, the tests, the benchmarks and the rig contracts' cache, and package.json. The
// engines' programs that are not TypeScript (MuPDF's .js, WeasyPrint's .py) are in dist/ too.
const builtOutputLeftOut = new Set(['devchains', 'test', 'bench', 'container-test', 'vendor'].map((dir) => path.join(root, 'dist', dir)));
const DEV_ONLY_PACKAGES = ['litesvm', 'solc', 'solc-0.8.28', '@openzeppelin/contracts/package.json', '@foundry-rs/anvil-linux-amd64/package.json'];
// npm's cache, filled by the project's own install, makes this a copy rather than a download.
const INSTALL_TIMEOUT_MS = 180_000;
const START_TIMEOUT_MS = 30_000;

/** Runs a command to its end; rejects with its output when it fails or outlives the timeout. */
function runToEnd(command: string, args: string[], options: { cwd: string; timeoutMs: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-20_000); };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', (error) => { clearTimeout(timer); reject(error); });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} ended with ${signal ?? `code ${code}`}:\n${output}`));
    });
  });
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

describe('a production install (no development dependencies) in live mode', () => {
  let scratch: string | undefined;
  let jobRoot: string | undefined;
  let evm: EvmRig | undefined;
  let service: ChildProcess | undefined;
  let serviceOutput = '';
  let baseUrl: string;

  const cleanUp = async () => {
    await stopChild(service);
    await evm?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
    if (jobRoot) await rm(jobRoot, { recursive: true, force: true });
  };

  before(async () => {
    try {
      scratch = await mkdtemp(path.join(os.tmpdir(), 'paydoc-production-'));
      await cp(path.join(root, 'dist'), path.join(scratch, 'dist'), { recursive: true, filter: (source) => !builtOutputLeftOut.has(source) });
      for (const file of ['package.json', 'package-lock.json']) {
        await mkdir(path.dirname(path.join(scratch, file)), { recursive: true });
        await cp(path.join(root, file), path.join(scratch, file));
      }
      await runToEnd('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: scratch, timeoutMs: INSTALL_TIMEOUT_MS });

      evm = await startEvmRig();
      jobRoot = await mkdtemp(path.join('/dev/shm', 'paydoc-production-jobs-'));
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      // Only what the service is configured with: nothing of this process's environment (a
      // NODE_PATH or NODE_OPTIONS) can lend it the packages the install left out.
      service = spawn(process.execPath, ['dist/bin/start.js'], {
        cwd: scratch,
        env: {
          PATH: process.env.PATH, HOME: scratch, LANG: 'C.UTF-8', NODE_ENV: 'production',
          PAYMENTS: 'live', PORT: String(port), HOST: '127.0.0.1', BASE_URL: baseUrl, TMP_DIR: jobRoot, WORKERS: '1', LOG_LEVEL: 'info',
          EVM_FACILITATOR_URL: evm.facilitatorUrl, EVM_NETWORK: evm.network, EVM_ASSET: evm.asset, EVM_PAY_TO: evm.payTo,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const keep = (chunk: Buffer) => { serviceOutput = (serviceOutput + chunk.toString()).slice(-20_000); };
      service.stdout!.on('data', keep);
      service.stderr!.on('data', keep);
      const deadline = Date.now() + START_TIMEOUT_MS;
      for (;;) {
        if (service.exitCode !== null) throw new Error(`the service exited with code ${service.exitCode}:\n${serviceOutput}`);
        if (Date.now() > deadline) throw new Error(`the service did not answer /v1/health within ${START_TIMEOUT_MS} ms:\n${serviceOutput}`);
        const healthy = await fetch(`${baseUrl}/v1/health`).then((res) => res.ok, () => false);
        if (healthy) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } catch (error) {
      await cleanUp();
      throw error;
    }
  });

  after(cleanUp);

  it('installs without the local chains\' packages', () => {
    const resolveFromInstall = createRequire(path.join(scratch!, 'dist', 'bin', 'start.js'));
    for (const name of DEV_ONLY_PACKAGES) {
      expect(() => resolveFromInstall.resolve(name), name).to.throw();
    }
    for (const name of ['@x402/core', '@hapi/hapi', 'sharp', 'viem']) {
      expect(existsSync(path.join(scratch!, 'node_modules', name, 'package.json')), name).to.be.true();
    }
  });

  /** Starts the install in dev mode, which must fail at once; its exit code and output. */
  async function startDevMode(): Promise<{ code: number | null; output: string }> {
    const devMode = spawn(process.execPath, ['dist/bin/start.js'], {
      cwd: scratch,
      env: { PATH: process.env.PATH, HOME: scratch, PAYMENTS: 'dev', PORT: String(await freePort()), HOST: '127.0.0.1', TMP_DIR: jobRoot, WORKERS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    devMode.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    devMode.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const timer = setTimeout(() => devMode.kill('SIGKILL'), START_TIMEOUT_MS);
    const [code] = await once(devMode, 'exit') as [number | null];
    clearTimeout(timer);
    return { code, output };
  }

  it('refuses dev mode, whose local chains are not installed, with a message that says so', async () => {
    // As in the image: no devchains/ at all.
    expect(existsSync(path.join(scratch!, 'dist', 'devchains'))).to.be.false();
    const withoutChains = await startDevMode();
    expect(withoutChains.code, withoutChains.output).to.equal(1);
    expect(withoutChains.output).to.contain('paydoc failed to start: PAYMENTS=dev needs the development dependencies and the local chains (devchains/)');
    expect(withoutChains.output).to.contain('dist/devchains/index.js');

    // A production install of a full build: the chains are there, their packages are not.
    await cp(path.join(root, 'dist', 'devchains'), path.join(scratch!, 'dist', 'devchains'), { recursive: true });
    try {
      const withoutPackages = await startDevMode();
      expect(withoutPackages.code, withoutPackages.output).to.equal(1);
      expect(withoutPackages.output).to.contain('paydoc failed to start: PAYMENTS=dev needs the development dependencies');
      expect(withoutPackages.output).to.contain('litesvm');
    } finally {
      await rm(path.join(scratch!, 'dist', 'devchains'), { recursive: true, force: true });
    }
  });

  it('has no /dev/ routes in live mode: the demo payer\'s address and signer answer 404', async () => {
    const payer = await fetch(`${baseUrl}/dev/payer`);
    expect(payer.status).to.equal(404);
    await payer.body?.cancel();
    const sign = await fetch(`${baseUrl}/dev/sign`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ paymentRequired: { x402Version: 2, accepts: [] } }) });
    expect(sign.status).to.equal(404);
    await sign.body?.cancel();
  });

  it('starts in live mode and takes a paid call through the configured facilitator', async () => {
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#aa3355' } }).png().toBuffer();
    const payer = await createPayer({ chain: 'base', evmKey: evm!.payerKey });
    let signedAmount: string | undefined;
    payer.onAfterPaymentCreation(async (context) => { signedAmount = context.paymentPayload.accepted.amount; });
    const payFetch = wrapFetchWithPayment(fetch, payer);
    const payeeBefore = await evm!.balanceOf(evm!.payTo);
    const settlementsBefore = evm!.facilitator.calls.settle;

    const res = await payFetch(`${baseUrl}/v1/image/resize`, { method: 'POST', body: form([png], { width: 20, format: 'png' }) });
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.status, serviceOutput).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/png');
    expect(await sharp(body).metadata()).to.include({ format: 'png', width: 20, height: 15 });

    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(receipt.success).to.equal(true);
    expect(receipt.network).to.equal(evm!.network);
    expect(receipt.transaction).to.match(/^0x[0-9a-f]{64}$/);
    expect(evm!.facilitator.calls.settle).to.equal(settlementsBefore + 1);
    expect(signedAmount).to.equal('5000');
    expect(await evm!.balanceOf(evm!.payTo) - payeeBefore).to.equal(5000n);
  });

  it('runs the engines\' programs that are not TypeScript from the installed dist/: a MuPDF program and WeasyPrint\'s script', async () => {
    const payFetch = wrapFetchWithPayment(fetch, await createPayer({ chain: 'base', evmKey: evm!.payerKey }));
    // pdf/markdown reads the pages with tools/engines/mupdf/page-text.js.
    const pdf = makePdf(textPages(1));
    const markdown = await payFetch(`${baseUrl}/v1/pdf/markdown`, { method: 'POST', body: form([{ bytes: pdf, name: 'doc.pdf', type: 'application/pdf' }]) });
    expect(markdown.status, serviceOutput).to.equal(200);
    expect(await markdown.text()).to.contain('markerpage1');
    // pdf/from-markdown typesets with tools/engines/weasyprint/render.py.
    const source = new TextEncoder().encode('# Installed\n\nTypeset from the production install.\n');
    const typeset = await payFetch(`${baseUrl}/v1/pdf/from-markdown`, { method: 'POST', body: form([{ bytes: source, name: 'doc.md', type: 'text/markdown' }]) });
    expect(typeset.status, serviceOutput).to.equal(200);
    expect(typeset.headers.get('content-type')).to.equal('application/pdf');
    expect(Buffer.from(await typeset.arrayBuffer()).subarray(0, 5).toString('latin1')).to.equal('%PDF-');
  });
});
