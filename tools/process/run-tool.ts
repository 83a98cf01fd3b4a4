// Running a tool: the one entry every engine module (../engines/) runs its commands through. The
// run itself (argument arrays only, never a shell; a minimal environment; a deadline that kills
// the whole process group; bounded capture of stdout and stderr) is ./spawn-with-limits.ts; this
// module decides where it happens and carries the request there and the answer back.
//
// Tools are not started from the service's own process. Node starts a child with fork(), whose
// cost grows with the parent's resident memory: on this kind of virtual machine about 0.07 ms
// per MB, so 20 ms or more per tool from a service holding uploads, sharp and three V8 heaps,
// during which the calling thread is blocked and the other threads stall on page faults. Each
// thread that runs tools therefore hands them to a small launcher process of its own
// (./launcher-process.ts), which runs them with the same code at the cost of a lean fork.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { killGroup, live, RunFailure, runToolHere, type RunFailureKind, type RunOptions, type RunResult } from './spawn-with-limits.js';

export { RunFailure, runToolHere, type RunFailureKind, type RunOptions, type RunResult } from './spawn-with-limits.js';

/** Kills every tool this thread started, and its launchers (a worker torn down must leave nothing running). */
export function killAllChildren(): void {
  for (const pid of live) killGroup(pid);
  live.clear();
  for (const l of running) l.process.kill('SIGKILL');
}

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

const LAUNCHER_ENTRY = fileURLToPath(new URL('./launcher-process.js', import.meta.url));
// How long past a run's own deadline the client waits for the launcher before giving up on it.
const LAUNCHER_GRACE_MS = 2000;

let launcher: Launcher | undefined;
/** Every launcher started and not yet exited, the current one and any retired ones. */
const running = new Set<Launcher>();
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
  running.add(started);
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
    running.delete(started);
    if (launcher === started) launcher = undefined;
    for (const [id, run] of started.pending) {
      started.pending.delete(id);
      if (run.pid !== undefined) {
        killGroup(run.pid);
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
 * see launcher-process.ts) once its last run is done.
 */
function runsChanged(l: Launcher): void {
  const channel = l.process.channel as { ref(): void; unref(): void } | undefined;
  if (l.pending.size > 0) { l.process.ref(); channel?.ref(); } else { l.process.unref(); channel?.unref(); }
  if (l.retired && l.pending.size === 0 && l.process.connected) l.process.disconnect();
}

/**
 * The process ids of this thread's launchers still running, retired ones included (a benchmark
 * adds up their CPU time; a launcher's time moves to this process's children's once it exits).
 */
export function launcherPids(): number[] {
  return [...running].flatMap((l) => (l.process.pid === undefined ? [] : [l.process.pid]));
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
      if (run.pid !== undefined) { killGroup(run.pid); live.delete(run.pid); }
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
