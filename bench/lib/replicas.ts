// Real parts for a multi-replica run on loopback: redis-server and HAProxy from Debian, and the
// service itself as separate `node dist/bin/start.js` processes in live payment mode, each
// configured only through its environment, as a deployment would configure it.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

async function waitFor(what: string, probe: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Output kept for error messages, bounded. */
function tail(child: ChildProcess): () => string {
  let out = '';
  const keep = (chunk: Buffer) => { out = (out + chunk.toString()).slice(-8000); };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => out;
}

/** redis-server on loopback without persistence: a restart starts empty, as a cache-style deployment does. */
export class RedisServer {
  private child?: ChildProcess;
  private constructor(readonly port: number, private readonly dir: string) {}

  static async start(): Promise<RedisServer> {
    const redis = new RedisServer(await freePort(), await mkdtemp(path.join(os.tmpdir(), 'paydoc-chaos-redis-')));
    await redis.up();
    return redis;
  }

  get url(): string { return `redis://127.0.0.1:${this.port}`; }

  async up(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const output = tail(child);
    await waitFor('redis-server to accept connections', () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited: ${output().slice(-500)}`);
      return output().includes('Ready to accept connections');
    }, 10_000);
  }

  /** Stops redis-server (SIGTERM; nothing is saved) and waits for it to exit. */
  async down(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  }

  async stop(): Promise<void> {
    await this.down();
    await rm(this.dir, { recursive: true, force: true });
  }
}

export interface ReplicaEnv { [name: string]: string }

/**
 * One service process: `node dist/bin/start.js`, configured by its environment only, told its own
 * address (REPLICA_URL) so that the others pass on the retries and link downloads of what it holds.
 */
export class Replica {
  child?: ChildProcess;
  private output: () => string = () => '';
  /** Process ids of the replica and everything it started, read just before it was killed. */
  killedTree: number[] = [];
  constructor(
    readonly name: string, readonly port: number, private readonly root: string, private readonly env: ReplicaEnv, readonly tmpDir: string,
  ) {}

  get url(): string { return `http://127.0.0.1:${this.port}`; }
  get pid(): number | undefined { return this.child?.pid; }

  async start(timeoutMs = 60_000): Promise<void> {
    const child = spawn(process.execPath, ['dist/bin/start.js'], {
      cwd: this.root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8', NODE_ENV: 'production', ...this.env, PORT: String(this.port), TMP_DIR: this.tmpDir, REPLICA_URL: this.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.output = tail(child);
    await waitFor(`replica ${this.name} to answer /v1/health`, async () => {
      if (child.exitCode !== null) throw new Error(`replica ${this.name} exited with code ${child.exitCode}: ${this.output().slice(-1500)}`);
      return fetch(`${this.url}/v1/health`).then((res) => res.ok, () => false);
    }, timeoutMs);
  }

  /** SIGKILL: no handler runs, nothing in flight is finished or handed over. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null) return;
    this.killedTree = [child.pid, ...descendants(child.pid)];
    child.kill('SIGKILL');
    await once(child, 'exit');
  }

  /** SIGTERM, as an orchestrator stops a replica: in-flight jobs finish, then it exits. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await once(child, 'exit');
    clearTimeout(timer);
  }

  lastOutput(): string { return this.output(); }

  async metrics(): Promise<string | undefined> {
    try {
      const res = await fetch(`${this.url}/metrics`, { signal: AbortSignal.timeout(5000) });
      return res.ok ? await res.text() : undefined;
    } catch {
      return undefined;
    }
  }
}

/** Process ids below pid (children, their children...), from /proc. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch { /* exited while listed */ }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const parent = queue.shift()!;
    for (const [child, ppid] of parents) if (ppid === parent) { found.push(child); queue.push(child); }
  }
  return found;
}

export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Counters from a Prometheus text exposition, summed over the label sets that match. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries((m[2] ?? '').split(',').filter(Boolean).map((kv) => { const [k, v] = kv.split('='); return [k, (v ?? '').replace(/"/g, '')]; }));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

/** Each label value of a counter with its sum, e.g. paydoc_payments_total by stage. */
export function metricBy(text: string, name: string, label: string): Record<string, number> {
  const by: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const value = new RegExp(`${label}="([^"]*)"`).exec(m[2]!)?.[1];
    if (value !== undefined) by[value] = (by[value] ?? 0) + Number(m[3]);
  }
  return by;
}

export interface HaproxyServerStats {
  name: string; status: string; sessions: number; responses5xx: number; downtimeS: number; checksDown: number;
  retries: number; redispatches: number; connectionErrors: number; responseErrors: number;
}

/**
 * HAProxy (Debian's haproxy binary) in front of the replicas: round robin, health checks on
 * /v1/health, a connection refused by a dead replica retried on another one (retries plus
 * redispatch; a request that reached a replica is never sent twice), and a response header naming
 * the replica that answered, HAProxy's own error pages included.
 */
export class Haproxy {
  private child?: ChildProcess;
  private output: () => string = () => '';
  private constructor(readonly port: number, readonly statsPort: number, private readonly dir: string) {}

  get url(): string { return `http://127.0.0.1:${this.port}`; }

  static async start(backends: Array<{ name: string; port: number }>, port?: number): Promise<Haproxy> {
    const proxy = new Haproxy(port ?? await freePort(), await freePort(), await mkdtemp(path.join(os.tmpdir(), 'paydoc-chaos-haproxy-')));
    const config = [
      'global',
      '  maxconn 1024',
      'defaults',
      '  mode http',
      '  option httplog',
      '  timeout connect 2s',
      '  timeout client 120s',
      '  timeout server 120s',
      '  timeout http-keep-alive 10s',
      '  retries 3',
      '  option redispatch 1',
      'frontend paydoc',
      `  bind 127.0.0.1:${proxy.port}`,
      '  default_backend replicas',
      'backend replicas',
      '  balance roundrobin',
      '  option httpchk GET /v1/health',
      '  http-check expect status 200',
      '  http-after-response set-header X-Replica %s',
      ...backends.map((b) => `  server ${b.name} 127.0.0.1:${b.port} check inter 500ms fall 2 rise 2`),
      'frontend stats',
      `  bind 127.0.0.1:${proxy.statsPort}`,
      '  stats enable',
      '  stats uri /stats',
      '',
    ].join('\n');
    const file = path.join(proxy.dir, 'haproxy.cfg');
    await writeFile(file, config);
    const check = spawn('haproxy', ['-c', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    const checkOutput = tail(check);
    const [code] = await once(check, 'exit') as [number];
    if (code !== 0) throw new Error(`haproxy -c refused the configuration: ${checkOutput()}`);
    const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    proxy.child = child;
    proxy.output = tail(child);
    await waitFor('haproxy to find every replica healthy', async () => {
      if (child.exitCode !== null) throw new Error(`haproxy exited: ${proxy.output().slice(-1500)}`);
      const stats = await proxy.stats().catch(() => []);
      return stats.length === backends.length && stats.every((s) => s.status === 'UP');
    }, 20_000);
    return proxy;
  }

  /** The replicas as HAProxy sees them (its CSV statistics). */
  async stats(): Promise<HaproxyServerStats[]> {
    const res = await fetch(`http://127.0.0.1:${this.statsPort}/stats;csv`, { signal: AbortSignal.timeout(5000) });
    const lines = (await res.text()).split('\n').filter(Boolean);
    const header = lines[0]!.replace(/^# /, '').split(',');
    const col = (row: string[], name: string) => row[header.indexOf(name)] ?? '';
    return lines.slice(1).map((line) => line.split(','))
      .filter((row) => col(row, 'pxname') === 'replicas' && !['FRONTEND', 'BACKEND'].includes(col(row, 'svname')))
      .map((row) => ({
        name: col(row, 'svname'), status: col(row, 'status'), sessions: Number(col(row, 'stot')), responses5xx: Number(col(row, 'hrsp_5xx')),
        downtimeS: Number(col(row, 'downtime')), checksDown: Number(col(row, 'chkdown')), retries: Number(col(row, 'wretr')),
        redispatches: Number(col(row, 'wredis')), connectionErrors: Number(col(row, 'econ')), responseErrors: Number(col(row, 'eresp')),
      }));
  }

  /** HAProxy's own count of 5xx answers it generated for the frontend (no replica, replica died...). */
  async frontendStats(): Promise<Record<string, number>> {
    const res = await fetch(`http://127.0.0.1:${this.statsPort}/stats;csv`, { signal: AbortSignal.timeout(5000) });
    const lines = (await res.text()).split('\n').filter(Boolean);
    const header = lines[0]!.replace(/^# /, '').split(',');
    const row = lines.slice(1).map((l) => l.split(',')).find((r) => r[0] === 'replicas' && r[1] === 'BACKEND');
    const get = (name: string) => Number(row?.[header.indexOf(name)] ?? 0);
    return { sessions: get('stot'), responses2xx: get('hrsp_2xx'), responses4xx: get('hrsp_4xx'), responses5xx: get('hrsp_5xx'), connectionErrors: get('econ'), responseErrors: get('eresp'), retries: get('wretr'), redispatches: get('wredis') };
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
