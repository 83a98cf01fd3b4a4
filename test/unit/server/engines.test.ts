// The boot check: every engine command the operations name (and the local engines the settings
// choose) is looked for on PATH, reported by that name, and a command no engine declares fails the
// boot. /v1/health answers from it (service/foundation shows the 503).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { operations } from '../../../operations/index.js';
import { checkEngines } from '../../../server/engines.js';
import type { EngineCommand } from '../../../tools/engines/index.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('checkEngines', () => {
  it('reports every command the operations name, by that name, all installed on this machine', async () => {
    const named = [...new Set(operations.flatMap((op) => op.engines))].sort();
    const status = await checkEngines(operations);
    expect(Object.keys(status)).to.equal(named);
    // bin/setup.mjs installs the package list on this machine.
    expect(Object.values(status).every(Boolean), JSON.stringify(status)).to.be.true();
  });

  it('adds the local engines the settings choose, once each', async () => {
    const split = operations.find((op) => op.id === 'pdf.split')!;
    const status = await checkEngines([split], ['tesseract', ...split.engines]);
    expect(Object.keys(status)).to.equal([...new Set([...split.engines, 'tesseract'])].sort());
  });

  it('reports a command missing from PATH, or there but not executable, as not installed', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-engines-'));
    const saved = process.env.PATH;
    try {
      await writeFile(path.join(dir, 'qpdf'), '#!/bin/sh\n');
      await chmod(path.join(dir, 'qpdf'), 0o755);
      await writeFile(path.join(dir, 'gs'), '#!/bin/sh\n');
      process.env.PATH = dir;
      expect(await checkEngines([], ['qpdf', 'gs', 'mutool'])).to.equal({ gs: false, mutool: false, qpdf: true });
    } finally {
      process.env.PATH = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fails on a command no engine declares: a mistake in the code, not a missing package', async () => {
    await expect(checkEngines([], ['curl' as EngineCommand])).to.reject(/no engine in tools\/engines\/ declares the command curl/);
  });
});
