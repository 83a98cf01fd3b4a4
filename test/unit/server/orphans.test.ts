// server/orphans.ts: what a dead worker thread's tools leave running is found by its job directory
// and killed, with what they forked; a process in a directory that only begins with the same name
// (job-1 beside job-10), or anywhere else, is left alone. Real processes (sleep), started here.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { killProcessesIn } from '../../../server/orphans.js';

export const lab = Lab.script();
const { describe, it, after } = lab;
const { expect } = Code;

const root = mkdtempSync(path.join(os.tmpdir(), 'paydoc-orphans-'));
const started: ChildProcess[] = [];

/** A tool as the runner starts one: a process group of its own, in the given directory; it forks a second sleep. */
function startTool(cwd: string): ChildProcess {
  mkdirSync(cwd, { recursive: true });
  const child = spawn('sh', ['-c', 'sleep 30 & exec sleep 30'], { cwd, detached: true, stdio: 'ignore' });
  started.push(child);
  return child;
}

function groupAlive(leader: ChildProcess): boolean {
  try {
    process.kill(-leader.pid!, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean): Promise<void> {
  for (const started = Date.now(); !condition(); await new Promise((resolve) => setTimeout(resolve, 20))) {
    if (Date.now() - started > 3000) throw new Error('the condition did not become true in time');
  }
}

const exited = (child: ChildProcess) => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit'));

describe('server/orphans', () => {
  after(async () => {
    for (const child of started) {
      if (child.exitCode === null && child.signalCode === null) {
        try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
      }
    }
    rmSync(root, { recursive: true, force: true });
  });

  it('kills the tools running in a job directory or below it, their forks too; not those of job-10 beside job-1', async () => {
    const job = path.join(root, 'job-1');
    const inJob = startTool(job);
    const below = startTool(path.join(job, 'pages'));
    const neighbour = startTool(path.join(root, 'job-10'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Both group leaders at least; a fork is counted too when it is seen before its group's kill.
    expect(await killProcessesIn(job)).to.be.within(2, 4);
    await Promise.all([exited(inJob), exited(below)]);
    expect([inJob.signalCode, below.signalCode]).to.equal(['SIGKILL', 'SIGKILL']);
    // The forks are gone with their groups; job-10's group still runs.
    await until(() => !groupAlive(inJob) && !groupAlive(below));
    expect(groupAlive(neighbour)).to.be.true();
    expect(neighbour.exitCode === null && neighbour.signalCode === null).to.be.true();
    expect(await killProcessesIn(job)).to.equal(0);
    expect(await killProcessesIn(path.join(root, 'no-such-job'))).to.equal(0);
  });
});
