// Processes the system tests start and watch: a throwaway redis-server, the service itself as
// `npm start` runs it, and the waits and readings around them; browsers a job left behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Chromium processes whose profile lies under the directory (none must outlive their job). */
export async function browsersUnder(dir: string): Promise<number> {
  let found = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'latin1').catch(() => '');
    if (cmdline.includes(`--user-data-dir=${dir}`)) found += 1;
  }
  return found;
}

/**
 * Chromium processes still under the directory once those killed have had time to exit (up to
 * `graceMs`; a SIGKILLed browser takes a moment to go on a loaded machine): 0 when none outlived its job.
 */
export async function browsersLeftUnder(dir: string, graceMs = 5_000): Promise<number> {
  const deadline = Date.now() + graceMs;
  let left = await browsersUnder(dir);
  while (left > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = await browsersUnder(dir);
  }
  return left;
}

/** A throwaway redis-server on loopback with persistence off. */
export class RedisProcess {
  private child?: ChildProcess;
  constructor(readonly port: number, private readonly dir: string) {}
  get url() { return `redis://127.0.0.1:${this.port}`; }
  get running() { return this.child !== undefined; }

  async start(): Promise<void> {
    const child = spawn('redis-server', [
      '--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir,
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    await waitFor('redis-server to accept connections', async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited: ${out.slice(-500)}`);
      return out.includes('Ready to accept connections') ? true : undefined;
    }, 10_000);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

export function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(false); });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

export function metricFrom(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries((m[2] ?? '').split(',').filter(Boolean).map((kv) => { const [k, v] = kv.split('='); return [k, v.replace(/"/g, '')]; }));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

/** The service as a process (dist/bin/start.js) with only the environment given, logs collected. */
export class ServiceProcess {
  readonly child: ChildProcess;
  output = '';
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;

  constructor(readonly url: string, env: Record<string, string>) {
    this.child = spawn(process.execPath, [path.join(projectRoot, 'dist/bin/start.js')], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (chunk: Buffer) => { this.output += chunk.toString(); });
    this.child.stderr!.on('data', (chunk: Buffer) => { this.output += chunk.toString(); });
    this.exited = once(this.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  }

  /** Starts it on a free loopback port and waits until it listens. */
  static async start(port: number, env: Record<string, string>): Promise<ServiceProcess> {
    const url = `http://127.0.0.1:${port}`;
    const service = new ServiceProcess(url, { PORT: String(port), HOST: '127.0.0.1', BASE_URL: url, ...env });
    await waitFor('the service to listen', async () => {
      if (service.child.exitCode !== null) throw new Error(`the service exited at start: ${service.output.slice(-1000)}`);
      return service.output.includes('"msg":"listening"') ? true : undefined;
    }, 30_000);
    return service;
  }

  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    return metricFrom(await (await fetch(`${this.url}/metrics`)).text(), name, labels);
  }

  /** Kills it at once, as a crash or an OOM kill would. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
  }
}
