// Runs the lab suite on the compiled tests and ends with one plain summary line
// ("N passed, N failed") that CI reads. `npm test` adds the two gates (bin/setup.mjs):
//   --lint      ESLint first (eslint.config.mjs: typescript-eslint and the formatter check);
//   --coverage  the suite under V8 coverage (NODE_V8_COVERAGE, every Node process and thread it
//               starts), then c8 reports it and enforces the floor in .c8rc.json;
//   --dry       lab's dry run: every test is found and listed, none is run (counts the suite).
// The tests are the compiled *.test.js files under the folders given (dist/test by default: the
// layout is in test/README.md) whose TypeScript source still exists, so a test moved or deleted in
// the source is not run again from what an older build left in dist/.
// A gate that fails makes the exit status non-zero and is named just above the summary line; the
// suite runs either way, so one run reports everything.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = (...parts: string[]) => path.join(root, 'node_modules', ...parts);
const args = process.argv.slice(2);
const lint = args.includes('--lint');
const coverage = args.includes('--coverage');
const dry = args.includes('--dry');
const given = args.filter((a) => a !== '--lint' && a !== '--coverage' && a !== '--dry');
const problems: string[] = [];
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

if (lint) {
  const started = performance.now();
  console.log('lint: eslint . (typescript-eslint, type-checked; ESLint Stylistic as the formatter check)');
  const result = spawnSync(process.execPath, [bin('eslint', 'bin', 'eslint.js'), '.'], { cwd: root, stdio: 'inherit' });
  if (result.status === 0) console.log(`lint: clean (${seconds(started)})`);
  else problems.push(`lint failed: ESLint exited with status ${result.status ?? result.signal} (its findings are printed before the tests; \`npm run lint\` lists them again)`);
}

const coverageDir = path.join(root, 'coverage', 'v8');
const env = { ...process.env };
if (coverage) {
  rmSync(coverageDir, { recursive: true, force: true });
  mkdirSync(coverageDir, { recursive: true });
  env.NODE_V8_COVERAGE = coverageDir;
}

/**
 * Compiled files whose source is gone, which a build over an older checkout leaves in dist/: c8
 * would count them (and their source maps' lines) as never run, so they are excluded too.
 */
function staleOutputs(dir = path.join(root, 'dist')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) return staleOutputs(file);
    const rel = path.relative(path.join(root, 'dist'), file);
    return e.name.endsWith('.js') && !existsSync(path.join(root, rel.replace(/\.js$/, '.ts'))) ? [`dist/${rel}`] : [];
  });
}

/** The source a compiled file of dist/ was built from. */
const sourceOf = (compiled: string) => path.join(root, path.relative(path.join(root, 'dist'), path.resolve(root, compiled)).replace(/\.js$/, '.ts'));

/** The compiled test files under a folder (or the file itself), skipping those whose source is gone. */
function testFiles(target: string): string[] {
  const full = path.resolve(root, target);
  if (!existsSync(full)) throw new Error(`run-tests: ${target} does not exist (tests live in test/unit, test/service and test/system: test/README.md)`);
  if (!statSync(full).isDirectory()) {
    if (!existsSync(sourceOf(full))) throw new Error(`run-tests: ${target} was compiled from a source that is gone (moved or deleted; test/README.md says where tests live)`);
    return [target];
  }
  return readdirSync(full, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(target, e.name);
    if (e.isDirectory()) return testFiles(file);
    return e.name.endsWith('.test.js') && existsSync(sourceOf(file)) ? [file] : [];
  }).sort();
}

let targets: string[] = [];
try {
  targets = (given.length ? given : ['dist/test']).flatMap(testFiles);
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
const labBin = bin('@hapi', 'lab', 'bin', 'lab');
const child = spawn(process.execPath, [labBin, ...(dry ? ['-d'] : []), ...targets], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
child.stdout.on('data', (chunk: Buffer) => { process.stdout.write(chunk); out += chunk.toString(); if (out.length > 1_000_000) out = out.slice(-100_000); });
child.on('close', (code) => {
  if (coverage) {
    const started = performance.now();
    console.log('\ncoverage (c8, floor in .c8rc.json):');
    // c8 reads .c8rc.json: what counts, the text summary, and the thresholds it checks.
    const config = JSON.parse(readFileSync(path.join(root, '.c8rc.json'), 'utf8')) as { exclude: string[] };
    const exclude = [...config.exclude, ...staleOutputs().filter((f) => !config.exclude.some((x) => f.startsWith(x.replace(/\*\*$/, ''))))];
    const c8 = [bin('c8', 'bin', 'c8.js'), 'report', '--temp-directory', coverageDir, ...exclude.flatMap((x) => ['--exclude', x])];
    const result = spawnSync(process.execPath, c8, { cwd: root, stdio: 'inherit' });
    console.log(`coverage: reported in ${seconds(started)} (per file: coverage/coverage-summary.json)`);
    rmSync(coverageDir, { recursive: true, force: true }); // hundreds of MB of raw V8 data
    if (result.status !== 0) problems.push('coverage failed: below the floor in .c8rc.json (the ERROR lines above name each measure), or c8 could not report');
  }
  for (const problem of problems) console.log(problem);
  const failed = /(\d+) of (\d+) tests failed/.exec(out);
  const complete = /(\d+) tests? complete/.exec(out);
  const skipped = /\((\d+) skipped\)/.exec(out);
  if (dry) console.log(`${skipped?.[1] ?? 0} tests found in ${targets.length} files, none run (--dry)`);
  else if (failed) console.log(`${Number(failed[2]) - Number(failed[1])} passed, ${failed[1]} failed`);
  else if (complete) console.log(`${complete[1]} passed, 0 failed`);
  process.exit(code !== 0 ? (code ?? 1) : problems.length ? 1 : 0);
});
