// The engines' declarations: every command an operation needs is declared by one engine, every
// engine's package is installed by the package list, and a command nobody declares is refused.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { operations } from '../../../../operations/index.js';
import { engineOf, ENGINES, type EngineCommand } from '../../../../tools/engines/index.js';
import { checkBinaries } from '../../../../server/binaries.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../..');

describe('the engines\' declarations', () => {
  it('declare each command once, with a package the package list installs', () => {
    const commands = ENGINES.flatMap((e) => [...e.commands]);
    expect(new Set(commands).size).to.equal(commands.length);
    const packages = readFileSync(path.join(root, 'system-packages.txt'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const engine of ENGINES) expect(packages, engine.name).to.include(engine.package);
  });

  it('cover every binary an operation names, and the boot check reports them by those names', async () => {
    const named = [...new Set(operations.flatMap((op) => op.binaries))].sort();
    for (const command of named) expect(engineOf(command).commands).to.include(command);
    const status = await checkBinaries(operations);
    expect(Object.keys(status).sort()).to.equal(named);
    // This machine has every engine installed (bin/setup.mjs installs the package list).
    expect(Object.values(status).every(Boolean), JSON.stringify(status)).to.be.true();
  });

  it('refuse a command no engine declares', async () => {
    expect(() => engineOf('curl' as EngineCommand)).to.throw(/no engine/);
    await expect(checkBinaries([], ['curl' as EngineCommand])).to.reject(/no engine/);
  });
});
