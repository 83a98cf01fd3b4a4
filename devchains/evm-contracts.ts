// The local Base chain's contracts (test USDC and a minimal Multicall3), compiled from the
// Solidity sources under vendor/ with the solc npm package. The compiled file is cached in
// dist/vendor/contracts.json and rebuilt only when the compiler or a source changes, so the
// first rig to start pays the few seconds of solc and every later one reads the file.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// This file runs as dist/devchains/evm-contracts.js, two levels below the project root.
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

/** Solidity sources of the local Base chain, by contract name (the file holds one contract of that name). */
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
  const manifestPath = createRequire(import.meta.url).resolve('solc/package.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { version: string };
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
  // solc declares its members `any`: the two used here, with their real types.
  const solc = (await import('solc')).default as unknown as { compile(input: string): string; version(): string };
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
