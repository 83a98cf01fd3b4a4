// `npm start` builds only when the sources changed (bin/setup.mjs): run twice in one checkout with
// nothing changed, the second leaves every file of dist/ as it was (a service already running from
// it keeps the files its workers load); a changed source is built again. Run on a copy of this
// checkout (its sources, node_modules linked), through the set-up's `build` mode, which is what
// `npm start` does before it starts the service.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { spawn } from 'node:child_process';
import { appendFile, cp, mkdtemp, readdir, realpath, rm, stat, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/**
 * What the copy leaves out: the installed packages (linked instead), git's and coverage's files.
 * dist/ is copied with its stamp: after `npm test`'s own build the first run here finds it current.
 */
const NOT_COPIED = new Set(['node_modules', '.git', 'coverage']);
/** A full build (tsc, then the page's bundle) takes one to five minutes on a busy two-core machine. */
const BUILD_TIMEOUT_MS = 600_000;

function setup(cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/setup.mjs', 'build'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
    const timer = setTimeout(() => child.kill(), BUILD_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`setup.mjs build ended with ${code}:\n${output}`));
    });
  });
}

/** Every file under dist/ with its modification time in nanoseconds. */
async function mtimes(dir: string): Promise<Map<string, bigint>> {
  const found = new Map<string, bigint>();
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    found.set(path.relative(dir, file), (await stat(file, { bigint: true })).mtimeNs);
  }
  return found;
}

describe('npm start builds only when the sources changed', () => {
  let checkout: string;

  before(async () => {
    checkout = await mkdtemp(path.join(os.tmpdir(), 'paydoc-start-build-'));
    for (const entry of await readdir(root)) {
      if (NOT_COPIED.has(entry)) continue;
      // Times kept: the set-up compares package-lock.json's with the installed packages' to decide on npm ci,
      // and the mtimes of dist/ are what is compared below.
      await cp(path.join(root, entry), path.join(checkout, entry), { recursive: true, preserveTimestamps: true });
    }
    await symlink(await realpath(path.join(root, 'node_modules')), path.join(checkout, 'node_modules'));
    // The set-up would run npm ci into the linked packages if it found them older than the lock.
    const installed = await stat(path.join(checkout, 'node_modules', '.package-lock.json'));
    expect(installed.mtimeMs).to.be.at.least((await stat(path.join(checkout, 'package-lock.json'))).mtimeMs);
  });

  after(async () => {
    if (checkout) await rm(checkout, { recursive: true, force: true });
  });

  it('a second start with unchanged sources touches nothing in dist/; a changed source is rebuilt', { timeout: 2 * BUILD_TIMEOUT_MS + 60_000 }, async () => {
    // Built here unless the copied dist/ is current (as after `npm test`'s build).
    await setup(checkout);
    const dist = path.join(checkout, 'dist');
    const built = await mtimes(dist);
    expect(built.size).to.be.above(100);

    const again = await setup(checkout);
    expect(again).to.contain('setup: dist/ is up to date with the sources; not rebuilt');
    expect(await mtimes(dist)).to.equal(built);

    await appendFile(path.join(checkout, 'core/version.ts'), '\n// A change, so the build runs again.\n');
    const rebuilt = await setup(checkout);
    expect(rebuilt).to.not.contain('not rebuilt');
    const after = await mtimes(dist);
    expect(after.get('core/version.js')! > built.get('core/version.js')!).to.equal(true);
    expect(after.get('.build-inputs.sha256')! > built.get('.build-inputs.sha256')!).to.equal(true);
  });
});
