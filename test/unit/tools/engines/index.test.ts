// The engines' declarations: every command an operation needs is declared by one engine, every
// engine's package is installed by the package list, and a command nobody declares is refused.
// The boot check that looks for them on PATH is server/engines.ts (test/unit/server/engines.test.ts).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { operations } from '../../../../operations/index.js';
import { engineOf, ENGINES, type EngineCommand } from '../../../../tools/engines/index.js';

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

  it('cover every command an operation names', () => {
    const named = [...new Set(operations.flatMap((op) => op.engines))];
    expect(named.length).to.be.above(5);
    for (const command of named) expect(engineOf(command).commands).to.include(command);
  });

  it('refuse a command no engine declares', () => {
    expect(() => engineOf('curl' as EngineCommand)).to.throw(/no engine/);
  });
});
