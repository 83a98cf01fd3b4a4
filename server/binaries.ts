// Which of the binaries the operations need are installed. /v1/health reports it and answers
// 503 when one is missing, so an orchestrator never routes traffic to a half-installed box.
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import type { Operation } from '../operations/define.js';

export type BinaryStatus = Record<string, boolean>;

async function onPath(name: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    try {
      await access(path.join(dir || '.', name), constants.X_OK);
      return true;
    } catch { /* keep looking */ }
  }
  return false;
}

export async function checkBinaries(ops: readonly Operation[], extra: readonly string[] = []): Promise<BinaryStatus> {
  const names = [...new Set([...ops.flatMap((op) => op.binaries), ...extra])].sort();
  const status: BinaryStatus = {};
  for (const name of names) status[name] = await onPath(name);
  return status;
}
