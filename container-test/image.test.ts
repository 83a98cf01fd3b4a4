// `npm run test:image`: the Dockerfile, unchanged, built with buildah and the image run as a user
// would run it: its own entrypoint, command, environment and non-root user, a tmpfs at /jobs,
// PAYMENTS=live (the image's default) against the local Base and Solana chains and their x402
// facilitators, started here on the host from devchains/. Calls are paid with the standard x402
// client and the balances are read back from the chains. Kept out of test/ (and `npm test`): it
// takes 7 to 13 minutes, most of it the build, so CI runs it as a step of its own.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { wrapFetchWithPayment } from '@x402/fetch';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { startEvmRig, startSvmRig, type EvmRig, type SvmRig } from '../devchains/index.js';
import { createPayer } from '../client/payer.js';
import { operations } from '../operations/index.js';
import { form } from '../test/support/service.js';
import { freePort } from '../test/support/paying.js';
import { docx } from '../test/support/office-fixtures.js';
import { BASE_IMAGE, buildah, ensureBaseImage, openFilesLimit, run } from './buildah.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const IMAGE = 'localhost/paydoc:test';
const SIZE_REPORT = path.join(root, 'bench/results/image.json');
// Measured on a shared 2-core machine: 1.5 minutes to make the base, 4 to 10 to build.
const SETUP_TIMEOUT_MS = 40 * 60_000;
const BUILD_TIMEOUT_MS = 30 * 60_000;
const START_TIMEOUT_MS = 60_000;
const NON_ROOT_UID = 10001;
// The local chains' packages are development dependencies: the image's npm prune must drop them.
const DEV_CHAIN_PACKAGES = ['litesvm', 'solc', 'solc-0.8.28', '@openzeppelin/contracts', '@foundry-rs/anvil-linux-amd64'];
// Build tools the image must not carry: Debian packages and the commands they would put on PATH.
const COMPILER_PACKAGES = /^(gcc|g\+\+|cpp|clang|llvm|make|build-essential|binutils|libc6-dev|python3-dev|libpython3[.\d]*-dev)(-\d+)?$/;
const COMPILER_COMMANDS = ['cc', 'c++', 'gcc', 'g++', 'cpp', 'clang', 'make', 'ld', 'as', 'tcc'];
// npm's global config file in the node image ($PREFIX/etc/npmrc), and a place for the CA next to it.
const BUILD_NPMRC = '/usr/local/etc/npmrc';
const BUILD_CA_FILE = '/usr/local/etc/build-host-ca.crt';
const MARKDOWN = '# Container check\n\nPaid for on **Solana**, rendered by WeasyPrint inside the image.\n\n- one\n- two\n';

interface ImageConfig { Entrypoint?: string[]; Cmd?: string[]; User?: string; Env?: string[]; Healthcheck?: { Test?: string[] } }

const log = (line: string) => console.error(`test:image: ${line}`);
const seconds = (ms: number) => Math.round(ms / 1000);

/**
 * Where this machine's network intercepts TLS with its own certificate authority (the host then
 * names it for Node in NODE_EXTRA_CA_CERTS), npm ci in the build stage cannot reach the registry
 * with Node's built-in roots, and a Docker build here would fail the same way. The build's RUN
 * steps then get the host's CA file and an npm global config pointing at it, in a read-only bind
 * mount over /usr/local/etc, npm's global config directory in the node image, which the base holds
 * empty: an existing directory, so buildah leaves no mount point behind in the image (checked
 * below), and nothing in the Dockerfile changes.
 */
async function hostCaVolumes(scratch: string): Promise<string[]> {
  const caFile = process.env.NODE_EXTRA_CA_CERTS;
  if (!caFile || !existsSync(caFile)) return [];
  const etc = path.join(scratch, 'etc');
  await mkdir(etc);
  await copyFile(caFile, path.join(etc, path.basename(BUILD_CA_FILE)));
  await writeFile(path.join(etc, 'npmrc'), `cafile=${BUILD_CA_FILE}\n`);
  return ['--volume', `${etc}:${path.dirname(BUILD_NPMRC)}:ro`];
}

/** Sum of the uncompressed layers of an image (what `docker images` reports), from buildah's vfs storage. */
async function imageBytes(name: string): Promise<number> {
  const id = (await buildah(['inspect', '--type', 'image', '--format', '{{.FromImageID}}', name], { timeoutMs: 60_000 })).trim();
  const images = JSON.parse(await readFile('/var/lib/containers/storage/vfs-images/images.json', 'utf8')) as Array<{ id: string; layer: string }>;
  const layers = JSON.parse(await readFile('/var/lib/containers/storage/vfs-layers/layers.json', 'utf8')) as Array<{ id: string; parent?: string; 'diff-size'?: number }>;
  const byId = new Map(layers.map((l) => [l.id, l]));
  let layer = byId.get(images.find((i) => i.id === id)!.layer);
  let total = 0;
  while (layer) {
    total += layer['diff-size'] ?? 0;
    layer = layer.parent ? byId.get(layer.parent) : undefined;
  }
  return total;
}

/** Installed Debian packages, read from the image's dpkg database. */
async function installedPackages(rootfs: string): Promise<string[]> {
  const status = await readFile(path.join(rootfs, 'var/lib/dpkg/status'), 'utf8');
  return status.split(/\n\n+/).filter((s) => /^Status: install ok installed$/m.test(s)).map((s) => /^Package: (\S+)/m.exec(s)![1]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Processes descended from pid (the container's processes, seen from the host). */
async function descendants(pid: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    const ppid = /^PPid:\s+(\d+)/m.exec(status);
    if (ppid) parents.set(Number(entry), Number(ppid[1]));
  }
  const found: number[] = [];
  for (const candidate of parents.keys()) {
    for (let p = parents.get(candidate); p !== undefined && p > 1; p = parents.get(p)) {
      if (p === pid) { found.push(candidate); break; }
    }
  }
  return found;
}

describe('the container image (Dockerfile built with buildah, run as its non-root user)', () => {
  let evm: EvmRig | undefined;
  let svm: SvmRig | undefined;
  let container: string | undefined;
  let rootfs: string;
  let config: ImageConfig;
  let service: ChildProcess | undefined;
  let serviceOutput = '';
  let serviceEnv: string[];
  let baseUrl: string;
  let port: number;
  const timings: Record<string, number> = {};

  const stopService = async () => {
    if (!service || service.exitCode !== null || service.signalCode !== null) return;
    const exited = new Promise((resolve) => service!.once('exit', resolve));
    // Under chroot isolation tini is not PID 1: a process of the container that outlives buildah
    // run is re-parented to init and would keep running after the test, so it is looked for by pid.
    const inside = await descendants(service.pid!);
    // buildah run and what it runs share a process group: tini gets SIGTERM and forwards it to
    // the service, as `docker stop` would.
    process.kill(-service.pid!, 'SIGTERM');
    const timer = setTimeout(() => process.kill(-service!.pid!, 'SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
    for (let i = 0; i < 100 && inside.some(alive); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    for (const pid of inside.filter(alive)) process.kill(pid, 'SIGKILL');
  };

  const cleanUp = async () => {
    await stopService();
    if (container) {
      await buildah(['umount', container], { timeoutMs: 60_000 }).catch(() => {});
      await buildah(['rm', container], { timeoutMs: 300_000 }).catch((error) => log(`could not remove ${container}: ${error}`));
    }
    await Promise.allSettled([evm?.stop(), svm?.stop()]);
  };

  before({ timeout: SETUP_TIMEOUT_MS }, async () => {
    try {
      let started = Date.now();
      if (await ensureBaseImage(log)) timings.baseSeconds = seconds(Date.now() - started);

      started = Date.now();
      log(`building ${IMAGE} from the Dockerfile (buildah bud, vfs storage, chroot isolation)`);
      // --format docker keeps the HEALTHCHECK (the OCI format has no field for it), as Docker
      // builds do; --pull=never: the base is the one made above, no registry is asked.
      const scratch = await mkdtemp(path.join(os.tmpdir(), 'paydoc-image-build-'));
      try {
        const limits = await openFilesLimit();
        const volumes = await hostCaVolumes(scratch);
        await buildah(['bud', '--isolation', 'chroot', '--format', 'docker', '--pull=never', ...limits, ...volumes, '--tag', IMAGE, '--file', 'Dockerfile', '.'],
          // Quiet unless it fails (the error carries the output's tail): CI's log keeps only its
          // own tail, which must still show the test suite's summary.
          { cwd: root, timeoutMs: BUILD_TIMEOUT_MS });
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
      timings.buildSeconds = seconds(Date.now() - started);
      // Each build leaves the previous paydoc:test untagged; the build stage's image is not kept.
      await buildah(['rmi', '--prune'], { timeoutMs: 600_000 }).catch((error) => log(`could not prune images: ${error}`));

      const inspected = JSON.parse(await buildah(['inspect', '--type', 'image', IMAGE], { timeoutMs: 60_000 })) as { Docker: { config: ImageConfig } };
      config = inspected.Docker.config;

      [evm, svm] = await Promise.all([startEvmRig(), startSvmRig()]);
      port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      container = (await buildah(['from', '--pull=never', '--name', `paydoc-image-test-${process.pid}`, IMAGE], { timeoutMs: 600_000 })).trim();
      rootfs = (await buildah(['mount', container], { timeoutMs: 60_000 })).trim();
      // Only the deployment's settings are given; PAYMENTS, HOST, TMP_DIR and NODE_ENV stay the
      // image's own. Chroot isolation shares the host's network, as `docker run --network host`.
      serviceEnv = [
        // OCR_ENGINE=tesseract: the bundled tesseract is then one of the engines /v1/health checks.
        `PORT=${port}`, `BASE_URL=${baseUrl}`, 'WORKERS=1', 'OCR_ENGINE=tesseract',
        `EVM_FACILITATOR_URL=${evm.facilitatorUrl}`, `EVM_NETWORK=${evm.network}`, `EVM_ASSET=${evm.asset}`, `EVM_PAY_TO=${evm.payTo}`,
        `SVM_FACILITATOR_URL=${svm.facilitatorUrl}`, `SVM_NETWORK=${svm.network}`, `SVM_ASSET=${svm.asset}`, `SVM_PAY_TO=${svm.payTo}`,
      ];
      // No --user: the image's own USER must make it non-root (checked below on the process).
      service = spawn('buildah', [
        '--storage-driver', 'vfs', 'run', '--isolation', 'chroot',
        '--mount', 'type=tmpfs,destination=/jobs,tmpfs-mode=1777,tmpfs-size=512m',
        ...serviceEnv.flatMap((e) => ['--env', e]),
        container, '--', ...(config.Entrypoint ?? []), ...(config.Cmd ?? []),
      ], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      const keep = (chunk: Buffer) => { serviceOutput = (serviceOutput + chunk.toString()).slice(-20_000); };
      service.stdout!.on('data', keep);
      service.stderr!.on('data', keep);
      started = Date.now();
      for (;;) {
        if (service.exitCode !== null) throw new Error(`the container exited with code ${service.exitCode}:\n${serviceOutput}`);
        if (Date.now() - started > START_TIMEOUT_MS) throw new Error(`the container did not answer /v1/health within ${START_TIMEOUT_MS} ms:\n${serviceOutput}`);
        if (await fetch(`${baseUrl}/v1/health`).then((res) => res.status !== 0, () => false)) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      timings.startSeconds = seconds(Date.now() - started);
    } catch (error) {
      await cleanUp();
      throw error;
    }
  });

  after({ timeout: 600_000 }, async () => {
    await cleanUp();
    log(`timings: ${JSON.stringify(timings)}`);
  });

  it('runs the image\'s entrypoint (tini, then node) as uid 10001, with /jobs a tmpfs', async () => {
    expect(config.User).to.equal(String(NON_ROOT_UID));
    expect(config.Entrypoint).to.equal(['/usr/bin/tini', '--']);
    expect(config.Env).to.include(['PAYMENTS=live', 'TMP_DIR=/jobs/paydoc']);
    const processes = await Promise.all((await descendants(service!.pid!)).map(async (pid) => ({
      pid,
      cmdline: (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').filter(Boolean).join(' '),
      uid: /^Uid:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))?.[1],
    })));
    const tini = processes.find((p) => p.cmdline === '/usr/bin/tini -- node dist/bin/start.js');
    const node = processes.find((p) => p.cmdline === 'node dist/bin/start.js');
    expect(tini, JSON.stringify(processes)).to.exist();
    expect(node, JSON.stringify(processes)).to.exist();
    expect(tini!.uid).to.equal(String(NON_ROOT_UID));
    expect(node!.uid).to.equal(String(NON_ROOT_UID));
    const mounts = await readFile(`/proc/${node!.pid}/mountinfo`, 'utf8');
    expect(mounts.split('\n').some((line) => line.split(' ')[4] === '/jobs' && / - tmpfs /.test(line)), mounts).to.be.true();
  });

  it('reports every engine command the operations need as present on /v1/health, and the image\'s HEALTHCHECK passes', async () => {
    const res = await fetch(`${baseUrl}/v1/health`);
    const health = await res.json() as {
      status: string; binaries: Record<string, boolean>; missing?: string[]; payments: { mode: string; networks: string[] };
    };
    expect(res.status, JSON.stringify(health)).to.equal(200);
    expect(health.status).to.equal('ok');
    expect(health.missing).to.not.exist();
    const needed = [...new Set([...operations.flatMap((op) => op.engines), 'tesseract'])].sort();
    expect(Object.keys(health.binaries).sort()).to.equal(needed);
    for (const name of needed) expect(health.binaries[name], name).to.equal(true);
    expect(health.payments.mode).to.equal('live');
    expect(health.payments.networks).to.equal([evm!.network, svm!.network]);

    // The HEALTHCHECK an orchestrator runs, run in the container as Docker runs it: the
    // Dockerfile's shell form is stored as CMD-SHELL and run with /bin/sh -c.
    const test = config.Healthcheck?.Test ?? [];
    expect(test[0]).to.equal('CMD-SHELL');
    await run('buildah', ['--storage-driver', 'vfs', 'run', '--isolation', 'chroot', '--env', `PORT=${port}`, container!, '--', '/bin/sh', '-c', test[1]], { timeoutMs: 60_000 });
  });

  it('takes a call paid on Base (x402 client, local chain) and the USDC moves on the chain', async () => {
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#aa3355' } }).png().toBuffer();
    const payer = await createPayer({ chain: 'base', evmKey: evm!.payerKey });
    const payFetch = wrapFetchWithPayment(fetch, payer);
    const payerBefore = await evm!.balanceOf(evm!.payerAddress);
    const payeeBefore = await evm!.balanceOf(evm!.payTo);

    const res = await payFetch(`${baseUrl}/v1/image/resize`, { method: 'POST', body: form([png], { width: 20, format: 'png' }) });
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.status, `${body}\n${serviceOutput}`).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/png');
    expect(await sharp(body).metadata()).to.include({ format: 'png', width: 20, height: 15 });
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(receipt).to.include({ success: true, network: evm!.network });
    expect(await evm!.balanceOf(evm!.payTo) - payeeBefore).to.equal(5000n);
    expect(payerBefore - await evm!.balanceOf(evm!.payerAddress)).to.equal(5000n);
  });

  it('takes a call paid on Solana that runs WeasyPrint in the image, and the USDC moves on the chain', async () => {
    const payer = await createPayer({ chain: 'solana', svmKey: svm!.payerSecretKey, svmRpcUrl: svm!.rpcUrl });
    const payFetch = wrapFetchWithPayment(fetch, payer);
    const payerBefore = await svm!.balanceOf(svm!.payerAddress);
    const payeeBefore = await svm!.balanceOf(svm!.payTo);

    const res = await payFetch(`${baseUrl}/v1/pdf/from-markdown`, { method: 'POST', body: form([Buffer.from(MARKDOWN)], { title: 'Container check' }) });
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.status, `${body}\n${serviceOutput}`).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    expect(body.subarray(0, 5).toString()).to.equal('%PDF-');
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(receipt).to.include({ success: true, network: svm!.network });
    expect(await svm!.balanceOf(svm!.payTo) - payeeBefore).to.equal(10000n);
    expect(payerBefore - await svm!.balanceOf(svm!.payerAddress)).to.equal(10000n);
  });

  it('converts an Office document with LibreOffice as the image\'s user, paid on Base, and the USDC moves on the chain', async () => {
    const payer = await createPayer({ chain: 'base', evmKey: evm!.payerKey });
    const payFetch = wrapFetchWithPayment(fetch, payer);
    const payerBefore = await evm!.balanceOf(evm!.payerAddress);
    const document = await docx();
    const res = await payFetch(`${baseUrl}/v1/office/pdf`, { method: 'POST', body: form([{ bytes: document, name: 'note.docx' }]) });
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.status, `${body}\n${serviceOutput}`).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    expect(body.subarray(0, 5).toString()).to.equal('%PDF-');
    expect(body.subarray(-6).toString('latin1')).to.contain('%%EOF');
    expect(payerBefore - await evm!.balanceOf(evm!.payerAddress)).to.equal(20000n);
  });

  it('holds no local chains (devchains/), no local-chain packages and no compilers', async () => {
    // The build output without the local chains, the tests or the benchmarks: the build stage never had them.
    const built = await readdir(path.join(rootfs, 'app/dist'));
    expect(built).to.include(['bin', 'client', 'core', 'server', 'web']);
    for (const dir of ['devchains', 'test', 'bench', 'container-test', 'vendor']) expect(built, dir).to.not.include(dir);
    // Live mode has no /dev/ routes (the page's demo payer).
    const devPayer = await fetch(`${baseUrl}/dev/payer`);
    expect(devPayer.status).to.equal(404);
    await devPayer.body?.cancel();

    const modules = path.join(rootfs, 'app/node_modules');
    expect(existsSync(path.join(modules, '@hapi/hapi/package.json'))).to.be.true();
    for (const name of DEV_CHAIN_PACKAGES) expect(existsSync(path.join(modules, name)), name).to.be.false();
    // Nowhere in node_modules either (a nested copy would do as well as a top-level one).
    const files = await readdir(modules, { recursive: true });
    expect(files.filter((f) => /(^|\/)(anvil|litesvm|solc|solc-0\.8\.28)(\/|$)/.test(f))).to.equal([]);

    const compilers = (await installedPackages(rootfs)).filter((name) => COMPILER_PACKAGES.test(name));
    expect(compilers).to.equal([]);
    for (const dir of ['usr/bin', 'usr/local/bin', 'bin']) {
      for (const command of COMPILER_COMMANDS) expect(existsSync(path.join(rootfs, dir, command)), `${dir}/${command}`).to.be.false();
    }
    // The build's network settings (hostCaVolumes) stayed out of the image.
    expect(await readdir(path.join(rootfs, path.dirname(BUILD_NPMRC)))).to.equal([]);
    // Python's C headers (python3-dev); usr/include/python3.11 itself holds python3-pil's headers.
    const pythonDirs = (await readdir(path.join(rootfs, 'usr/include')).catch(() => [] as string[])).filter((d) => d.startsWith('python'));
    for (const dir of pythonDirs) expect(existsSync(path.join(rootfs, 'usr/include', dir, 'Python.h')), `${dir}/Python.h`).to.be.false();
  });

  it('reports its size', async () => {
    const image = await imageBytes(IMAGE);
    const base = await imageBytes(BASE_IMAGE);
    const mb = (bytes: number) => Math.round(bytes / 1e6);
    // Sanity bounds, not a budget: a size outside them means the measurement is wrong.
    expect(image).to.be.above(base);
    expect(image).to.be.below(5e9);
    const report = {
      measured: new Date().toISOString(),
      image: IMAGE, imageMB: mb(image), base: BASE_IMAGE, baseMB: mb(base), addedMB: mb(image - base),
      note: 'uncompressed layer sizes, as `docker images` reports them',
      ...timings,
    };
    await mkdir(path.dirname(SIZE_REPORT), { recursive: true });
    await writeFile(SIZE_REPORT, `${JSON.stringify(report, null, 2)}\n`);
    log(`image size: ${report.imageMB} MB (base ${report.baseMB} MB, paydoc's layer ${report.addedMB} MB); written to ${path.relative(root, SIZE_REPORT)}`);
  });
});
