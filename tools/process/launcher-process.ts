// The launcher process: a small Node process that starts tools for one thread of the service
// (./run-tool.ts says why, and forks it). It runs each request with ./spawn-with-limits.ts, so
// deadlines, process-group kills, bounded capture and the minimal environment are exactly the
// same as in the thread, and answers over the IPC channel. It exits when its parent goes away, killing whatever it still runs.
import { RunFailure, killAllChildren, runToolHere, runToolsInThisProcess, type LaunchMessage, type LaunchRequest } from './run-tool.js';

runToolsInThisProcess();

const cancels = new Map<number, AbortController>();

// Starting a tool costs a fork of this process, and a fork's price grows with resident memory.
// Large outputs (a rotated photo, a long document's text) leave memory behind that neither V8
// nor malloc hands back, so a launcher that has grown past this asks to be replaced: its thread
// sends new runs to a fresh launcher and lets this one go once its runs are done.
const RETIRE_ABOVE_BYTES = 112 * 1024 * 1024;
let retiring = false;

function retireIfLarge(): void {
  if (retiring || process.memoryUsage.rss() <= RETIRE_ABOVE_BYTES) return;
  retiring = true;
  answer({ type: 'retire' });
}

function answer(message: LaunchMessage): void {
  if (process.connected) process.send!(message);
}

async function run(request: LaunchRequest): Promise<void> {
  const cancel = new AbortController();
  cancels.set(request.id, cancel);
  try {
    const result = await runToolHere(request.tool, request.args, { ...request.options, signal: cancel.signal },
      (pid) => answer({ type: 'started', id: request.id, pid }));
    answer({ type: 'done', id: request.id, result });
  } catch (err) {
    const failure = err instanceof RunFailure
      ? { kind: err.kind, message: err.message }
      : { kind: 'spawn-failed' as const, message: `${request.tool} could not start` };
    answer({ type: 'done', id: request.id, failure });
  } finally {
    cancels.delete(request.id);
    retireIfLarge();
  }
}

process.on('message', (message: LaunchRequest | { type: 'cancel'; id: number }) => {
  if (message.type === 'run') void run(message);
  else if (message.type === 'cancel') cancels.get(message.id)?.abort();
});

// The service decides when to stop (it drains jobs first); a terminal's Ctrl-C reaches the whole
// process group, and the launcher must outlive it until its parent lets go.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
process.on('disconnect', () => {
  killAllChildren();
  process.exit(0);
});
