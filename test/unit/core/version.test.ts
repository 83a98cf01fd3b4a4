// core/version.ts: the version the service reports (health, MCP server info, User-Agent) and the
// bridge introduces itself with is the package's own.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { VERSION } from '../../../core/version.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

describe('the version', () => {
  it('is package.json\'s version', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).to.equal(pkg.version);
    expect(VERSION).to.match(/^\d+\.\d+\.\d+$/);
  });
});
