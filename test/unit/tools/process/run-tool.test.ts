// Running a tool as every engine runs one: through this thread's launcher process, with a
// deadline that kills the whole process group, a minimal environment and bounded output.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runTool, RunFailure } from '../../../../tools/process/run-tool.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('running a tool (run-tool, spawn-with-limits, launcher-process)', () => {
  // Members of the process group that are still running (zombies are dead, only not yet reaped by init).
  const groupAlive = (pgid: number) => {
    let pids: string[];
    try { pids = execFileSync('pgrep', ['-g', String(pgid)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean); } catch { return false; }
    return pids.some((pid) => {
      try { return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; }
    });
  };

  it('kills the whole process group when the deadline passes', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'runner-'));
    try {
      const started = Date.now();
      // The shell starts a grandchild that would outlive a kill of the shell alone.
      const err = await runTool('sh', ['-c', 'sleep 30 & echo $$ > pgid; wait'], { cwd: dir, timeoutMs: 300 }).catch((e: unknown) => e);
      expect(err).to.be.an.instanceof(RunFailure);
      expect((err as RunFailure).kind).to.equal('timeout');
      expect(Date.now() - started).to.be.below(5000);
      const pgid = Number(execFileSync('cat', [path.join(dir, 'pgid')], { encoding: 'utf8' }));
      await new Promise((r) => setTimeout(r, 200));
      expect(groupAlive(pgid)).to.equal(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('passes no inherited secrets and bounds stdout', async () => {
    process.env.PAYDOC_TEST_SECRET = 'do-not-pass';
    try {
      const env = await runTool('env', [], { timeoutMs: 5000 });
      expect(Buffer.from(env.stdout).toString()).to.not.contain('do-not-pass');
    } finally {
      delete process.env.PAYDOC_TEST_SECRET;
    }
    const err = await runTool('head', ['-c', '100000', '/dev/zero'], { timeoutMs: 5000, maxStdout: 1000 }).catch((e: unknown) => e);
    expect((err as RunFailure).kind).to.equal('output-too-large');
  });

  it('starts engines from a launcher process of its own, replaced once large outputs have grown it', async () => {
    const launchers = () => execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
      .split('\n').filter((line) => line.includes('/tools/process/launcher-process.js')).map((line) => Number(line.trim().split(/\s+/)[0]));
    const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
    // The tool's parent is the launcher, not this (large) process.
    const own = await runTool('sh', ['-c', 'echo $PPID'], { timeoutMs: 5000 });
    const first = Number(Buffer.from(own.stdout).toString());
    expect(launchers()).to.include(first);
    expect(parentOf(first)).to.equal(process.pid);
    // 150 MB through the launcher leaves it larger than it should stay.
    const big = await runTool('head', ['-c', String(150 * 1024 * 1024), '/dev/zero'], { timeoutMs: 20_000, maxStdout: 200 * 1024 * 1024 });
    expect(big.stdout.byteLength).to.equal(150 * 1024 * 1024);
    const next = await runTool('sh', ['-c', 'echo $PPID'], { timeoutMs: 5000 });
    const replacement = Number(Buffer.from(next.stdout).toString());
    expect(replacement).to.not.equal(first);
    // Up to 10 s: on a loaded machine, or under `npm test`'s coverage (each process writes its
    // V8 coverage file as it exits), the retired launcher took more than 2 s to go.
    for (let i = 0; i < 500 && launchers().includes(first); i++) await new Promise((r) => setTimeout(r, 20));
    expect(launchers()).to.not.include(first);
    expect(launchers()).to.include(replacement);
  });

  it('reports a crashed tool without throwing away the exit status', async () => {
    const res = await runTool('sh', ['-c', 'kill -SEGV $$'], { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(res).to.be.an.instanceof(RunFailure);
    expect((res as RunFailure).kind).to.equal('killed');
  });
});
