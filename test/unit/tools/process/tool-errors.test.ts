// The one mapping from a tool that did not complete to the error catalog, and the scratch
// directory every tool run works in.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runTool } from '../../../../tools/process/run-tool.js';
import { withScratch } from '../../../../tools/process/scratch-directory.js';
import { asToolError, NO_SPACE_MESSAGE } from '../../../../tools/process/tool-errors.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('tool errors', () => {
  it('maps every tool failure to one catalog error, with no tool output in the message', async () => {
    const mapped = async (run: Promise<unknown>) => {
      const err = asToolError(await run.then(() => undefined, (e: unknown) => e), 'the tool');
      return [err.code, err.status];
    };
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tool-failures-'));
    try {
      expect(await mapped(runTool('no-such-binary-here', [], { cwd: dir, timeoutMs: 5_000 }))).to.equal(['UNAVAILABLE', 503]);
      expect(await mapped(runTool('sleep', ['5'], { cwd: dir, timeoutMs: 200 }))).to.equal(['JOB_TIMEOUT', 504]);
      expect(await mapped(runTool('head', ['-c', '4096', '/dev/zero'], { cwd: dir, timeoutMs: 5_000, maxStdout: 100 }))).to.equal(['LIMIT_EXCEEDED', 413]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write /secret/path'), { code: 'ENOSPC' });
    expect([asToolError(enospc, 'x').code, asToolError(enospc, 'x').message]).to.equal(['UNAVAILABLE', NO_SPACE_MESSAGE]);
    const unknown = asToolError(new Error('qpdf: /dev/shm/job-1/input.pdf: damaged'), '/v1/pdf/split');
    expect([unknown.code, unknown.message]).to.equal(['JOB_FAILED', '/v1/pdf/split failed while processing the file; nothing was charged']);
  });
});

describe('the scratch directory', () => {
  it('is made inside the job directory and removed afterwards, also when the work throws', async () => {
    const jobDir = await mkdtemp(path.join(os.tmpdir(), 'scratch-'));
    try {
      let seen = '';
      await withScratch(jobDir, async (dir) => {
        seen = dir;
        expect(path.dirname(dir)).to.equal(jobDir);
        await writeFile(path.join(dir, 'out.pdf'), 'x');
      });
      expect(existsSync(seen)).to.be.false();
      await expect(withScratch(jobDir, async (dir) => {
        seen = dir;
        throw new Error('the tool failed');
      })).to.reject('the tool failed');
      expect(existsSync(seen)).to.be.false();
    } finally {
      await rm(jobDir, { recursive: true, force: true });
    }
  });
});
