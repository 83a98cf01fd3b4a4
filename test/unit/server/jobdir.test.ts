// Job directories: what a process killed outright (SIGKILL, out of memory) leaves in the job root
// is removed by the next process sharing that root, once no live request can still own it.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { jobDirLifetimeMs, sweepAbandonedJobDirs } from '../../../server/jobdir.js';
import { loadConfig } from '../../../server/config.js';
import { operations } from '../../../operations/index.js';
import { MAX_URL_INPUTS, mostUrlInputs } from '../../../server/pipeline.js';
import { startTestService } from '../../support/service.js';

export const lab = Lab.script();
const { describe, it, beforeEach, afterEach } = lab;
const { expect } = Code;

const HOUR = 3_600_000;

/** A job directory holding an upload, last touched ageMs ago. */
async function jobDir(root: string, name: string, ageMs: number): Promise<void> {
  const dir = path.join(root, name);
  await mkdir(dir);
  await writeFile(path.join(dir, 'input.pdf'), 'x'.repeat(1024));
  const when = new Date(Date.now() - ageMs);
  await utimes(dir, when, when);
}

describe('job directories left by a killed process', () => {
  let root: string;
  beforeEach(async () => { root = await mkdtemp(path.join('/dev/shm', 'paydoc-jobdir-')); });
  afterEach(async () => { await rm(root, { recursive: true, force: true }); });

  it('outlive no request: the lifetime covers the upload, every URL input, the job, a push and both facilitator calls', () => {
    const config = loadConfig({}, {});
    const maxInputs = mostUrlInputs(operations);
    // The operation that takes the most files takes more than may be given as URLs.
    expect(maxInputs).to.equal(MAX_URL_INPUTS);
    const lifetime = jobDirLifetimeMs(config, maxInputs);
    const longestRequest = config.uploadTimeoutMs + maxInputs * config.urlFetchTimeoutMs + config.jobTimeoutMs
      + config.urlFetchTimeoutMs + 2 * config.facilitatorTimeoutMs;
    expect(lifetime).to.be.greaterThan(longestRequest);
    // With the defaults, a killed process's leftovers are gone within about twenty minutes.
    expect(lifetime).to.be.below(HOUR / 2);
  });

  it('are removed with their files once older than the lifetime; younger ones and other entries stay', async () => {
    await jobDir(root, 'job-abandoned', 2 * HOUR);
    await jobDir(root, 'job-running', 1000);
    await mkdir(path.join(root, 'not-a-job'));
    const removed = await sweepAbandonedJobDirs(root, HOUR);
    expect(removed).to.equal(1);
    expect((await readdir(root)).sort()).to.equal(['job-running', 'not-a-job']);
  });

  it('a missing root is nothing to sweep', async () => {
    expect(await sweepAbandonedJobDirs(path.join(root, 'absent'), HOUR)).to.equal(0);
  });

  it('the service removes them when it starts, and says how many without naming them', async () => {
    await jobDir(root, 'job-left-by-sigkill', 2 * HOUR);
    await jobDir(root, 'job-of-a-live-replica', 1000);
    const t = await startTestService({ config: { tmpDir: root } });
    try {
      let entries: string[] = [];
      for (let i = 0; i < 100; i++) {
        entries = await readdir(root);
        if (!entries.includes('job-left-by-sigkill')) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(entries).to.equal(['job-of-a-live-replica']);
      const line = t.logs.find((l) => l.includes('removed job directories'));
      expect(line).to.exist();
      expect(JSON.parse(line!)).to.include({ count: 1 });
      expect(line).to.not.contain('job-left');
    } finally {
      await t.stop();
    }
  });
});
