// The one subprocess runner. Every binary the service uses runs through runTool:
// argument arrays only (never a shell), a minimal environment, a deadline that kills
// the whole process group, and bounded capture of stdout and stderr.
//
// Tools are not started from the service's own process. Node starts a child with fork(), whose
// cost grows with the parent's resident memory: on this kind of virtual machine about 0.07 ms
// per MB, so 20 ms or more per tool from a service holding uploads, sharp and three V8 heaps,
// during which the calling thread is blocked and the other threads stall on page faults. Each
// thread that runs tools therefore hands them to a small launcher process of its own
// (tools/launcher.ts), which runs them with the same code below at the cost of a lean fork.
import { fork, type ChildProcess } from 'node:child_process';
import { execa } from 'execa';
import { statfs } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export interface RunOptions {
  /** Bytes written to the child's stdin (omit for no input). */
  input?: Uint8Array;
  /** Working directory: the job's private directory when the tool needs files. */
  cwd?: string;
  /** Hard deadline in milliseconds; the process group is killed when it passes. */
  timeoutMs: number;
  /** Largest stdout kept, in bytes; more fails the run as OUTPUT_TOO_LARGE. */
  maxStdout?: number;
  /** Extra environment variables on top of the minimal one. */
  env?: Record<string, string>;
  /** Aborts the run early (for example when the job is cancelled). */
  signal?: AbortSignal;
}

export interface RunResult {
  exitCode: number;
  stdout: Uint8Array;
  /** At most 64 KiB of stderr, for diagnosis inside the worker only; never sent to clients or logs. */
  stderr: string;
  durationMs: number;
}

export type RunFailureKind = 'timeout' | 'output-too-large' | 'killed' | 'spawn-failed' | 'no-space';

/** A run that did not complete: it timed out, produced too much, was killed or could not start. */
export class RunFailure extends Error {
  constructor(readonly kind: RunFailureKind, readonly tool: string, message: string) {
    super(message);
    this.name = 'RunFailure';
  }
}

const STDERR_LIMIT = 64 * 1024;
const DEFAULT_STDOUT_LIMIT = 512 * 1024 * 1024;

// Tools get only what they need: a PATH, a C locale, a private HOME and no inherited
// secrets (payment keys and provider keys live in the service's environment).
function minimalEnv(cwd: string | undefined, extra: Record<string, string> | undefined): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    HOME: cwd ?? '/nonexistent',
    TMPDIR: cwd ?? '/tmp',
    ...extra,
  };
}

/**
 * Whether a failed run failed because the job's filesystem is full: the tool said so, or the
 * filesystem has (almost) nothing left while its partial output is still there. A full job
 * tmpfs is the service's problem, not a damaged input.
 */
async function outOfSpace(cwd: string, stderr: string): Promise<boolean> {
  if (/no space left on device/i.test(stderr)) return true;
  try {
    const fs = await statfs(cwd);
    const free = fs.bavail * fs.bsize;
    return free < Math.min(1024 * 1024, (fs.blocks * fs.bsize) / 16);
  } catch {
    return false;
  }
}

/** Processes started and not yet reaped, so a worker can kill them all if it is torn down. */
const live = new Set<number>();

export function killAllChildren(): void {
  for (const pid of live) {
    try { process.kill(-pid, 'SIGKILL'); } catch { /* already gone */ }
  }
  live.clear();
  launcher?.process.kill('SIGKILL');
}

/**
 * Runs the tool in this process (the launcher calls this). `onStart` learns the child's pid,
 * which is also its process group.
 */
export async function runToolHere(tool: string, args: readonly string[], options: RunOptions, onStart?: (pid: number) => void): Promise<RunResult> {
  const started = performance.now();
  const maxStdout = options.maxStdout ?? DEFAULT_STDOUT_LIMIT;
  const child = execa(tool, args, {
    input: options.input,
    stdin: options.input ? undefined : 'ignore',
    cwd: options.cwd,
    env: minimalEnv(options.cwd, options.env),
    extendEnv: false,
    encoding: 'buffer',
    stripFinalNewline: false,
    // A process group of its own, so the deadline kills grandchildren too (gs and weasyprint fork).
    detached: true,
    timeout: options.timeoutMs,
    killSignal: 'SIGKILL',
    forceKillAfterDelay: false,
    cancelSignal: options.signal,
    maxBuffer: { stdout: maxStdout, stderr: STDERR_LIMIT * 16 },
    reject: false,
  });
  const pid = child.pid;
  if (pid !== undefined) { live.add(pid); onStart?.(pid); }
  // execa kills only the direct child; the group kill reaches anything it spawned.
  const killGroup = () => { if (pid !== undefined) { try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ } } };
  const timer = setTimeout(killGroup, options.timeoutMs + 50);
  const onAbort = () => killGroup();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const result = await child;
    killGroup();
    const stderr = Buffer.from(result.stderr ?? new Uint8Array()).subarray(0, STDERR_LIMIT).toString('utf8');
    if (result.timedOut) throw new RunFailure('timeout', tool, `${tool} passed its deadline of ${options.timeoutMs} ms`);
    if (result.isMaxBuffer) throw new RunFailure('output-too-large', tool, `${tool} produced more than ${maxStdout} bytes`);
    if (result.isCanceled) throw new RunFailure('killed', tool, `${tool} was cancelled`);
    if (result.failed && result.exitCode === undefined) {
      const reason = result.signal ? `killed by ${result.signal}` : 'could not start';
      throw new RunFailure(result.signal ? 'killed' : 'spawn-failed', tool, `${tool} ${reason}`);
    }
    if (result.exitCode !== 0 && options.cwd && await outOfSpace(options.cwd, stderr)) {
      throw new RunFailure('no-space', tool, `${tool} ran out of space in the job directory`);
    }
    return {
      exitCode: result.exitCode ?? -1,
      stdout: result.stdout ?? new Uint8Array(),
      stderr,
      durationMs: performance.now() - started,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    if (pid !== undefined) live.delete(pid);
  }
}

// ---- The launcher client: one launcher process per thread, started on first use. ----

/** What crosses to the launcher: the run's options without the AbortSignal (cancel is a message). */
export interface LaunchRequest { type: 'run'; id: number; tool: string; args: readonly string[]; options: Omit<RunOptions, 'signal'> }
export type LaunchMessage =
  | { type: 'retire' }
  | { type: 'started'; id: number; pid: number }
  | { type: 'done'; id: number; result: RunResult }
  | { type: 'done'; id: number; failure: { kind: RunFailureKind; message: string } };

interface PendingRun {
  tool: string;
  pid?: number;
  resolve(result: RunResult): void;
  reject(err: Error): void;
}

interface Launcher {
  process: ChildProcess;
  pending: Map<number, PendingRun>;
  /** Asked to be replaced: takes no new runs, and is let go when its last run is done. */
  retired: boolean;
}

const LAUNCHER_ENTRY = fileURLToPath(new URL('./launcher.js', import.meta.url));
// How long past a run's own deadline the client waits for the launcher before giving up on it.
const LAUNCHER_GRACE_MS = 2000;

let launcher: Launcher | undefined;
let nextRunId = 1;
// Set in the launcher process itself, and by benchmarks that count their children's CPU time.
// (Where a launcher cannot start, each run falls back to this process on its own.)
let runHere = process.env.PAYDOC_LAUNCHER === '1';

/** Runs tools in this process from now on (the launcher process calls this). */
export function runToolsInThisProcess(): void { runHere = true; }

function startLauncher(): Launcher | undefined {
  let child: ChildProcess;
  try {
    child = fork(LAUNCHER_ENTRY, [], {
      serialization: 'advanced',
      execArgv: [],
      // Only what running tools needs; each run passes its own minimal environment anyway.
      env: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', PAYDOC_LAUNCHER: '1' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
  } catch {
    return undefined;
  }
  const started: Launcher = { process: child, pending: new Map(), retired: false };
  child.on('message', (message: LaunchMessage) => {
    if (message.type === 'retire') {
      started.retired = true;
      if (launcher === started) launcher = undefined;
      runsChanged(started);
      return;
    }
    const run = started.pending.get(message.id);
    if (!run) return;
    if (message.type === 'started') {
      run.pid = message.pid;
      live.add(message.pid);
      return;
    }
    started.pending.delete(message.id);
    if (run.pid !== undefined) live.delete(run.pid);
    runsChanged(started);
    if ('result' in message) run.resolve(message.result);
    else run.reject(new RunFailure(message.failure.kind, run.tool, message.failure.message));
  });
  const lost = () => {
    if (launcher === started) launcher = undefined;
    for (const [id, run] of started.pending) {
      started.pending.delete(id);
      if (run.pid !== undefined) {
        try { process.kill(-run.pid, 'SIGKILL'); } catch { /* gone */ }
        live.delete(run.pid);
      }
      run.reject(new RunFailure('killed', run.tool, `${run.tool} was interrupted: its launcher exited`));
    }
  };
  child.on('exit', lost);
  child.on('error', lost);
  runsChanged(started);
  return started;
}

/**
 * Called whenever a launcher's runs change. An idle launcher must not keep a script or a test
 * process alive, a busy one must; a retired one is let go (it exits when its channel closes,
 * see launcher.ts) once its last run is done.
 */
function runsChanged(l: Launcher): void {
  const channel = l.process.channel as { ref(): void; unref(): void } | undefined;
  if (l.pending.size > 0) { l.process.ref(); channel?.ref(); } else { l.process.unref(); channel?.unref(); }
  if (l.retired && l.pending.size === 0 && l.process.connected) l.process.disconnect();
}

/** Starts this thread's launcher ahead of the first tool, so the first job does not wait for it. */
export function warmLauncher(): void {
  if (!runHere && !launcher) launcher = startLauncher();
}

export async function runTool(tool: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  if (runHere) return runToolHere(tool, args, options);
  launcher ??= startLauncher();
  const l = launcher;
  if (!l || !l.process.connected) {
    launcher = undefined;
    return runToolHere(tool, args, options);
  }
  if (options.signal?.aborted) throw new RunFailure('killed', tool, `${tool} was cancelled`);
  const id = nextRunId++;
  const { signal, ...sendable } = options;
  return new Promise<RunResult>((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const run: PendingRun = {
      tool,
      resolve: (result) => { finish(); resolve(result); },
      reject: (err) => { finish(); reject(err); },
    };
    // The launcher enforces the deadline; this is the backstop if the launcher itself stops answering.
    const timer = setTimeout(() => {
      if (!l.pending.delete(id)) return;
      if (run.pid !== undefined) { try { process.kill(-run.pid, 'SIGKILL'); } catch { /* gone */ } live.delete(run.pid); }
      runsChanged(l);
      run.reject(new RunFailure('timeout', tool, `${tool} passed its deadline of ${options.timeoutMs} ms`));
    }, options.timeoutMs + LAUNCHER_GRACE_MS);
    const onAbort = () => { if (l.pending.has(id)) l.process.send({ type: 'cancel', id }); };
    signal?.addEventListener('abort', onAbort, { once: true });
    l.pending.set(id, run);
    runsChanged(l);
    const request: LaunchRequest = { type: 'run', id, tool, args, options: sendable };
    l.process.send(request, (err) => {
      if (err && l.pending.delete(id)) {
        runsChanged(l);
        run.reject(new RunFailure('spawn-failed', tool, `${tool} could not start: its launcher is gone`));
      }
    });
  });
}
