// The launcher: a small process that starts tools for one thread of the service (see runner.ts
// for why). It runs each request with the runner's own code, so deadlines, process-group kills,
// bounded capture and the minimal environment are exactly the same, and answers over the IPC
// channel. It exits when its parent goes away, killing whatever it still runs.
import { RunFailure, killAllChildren, runToolHere, runToolsInThisProcess, type LaunchMessage, type LaunchRequest } from './runner.js';

runToolsInThisProcess();

const cancels = new Map<number, AbortController>();

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
