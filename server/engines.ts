// Which of the engines the operations need are installed. /v1/health reports it and answers
// 503 when one is missing, so an orchestrator never routes traffic to a half-installed box. The
// commands are the engines' own declarations (tools/engines/): an operation names them, and each
// is looked for on PATH as the engine that runs it declares it.
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import type { Operation } from '../operations/define.js';
import { engineOf, type EngineCommand } from '../tools/engines/index.js';

export type EngineStatus = Record<string, boolean>;

async function onPath(name: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    try {
      await access(path.join(dir || '.', name), constants.X_OK);
      return true;
    } catch { /* keep looking */ }
  }
  return false;
}

export async function checkEngines(ops: readonly Operation[], extra: readonly EngineCommand[] = []): Promise<EngineStatus> {
  const names = [...new Set([...ops.flatMap((op) => op.engines), ...extra])].sort();
  const status: EngineStatus = {};
  for (const name of names) {
    // A command no engine declares is a mistake in the code, not a missing package: it fails the boot.
    engineOf(name);
    status[name] = await onPath(name);
  }
  return status;
}
