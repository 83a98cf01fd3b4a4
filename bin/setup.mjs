#!/usr/bin/env node
// The two-command set-up: `npm start` and `npm test` (and `npm run bench`, `npm run test:image`) come through here.
// It installs what is missing (Debian packages as root, npm ci), builds when the sources changed, then runs the service,
// the whole test suite (with lint and the coverage floor) or the benchmarks. Plain JavaScript: it runs before anything is built.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const mode = process.argv[2] ?? 'start';
const extraArgs = process.argv.slice(3);

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function must(cmd, args, options) {
  const status = run(cmd, args, options);
  if (status !== 0) {
    console.error(`setup: "${cmd} ${args.join(' ')}" failed with status ${status}`);
    process.exit(status);
  }
}

function packageList(file) {
  return readFileSync(path.join(root, file), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
}

function missingDebianPackages(names) {
  return names.filter((name) => {
    const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' });
    return r.status !== 0 || !r.stdout.includes('install ok installed');
  });
}

function ensureDebianPackages() {
  // The image test runs the service only inside the image, so the host needs buildah, not the tools.
  const wanted = mode === 'image' ? packageList('image-test-packages.txt') : packageList('system-packages.txt');
  if (mode === 'test' || mode === 'bench') wanted.push(...packageList('test-packages.txt'));
  if (spawnSync('dpkg-query', ['--version']).status !== 0) {
    console.warn('setup: not a Debian system; make sure these are installed: ' + wanted.join(' '));
    return;
  }
  const missing = missingDebianPackages(wanted);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    console.error(`setup: missing Debian packages: ${missing.join(' ')}\n  install them as root: apt-get install -y ${missing.join(' ')}`);
    process.exit(1);
  }
  console.log(`setup: installing ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  must('apt-get', ['update', '-qq'], { env });
  must('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env });
}

function ensureNodeModules() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  console.log('setup: npm ci');
  must('npm', ['ci', '--no-audit', '--no-fund']);
}

/**
 * What a build reads: the folders tsc compiles (tsconfig.json's include), the page (web/), and the
 * files that set the build up. Their digest is written beside the output after a build succeeds.
 */
function buildInputs() {
  const { include } = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
  const folders = new Set([...include.map((pattern) => pattern.split('/')[0]), 'web']);
  const files = ['tsconfig.json', 'package.json', 'package-lock.json'];
  const walk = (relative) => {
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = path.join(relative, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) files.push(child);
    }
  };
  for (const folder of folders) if (existsSync(path.join(root, folder))) walk(folder);
  return files.sort();
}

function inputsDigest() {
  const hash = createHash('sha256');
  for (const file of buildInputs()) hash.update(`${file}\0`).update(readFileSync(path.join(root, file))).update('\0');
  return hash.digest('hex');
}

const stampFile = path.join(root, 'dist', '.build-inputs.sha256');

/**
 * Builds only when the sources changed since the last build that succeeded: a second `npm start` in
 * the same checkout (a second service, a test, a restart) leaves dist/ untouched, so a service already
 * running from it never has the files its workers load rewritten under it.
 */
function build() {
  const digest = inputsDigest();
  const built = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : '';
  if (built === digest && existsSync(path.join(root, 'dist', 'bin', 'start.js'))) {
    console.log('setup: dist/ is up to date with the sources; not rebuilt');
    return;
  }
  rmSync(stampFile, { force: true });
  must('npx', ['tsc', '-p', 'tsconfig.json']);
  must('node', ['dist/bin/build-assets.js']);
  writeFileSync(stampFile, `${digest}\n`);
}

ensureDebianPackages();
ensureNodeModules();
build();

if (mode === 'build') {
  process.exit(0);
} else if (mode === 'start') {
  process.exit(run('node', ['dist/bin/start.js', ...extraArgs]));
} else if (mode === 'test') {
  // The whole suite also runs the two gates: lint first, and the coverage floor (.c8rc.json)
  // after the tests; `npm test -- dist/test/<name>.test.js` runs only the files named.
  const gates = extraArgs.length ? [] : ['--lint', '--coverage'];
  process.exit(run('node', ['dist/bin/run-tests.js', ...gates, ...extraArgs]));
} else if (mode === 'image') {
  process.exit(run('node', ['dist/bin/run-tests.js', 'dist/container-test', ...extraArgs]));
} else if (mode === 'bench') {
  process.exit(run('node', ['dist/bench/run.js', ...extraArgs]));
} else {
  console.error(`setup: unknown mode ${mode}; use start, test, image, bench or build`);
  process.exit(2);
}
