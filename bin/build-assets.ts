// Build steps that run after tsc (`npm run build`): each step produces something under dist/
// that the TypeScript compiler does not. Steps skip their work when their output is already
// up to date, so running the build twice costs next to nothing.
//
// Add a step by appending to `steps` below.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// This file runs as dist/bin/build-assets.js, two levels below the project root.
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface CompiledContract {
  abi: readonly unknown[];
  /** Runtime code, the bytes anvil_setCode places at an address. */
  deployedBytecode: `0x${string}`;
}

export interface ContractsFile {
  /** Hash of the compiler version, settings and sources the file was built from. */
  sourceHash: string;
  compiler: string;
  contracts: Record<string, CompiledContract>;
}

/** Solidity sources of the offline payment rig, by contract name (the file holds one contract of that name). */
const contractSources: Record<string, string> = {
  TestUSDC: 'vendor/usdc/TestUSDC.sol',
  Multicall3Min: 'vendor/multicall/Multicall3Min.sol',
};

// Pinned so the bytecode does not change with the compiler's default; anvil and Base both run cancun opcodes.
const compilerSettings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.deployedBytecode.object'] } },
};

export const contractsPath = path.join(projectRoot, 'dist/vendor/contracts.json');

async function readSources(): Promise<Record<string, string> | undefined> {
  const sources: Record<string, string> = {};
  try {
    for (const file of Object.values(contractSources)) {
      sources[file] = await readFile(path.join(projectRoot, file), 'utf8');
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return sources;
}

async function readContractsFile(): Promise<ContractsFile | undefined> {
  try {
    return JSON.parse(await readFile(contractsPath, 'utf8')) as ContractsFile;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function solcPackageVersion(): Promise<string> {
  const manifest = JSON.parse(await readFile(path.join(projectRoot, 'node_modules/solc/package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

function hashInputs(compilerVersion: string, sources: Record<string, string>): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ compilerVersion, compilerSettings, sources }));
  return hash.digest('hex');
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: unknown[]; evm: { deployedBytecode: { object: string } } }>>;
}

async function compile(sources: Record<string, string>): Promise<{ compiler: string; contracts: Record<string, CompiledContract> }> {
  const { default: solc } = await import('solc');
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([file, content]) => [file, { content }])),
    settings: compilerSettings,
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((entry) => entry.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((entry) => entry.formattedMessage).join('\n')}`);
  }
  const contracts: Record<string, CompiledContract> = {};
  for (const [name, file] of Object.entries(contractSources)) {
    const compiled = output.contracts[file]?.[name];
    if (!compiled || !compiled.evm.deployedBytecode.object) {
      throw new Error(`solc produced no runtime code for ${name} in ${file}`);
    }
    contracts[name] = { abi: compiled.abi, deployedBytecode: `0x${compiled.evm.deployedBytecode.object}` };
  }
  return { compiler: String(solc.version()), contracts };
}

/**
 * Returns the compiled rig contracts, compiling them first when dist/vendor/contracts.json is
 * missing or was built from other sources. Without the sources (a trimmed image) the existing
 * file is trusted as it is.
 */
export async function ensureContractsBuilt(): Promise<ContractsFile> {
  const [sources, existing] = await Promise.all([readSources(), readContractsFile()]);
  if (!sources) {
    if (existing) return existing;
    throw new Error(`neither the contract sources under vendor/ nor ${contractsPath} exist`);
  }
  const sourceHash = hashInputs(await solcPackageVersion(), sources);
  if (existing?.sourceHash === sourceHash) return existing;

  const { compiler, contracts } = await compile(sources);
  const built: ContractsFile = { sourceHash, compiler, contracts };
  await mkdir(path.dirname(contractsPath), { recursive: true });
  // Write then rename, so a concurrent reader never sees half a file.
  const temporary = `${contractsPath}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(built, null, 2)}\n`);
  await rename(temporary, contractsPath);
  return built;
}

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

interface BuildStep {
  name: string;
  run(): Promise<void>;
}

const steps: BuildStep[] = [
  {
    name: 'rig contracts (vendor/*.sol -> dist/vendor/contracts.json)',
    run: async () => {
      await ensureContractsBuilt();
    },
  },
  {
    name: 'web page (web/ -> dist/web/: app.js bundle, index.html, style.css)',
    run: ensureWebBuilt,
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
