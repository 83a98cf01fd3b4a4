// Build steps that run after tsc (`npm run build`): each step produces something under dist/
// that the TypeScript compiler does not. Steps skip their work when their output is already
// up to date, so running the build twice costs next to nothing.
//
// Add a step by appending to `steps` below.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// This file runs as dist/bin/build-assets.js, two levels below the project root.
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Where the web page's bundle and static files go; server/plugins/web.ts serves them. */
export const webDistDir = path.join(projectRoot, 'dist/web');
const webSourceDir = path.join(projectRoot, 'web');
const webStaticFiles = ['index.html', 'style.css'];
const webStampPath = path.join(webDistDir, 'build.json');

interface WebStamp { hash: string; inputs: string[] }

async function hashFiles(files: string[]): Promise<string | undefined> {
  const hash = createHash('sha256');
  for (const file of files) {
    try {
      hash.update(file).update('\0').update(await readFile(path.join(projectRoot, file))).update('\0');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }
  return hash.digest('hex');
}

async function readWebStamp(): Promise<WebStamp | undefined> {
  try {
    return JSON.parse(await readFile(webStampPath, 'utf8')) as WebStamp;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Type-checks web/ with web/tsconfig.json: esbuild only strips the types and the root tsconfig
 * leaves web/ out, so without this a type error in the page would bundle silently. Returns the
 * page's own files that tsc read, as paths from the project root: modules imported only for
 * their types never reach esbuild's list of inputs, yet a change to them must rebuild.
 */
async function typeCheckWeb(): Promise<string[]> {
  const { execFile } = await import('node:child_process');
  const tsc = path.join(projectRoot, 'node_modules/typescript/bin/tsc');
  const args = [tsc, '-p', path.join(webSourceDir, 'tsconfig.json'), '--pretty', 'false', '--listFiles'];
  const { failed, output } = await new Promise<{ failed: boolean; output: string }>((resolve) => {
    execFile(process.execPath, args, { cwd: projectRoot, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ failed: error !== null, output: `${stdout}${stderr}` });
    });
  });
  // --listFiles prints every file read as an absolute path; everything else is tsc's report.
  const lines = output.split('\n').map((line) => line.trimEnd());
  if (failed) {
    const report = lines.filter((line) => line && !path.isAbsolute(line)).join('\n');
    throw new Error(`web/ does not type-check (tsc -p web/tsconfig.json):\n${report}`);
  }
  return lines.filter((line) => line.startsWith(webSourceDir + path.sep)).map((file) => path.relative(projectRoot, file));
}

/**
 * Type-checks the page, then bundles web/app.ts with the x402 client and viem into
 * dist/web/app.js (tree-shaken, minified) and copies the page's static files. The browser needs
 * no build step or third-party script at run time. Skipped when no input of the previous bundle
 * changed; without the sources or esbuild (a trimmed production image) an existing dist/web is
 * used as it is.
 */
export async function ensureWebBuilt(): Promise<void> {
  const stamp = await readWebStamp();
  if (stamp && (await hashFiles(stamp.inputs)) === stamp.hash) return;
  let esbuild: typeof import('esbuild');
  try {
    await readFile(path.join(webSourceDir, 'app.ts'));
    esbuild = await import('esbuild');
  } catch (error) {
    if (stamp) return;
    throw new Error(`the web page cannot be built: ${error instanceof Error ? error.message : String(error)}`);
  }
  const typeChecked = await typeCheckWeb();
  await mkdir(webDistDir, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: projectRoot,
    entryPoints: [path.join(webSourceDir, 'app.ts')],
    outfile: path.join(webDistDir, 'app.js'),
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome109', 'firefox115', 'safari16'],
    tsconfig: path.join(webSourceDir, 'tsconfig.json'),
    metafile: true,
    logLevel: 'silent',
  });
  for (const file of webStaticFiles) {
    await writeFile(path.join(webDistDir, file), await readFile(path.join(webSourceDir, file)));
  }
  const inputs = [...new Set([
    ...Object.keys(result.metafile.inputs),
    ...typeChecked,
    ...webStaticFiles.map((file) => path.join('web', file)),
    'web/tsconfig.json',
  ])].sort();
  const hash = await hashFiles(inputs);
  if (hash) await writeFile(webStampPath, `${JSON.stringify({ hash, inputs }, null, 2)}\n`);
}

/** Where the engines' programs that are not TypeScript live: one folder per engine (mupdf/, weasyprint/). */
const enginesSourceDir = path.join(projectRoot, 'tools/engines');
const enginesDistDir = path.join(projectRoot, 'dist/tools/engines');

/**
 * Copies the engines' programs that tsc does not compile (the MuPDF JavaScript programs that
 * `mutool run` runs, WeasyPrint's Python script) beside the compiled engine modules, which look
 * for them there: so dist/ alone, as the image holds it, runs every engine. Files already equal
 * are left alone; without the sources (a trimmed image) dist/ is used as it is.
 */
export async function copyEnginePrograms(): Promise<void> {
  let folders;
  try {
    folders = (await readdir(enginesSourceDir, { withFileTypes: true })).filter((entry) => entry.isDirectory());
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const folder of folders) {
    const from = path.join(enginesSourceDir, folder.name);
    const to = path.join(enginesDistDir, folder.name);
    await mkdir(to, { recursive: true });
    for (const entry of await readdir(from, { withFileTypes: true })) {
      if (!entry.isFile() || entry.name.endsWith('.ts')) continue;
      const bytes = await readFile(path.join(from, entry.name));
      const existing = await readFile(path.join(to, entry.name)).catch(() => undefined);
      if (!existing?.equals(bytes)) await writeFile(path.join(to, entry.name), bytes);
    }
  }
}

interface BuildStep {
  name: string;
  run(): Promise<void>;
}

const steps: BuildStep[] = [
  {
    name: 'web page (web/ -> dist/web/: app.js bundle, index.html, style.css)',
    run: ensureWebBuilt,
  },
  {
    name: 'engine programs (tools/engines/*/ -> dist/tools/engines/: MuPDF .js programs, WeasyPrint\'s render.py)',
    run: copyEnginePrograms,
  },
];

async function main(): Promise<void> {
  for (const step of steps) {
    const started = performance.now();
    await step.run();
    process.stdout.write(`build-assets: ${step.name} (${Math.round(performance.now() - started)} ms)\n`);
  }
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  main().catch((error: unknown) => {
    process.stderr.write(`build-assets failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
