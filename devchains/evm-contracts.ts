// The local Base chain's contracts, compiled from the Solidity sources under vendor/ with the solc
// npm package: our test USDC and a minimal Multicall3, and x402's batch-settlement contracts
// (vendor/x402-batch-settlement/, built exactly as x402 builds them so that their CREATE2
// addresses come out canonical). The compiled file is cached in dist/vendor/contracts.json and
// rebuilt only when a compiler, a setting or a source changes, so the first rig to start pays the
// seconds of solc and every later one reads the file.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// This file runs as dist/devchains/evm-contracts.js, two levels below the project root.
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);

export interface CompiledContract {
  abi: readonly unknown[];
  /** Creation code (constructor arguments are appended to it), for contracts deployed by a transaction. */
  bytecode: `0x${string}`;
  /** Runtime code, the bytes anvil_setCode places at an address. */
  deployedBytecode: `0x${string}`;
}

export interface ContractsFile {
  /** Hash of the compilers, settings and sources the file was built from. */
  sourceHash: string;
  /** The solc version each build used, by build name. */
  compilers: Record<string, string>;
  contracts: Record<string, CompiledContract>;
}

/** One solc run: a compiler (an npm package name), its settings, the source files and the contracts wanted. */
interface ContractBuild {
  compilerPackage: string;
  settings: Record<string, unknown>;
  /** Every source file of the build, relative to the project root (solc resolves relative imports among them). */
  sources: string[];
  /** The contracts taken from the output, by contract name: the file that declares it. */
  contracts: Record<string, string>;
}

const outputSelection = { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } };
const x402Sources = 'vendor/x402-batch-settlement/src';

const builds: Record<string, ContractBuild> = {
  // Our own contracts. Pinned so the bytecode does not change with the compiler's default; anvil and
  // Base both run cancun opcodes.
  project: {
    compilerPackage: 'solc',
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection },
    sources: ['vendor/usdc/TestUSDC.sol', 'vendor/multicall/Multicall3Min.sol'],
    contracts: { TestUSDC: 'vendor/usdc/TestUSDC.sol', Multicall3Min: 'vendor/multicall/Multicall3Min.sol' },
  },
  // x402's contracts with x402's settings (contracts/evm/foundry.toml): solc 0.8.28, 200 optimizer runs,
  // cancun, no via-IR, no CBOR metadata. Any difference changes the creation code and so the CREATE2
  // address, which the rig checks against the canonical one.
  x402BatchSettlement: {
    compilerPackage: 'solc-0.8.28',
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      viaIR: false,
      metadata: { appendCBOR: false, bytecodeHash: 'none' },
      outputSelection,
    },
    sources: [
      'x402BatchSettlement.sol',
      'periphery/ERC3009DepositCollector.sol',
      'periphery/DepositCollector.sol',
      'interfaces/IDepositCollector.sol',
      'interfaces/IERC3009.sol',
    ].map((file) => `${x402Sources}/${file}`),
    contracts: {
      x402BatchSettlement: `${x402Sources}/x402BatchSettlement.sol`,
      ERC3009DepositCollector: `${x402Sources}/periphery/ERC3009DepositCollector.sol`,
    },
  },
};

// x402's sources import OpenZeppelin by the remapped prefix; the npm package has the same layout.
const OPENZEPPELIN_PREFIX = '@openzeppelin/contracts/';
const OPENZEPPELIN_PACKAGE = '@openzeppelin/contracts';

export const contractsPath = path.join(projectRoot, 'dist/vendor/contracts.json');

type Sources = Record<string, Record<string, string>>;

async function readSources(): Promise<Sources | undefined> {
  const sources: Sources = {};
  try {
    for (const [name, build] of Object.entries(builds)) {
      sources[name] = {};
      for (const file of build.sources) sources[name][file] = await readFile(path.join(projectRoot, file), 'utf8');
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

/** The installed version of a development package; a clear error when it is missing (npm install not run). */
async function packageVersion(name: string): Promise<string> {
  let manifestPath: string;
  try {
    manifestPath = require.resolve(`${name}/package.json`);
  } catch {
    throw new Error(`compiling the local chain's contracts needs the npm package ${name} (a development dependency): run npm install`);
  }
  return (JSON.parse(await readFile(manifestPath, 'utf8')) as { version: string }).version;
}

async function hashInputs(sources: Sources): Promise<string> {
  const versions: Record<string, string> = {};
  for (const name of [...new Set(Object.values(builds).map((build) => build.compilerPackage)), OPENZEPPELIN_PACKAGE]) {
    versions[name] = await packageVersion(name);
  }
  const settings = Object.fromEntries(Object.entries(builds).map(([name, build]) => [name, build.settings]));
  return createHash('sha256').update(JSON.stringify({ versions, settings, sources })).digest('hex');
}

/** solc's import callback: OpenZeppelin's files from node_modules, nothing else from outside the build. */
function findImport(importPath: string): { contents: string } | { error: string } {
  if (!importPath.startsWith(OPENZEPPELIN_PREFIX)) return { error: `not a source of this build: ${importPath}` };
  const packageRoot = path.dirname(require.resolve(`${OPENZEPPELIN_PACKAGE}/package.json`));
  const file = path.join(packageRoot, importPath.slice(OPENZEPPELIN_PREFIX.length));
  if (!file.startsWith(packageRoot + path.sep)) return { error: `outside ${OPENZEPPELIN_PACKAGE}: ${importPath}` };
  try {
    return { contents: readFileSync(file, 'utf8') };
  } catch {
    return { error: `not found in ${OPENZEPPELIN_PACKAGE}: ${importPath}` };
  }
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  /** Source file → contract name → its ABI and bytecodes. */
  contracts: Record<string, Record<string, SolcContract>>;
}

interface SolcContract {
  abi: unknown[];
  evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
}

/** The two members of the solc module used here, with their real types (solc declares them `any`). */
interface Solc {
  compile(input: string, callbacks: { import: typeof findImport }): string;
  version(): string;
}

async function compile(
  build: ContractBuild, sources: Record<string, string>,
): Promise<{ compiler: string; contracts: Record<string, CompiledContract> }> {
  await packageVersion(build.compilerPackage);
  const solc = (await import(build.compilerPackage) as { default: Solc }).default;
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([file, content]) => [file, { content }])),
    settings: build.settings,
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as SolcOutput;
  const errors = (output.errors ?? []).filter((entry) => entry.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((entry) => entry.formattedMessage).join('\n')}`);
  }
  const contracts: Record<string, CompiledContract> = {};
  for (const [name, file] of Object.entries(build.contracts)) {
    const compiled = output.contracts[file]?.[name];
    if (!compiled?.evm.bytecode.object || !compiled.evm.deployedBytecode.object) {
      throw new Error(`solc produced no code for ${name} in ${file}`);
    }
    contracts[name] = {
      abi: compiled.abi,
      bytecode: `0x${compiled.evm.bytecode.object}`,
      deployedBytecode: `0x${compiled.evm.deployedBytecode.object}`,
    };
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
  const sourceHash = await hashInputs(sources);
  if (existing?.sourceHash === sourceHash) return existing;

  const built: ContractsFile = { sourceHash, compilers: {}, contracts: {} };
  for (const [name, build] of Object.entries(builds)) {
    const { compiler, contracts } = await compile(build, sources[name]);
    built.compilers[name] = compiler;
    Object.assign(built.contracts, contracts);
  }
  await mkdir(path.dirname(contractsPath), { recursive: true });
  // Write then rename, so a concurrent reader never sees half a file.
  const temporary = `${contractsPath}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(built, null, 2)}\n`);
  await rename(temporary, contractsPath);
  return built;
}
