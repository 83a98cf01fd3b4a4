// Spawning one tool in this process, within limits: argument arrays only (never a shell), a
// minimal environment, a deadline that kills the whole process group, and bounded capture of
// stdout and stderr; a run that does not complete becomes a RunFailure of a named kind
// (./tool-errors.ts maps it to the catalog). The launcher process runs tools with this;
// everything else asks its launcher through ./run-tool.ts.
import { execa } from 'execa';
import { statfs } from 'node:fs/promises';

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
export const live = new Set<number>();

/** Kills a tool and everything it started: each tool leads a process group of its own. */
export function killGroup(pid: number): void {
  try { process.kill(-pid, 'SIGKILL'); } catch { /* already gone */ }
}

/**
 * Runs the tool in this process (the launcher calls this). `onStart` learns the child's pid,
 * which is also its process group.
 */
export async function runToolHere(
  tool: string, args: readonly string[], options: RunOptions, onStart?: (pid: number) => void,
): Promise<RunResult> {
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
  const killTool = () => { if (pid !== undefined) killGroup(pid); };
  const timer = setTimeout(killTool, options.timeoutMs + 50);
  const onAbort = () => killTool();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const result = await child;
    killTool();
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
