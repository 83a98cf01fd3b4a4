// The source folders are layers: each imports only the layers below it, at run time (static
// imports, re-exports and dynamic import() in the compiled JavaScript; type-only imports are
// erased). A cycle between folders, or an import upwards, fails here with the file that made it.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as DevChains from '../devchains/index.js';
import type { DevChainsModule } from '../server/payment/setup.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const root = path.resolve(dist, '..');

/**
 * Lowest first. What the service and its clients share (USD amounts, the protocol's constants) is
 * in the core; the clients' code (payers, the MCP bridge) stands on the core alone, so the paying
 * CLI and MCP bridge load nothing of the service. The local chains stand beside the service: only
 * server/ loads them, and only in dev mode.
 */
const LAYERS = ['core', 'client', 'tools', 'checks', 'operations', 'workers', 'devchains', 'server', 'bin'] as const;
/** What the image compiles (the Dockerfile's COPY lines): devchains/ is not among them. */
const IMAGE_SOURCES = ['core', 'client', 'tools', 'checks', 'operations', 'workers', 'server', 'bin', 'web'];

// The service declares what it uses of devchains/ instead of importing its types, so that it
// compiles without the folder; this fails to compile when devchains/ no longer provides that.
export type DevChainsFit = Fits<DevChainsModule, typeof DevChains>;
type Fits<Wanted, Given extends Wanted> = Given;

function filesIn(dir: string, extension = '.js'): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    if (e.isDirectory()) return filesIn(path.join(dir, e.name), extension);
    return e.name.endsWith(extension) ? [path.join(dir, e.name)] : [];
  });
}

/** Compiled output whose source still exists: a build over an older checkout leaves files behind. */
function hasSource(file: string): boolean {
  return existsSync(path.join(root, path.relative(dist, file)).replace(/\.js$/, '.ts'));
}

const IMPORT = /(?:^\s*import\s[^'"]*?from\s*|^\s*import\s*|^\s*export\s[^'"]*?from\s*|\bimport\(\s*)['"](\.{1,2}\/[^'"]+)['"]/gm;

interface Edge { from: string; to: string; file: string; target: string }

// Every specifier, relative or a package, of a static import or re-export or a literal import().
const ANY_IMPORT = /(?:^\s*import\s[^'"]*?from\s*|^\s*import\s*|^\s*export\s[^'"]*?from\s*|\bimport\(\s*)['"]([^'"]+)['"]/gm;
// The same in TypeScript sources, type-only imports and `typeof import()` included.
const SOURCE_IMPORT = /(?:^\s*import\s[^'"]*?from\s*|^\s*import\s*|^\s*export\s[^'"]*?from\s*|\bimport\(\s*)['"](\.{1,2}\/[^'"]+)['"]/gm;

/** The package an import names ('@x402/evm/exact/client' → '@x402/evm'), or undefined for node: and built-ins. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Every compiled file a module loads, following its imports, and the packages they name. */
function importGraph(entry: string): { files: string[]; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(ANY_IMPORT)) {
      if (match[1].startsWith('.')) visit(path.resolve(path.dirname(file), match[1]));
      else {
        const name = packageOf(match[1]);
        if (name) packages.add(name);
      }
    }
  };
  visit(entry);
  return { files: [...files].map((f) => path.relative(dist, f)).sort(), packages };
}

function runTimeEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const layer of LAYERS) {
    for (const file of filesIn(path.join(dist, layer)).filter(hasSource)) {
      for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const target = path.relative(dist, path.resolve(path.dirname(file), match[1]));
        const to = target.split(path.sep)[0];
        if (to !== layer) edges.push({ from: layer, to, file: path.relative(dist, file), target });
      }
    }
  }
  return edges;
}

function findCycle(edges: readonly Edge[]): string[] | undefined {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'open') return [...stack.slice(stack.indexOf(node)), node];
    if (state.get(node) === 'done') return undefined;
    state.set(node, 'open');
    stack.push(node);
    for (const to of next.get(node) ?? []) {
      const cycle = visit(to);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of next.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

/** The layout engine's entry points: the work functions, the scanned pages' OCR, and the tests' entry. */
const LAYOUT_ENTRIES = ['index.js', 'tables.js', 'scanned.js', 'testing.js'];
/**
 * The layout engine's stages in pipeline order (workers/layout/README.md), each a file or a folder;
 * `shared` are the modules every stage may use. A stage imports only its own and earlier ones.
 */
const LAYOUT_STAGES = [
  ['shared', ['types', 'thresholds', 'rows', 'row-predicates', 'table-cells', 'list-markers', 'hyphens', 'bidi']],
  ['stext', ['stext']],
  ['fragments', ['fragments']],
  ['running-text', ['running-text']],
  ['drawn tables', ['rules', 'underlined-tables']],
  ['reading-regions', ['reading-regions']],
  ['aligned-tables', ['aligned-tables']],
  ['structure', ['structure']],
  ['emit', ['emit']],
  ['convert', ['convert']],
  ['blocks', ['blocks']],
  ['chunks', ['chunks']],
  ['entries', ['index', 'tables', 'scanned', 'testing']],
] as const;

/** The rank and name of the stage a file of workers/layout/ (relative path, .js) belongs to. */
function layoutStage(file: string): { rank: number; name: string } | undefined {
  const key = file.split(path.sep)[0]!.replace(/\.js$/, '');
  const rank = LAYOUT_STAGES.findIndex(([, members]) => (members as readonly string[]).includes(key));
  return rank < 0 ? undefined : { rank, name: LAYOUT_STAGES[rank]![0] };
}

/** The imports that reach a later stage than the importing file's. */
function laterStageImports(edges: readonly { from: string; to: string }[]): string[] {
  return edges.flatMap(({ from, to }) => {
    const [a, b] = [layoutStage(from), layoutStage(to)];
    return a && b && b.rank > a.rank ? [`${from} (${a.name}) imports ${to} (${b.name}), a later stage`] : [];
  });
}

/** Which of these server sources (type-only imports included) import server/index.ts, which builds the server from them. */
function importersOfServerIndex(sources: readonly { file: string; text: string }[]): string[] {
  const index = path.join(root, 'server', 'index.js');
  return sources.filter(({ file, text }) => [...text.matchAll(SOURCE_IMPORT)].some((m) => path.resolve(path.dirname(file), m[1]) === index))
    .map(({ file }) => path.relative(root, file));
}

describe('layers', () => {
  it('the compiled folders import each other without a cycle, and only downwards', () => {
    const edges = runTimeEdges();
    expect(edges.length, 'no imports were read: is dist/ built?').to.be.above(20);
    expect(findCycle(edges), 'an import cycle between top-level folders').to.be.undefined();
    const rank = (layer: string) => LAYERS.indexOf(layer as (typeof LAYERS)[number]);
    const upwards = edges.filter((e) => rank(e.to) < 0 || rank(e.to) > rank(e.from)).map((e) => `${e.file} imports ${e.target}`);
    expect(upwards).to.equal([]);
    // The core depends on nothing of the project.
    expect(edges.filter((e) => e.from === 'core')).to.equal([]);
  });

  it('no module of the server imports server/index.ts, not even a type: the plugins take the App type from server/app.ts', () => {
    const sources = filesIn(path.join(root, 'server'), '.ts').filter((file) => file !== path.join(root, 'server', 'index.ts'))
      .map((file) => ({ file, text: readFileSync(file, 'utf8') }));
    const plugins = sources.filter(({ file }) => file.startsWith(path.join(root, 'server', 'plugins') + path.sep));
    expect(plugins.filter(({ text }) => text.includes("import type { App } from '../app.js';")).length).to.be.above(8);
    expect(importersOfServerIndex(sources)).to.equal([]);
    // Not vacuous: the check sees a plugin that does.
    const offender = { file: path.join(root, 'server', 'plugins', 'offender.ts'), text: "import type { App } from '../index.js';\n" };
    expect(importersOfServerIndex([offender])).to.equal([path.join('server', 'plugins', 'offender.ts')]);
  });

  it('the client layer imports only the core', () => {
    const fromClient = runTimeEdges().filter((e) => e.from === 'client');
    expect(fromClient.filter((e) => e.to !== 'core').map((e) => `${e.file} imports ${e.target}`)).to.equal([]);
    const clientFiles = filesIn(path.join(dist, 'client')).filter(hasSource).map((f) => path.relative(dist, f));
    expect(clientFiles).to.include(['client/payer.js', 'client/svm-payer.js', 'client/bridge/bridge.js']);
  });

  it('the service takes nothing from the client layer but the dev mode\'s demo payer: what both sides use is in the core', () => {
    const fromServer = runTimeEdges().filter((e) => e.from === 'server' && e.to === 'client');
    // The dev page's demo payer pays the local chains as a buyer would (only in dev mode).
    const demoPayer = (e: Edge) => e.file === path.join('server', 'plugins', 'dev.js') && e.target === path.join('client', 'payer.js');
    expect(fromServer.filter((e) => !demoPayer(e)).map((e) => `${e.file} imports ${e.target}`)).to.equal([]);
    const shared = runTimeEdges().filter((e) => e.from === 'server' && e.to === 'core').map((e) => e.target);
    expect(shared).to.include([path.join('core', 'protocol.js'), path.join('core', 'usd.js')]);
  });

  it('the paying MCP bridge (paydoc-mcp) loads nothing of the service: no server/, no operations, no convict', () => {
    const { files, packages } = importGraph(path.join(dist, 'bin/mcp-bridge.js'));
    // Not vacuous: the walk reaches the payer, the conversion and the protocol's constants.
    const reached = ['bin/mcp-bridge.js', 'client/bridge/bridge.js', 'client/payer.js', 'client/svm-payer.js', 'core/usd.js', 'core/protocol.js',
      'core/version.js'];
    expect(files).to.include(reached);
    expect(files.filter((f) => !/^(client|core)\//.test(f) && f !== 'bin/mcp-bridge.js')).to.equal([]);
    expect(files.filter((f) => f.startsWith('server/') || f.startsWith('operations/'))).to.equal([]);
    expect(packages.has('convict'), [...packages].join(', ')).to.be.false();
    expect(packages.has('@hapi/hapi'), [...packages].join(', ')).to.be.false();
    // The package ships it as a bin: whatever it loads must be a production dependency.
    const { dependencies } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect([...packages].filter((name) => !(name in dependencies))).to.equal([]);
  });

  it('the paying CLI (bin/pay.ts) loads nothing of the service either', () => {
    const { files } = importGraph(path.join(dist, 'bin/pay.js'));
    expect(files).to.include(['client/payer.js', 'core/usd.js']);
    expect(files.filter((f) => !/^(client|core)\//.test(f) && f !== 'bin/pay.js')).to.equal([]);
  });

  it('the web page takes from the project only core/ modules that import nothing (so they bundle for a browser)', () => {
    const outside = filesIn(path.join(root, 'web'), '.ts').flatMap((file) => [...readFileSync(file, 'utf8').matchAll(SOURCE_IMPORT)]
      .map((match) => path.relative(root, path.resolve(path.dirname(file), match[1])))
      .filter((target) => !target.startsWith(`web${path.sep}`)));
    expect(outside).to.include(`core${path.sep}usd.js`);
    for (const target of new Set(outside)) {
      expect(target.split(path.sep)[0], target).to.equal('core');
      expect([...readFileSync(path.join(dist, target), 'utf8').matchAll(ANY_IMPORT)].map((m) => m[1]), target).to.equal([]);
    }
  });

  it('what the image compiles names nothing of devchains/, test/ or bench/, not even a type, so the image builds without them', () => {
    const found: string[] = [];
    for (const dir of IMAGE_SOURCES) {
      for (const file of filesIn(path.join(root, dir), '.ts')) {
        for (const match of readFileSync(file, 'utf8').matchAll(SOURCE_IMPORT)) {
          const target = path.relative(root, path.resolve(path.dirname(file), match[1]));
          if (!IMAGE_SOURCES.includes(target.split(path.sep)[0])) found.push(`${path.relative(root, file)} imports ${target}`);
        }
      }
    }
    expect(found).to.equal([]);
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const copied = [...dockerfile.matchAll(/^COPY ([\w-]+) \1$/gm)].map((m) => m[1]);
    expect(copied.sort()).to.equal([...IMAGE_SOURCES].sort());
  });

  it('inside tools/, the process plumbing stands below the engines, and an engine runs only through it', () => {
    const inTools = (sub: string) => filesIn(path.join(dist, 'tools', sub)).filter(hasSource);
    const targets = (file: string) => [...readFileSync(file, 'utf8').matchAll(IMPORT)]
      .map((match) => path.relative(dist, path.resolve(path.dirname(file), match[1])));
    expect(inTools('process').length).to.be.above(3);
    expect(inTools('engines').length).to.be.above(7);
    const upwards = inTools('process').flatMap((file) => targets(file)
      .filter((target) => !target.startsWith(`core${path.sep}`) && !target.startsWith(path.join('tools', 'process') + path.sep))
      .map((target) => `${path.relative(dist, file)} imports ${target}`));
    expect(upwards).to.equal([]);
    // Engines spawn nothing themselves: their runs go through run-tool (the launcher, its limits).
    const spawning = inTools('engines').filter((file) => /from ['"](node:)?child_process['"]|from ['"]execa['"]|spawn-with-limits\.js/.test(readFileSync(file, 'utf8')));
    expect(spawning.map((f) => path.relative(dist, f))).to.equal([]);
  });

  it('outside tools/, nothing starts a program itself: checks, operations, workers and the server call the engines', () => {
    const found: string[] = [];
    for (const layer of ['checks', 'operations', 'workers', 'server']) {
      for (const file of filesIn(path.join(root, layer), '.ts')) {
        const source = readFileSync(file, 'utf8');
        // The launcher's lifecycle (warmLauncher, killAllChildren) is the only thing taken from the plumbing's runner.
        for (const match of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*['"][./]*tools\/process\/(run-tool|spawn-with-limits)\.js['"]/g)) {
          const names = match[1].split(',').map((n) => n.trim().replace(/^type\s+/, '')).filter(Boolean);
          const running = names.filter((n) => !['warmLauncher', 'killAllChildren', 'RunFailure', 'RunResult', 'RunOptions'].includes(n));
          if (running.length) found.push(`${path.relative(root, file)} imports ${running.join(', ')} from tools/process/${match[2]}`);
        }
        if (/from ['"](node:)?child_process['"]|from ['"]execa['"]/.test(source)) found.push(`${path.relative(root, file)} imports a process spawner`);
      }
    }
    expect(found).to.equal([]);
  });

  it('the layout engine (workers/layout/) runs tools only from its entry points: its rules import nothing but one another', () => {
    // index.ts and tables.ts are the work functions (mutool reads the text layer), scanned.ts
    // renders and reads scanned pages, testing.ts hands the rules to the unit tests; every other
    // file is rules on fragments, testable alone.
    const layout = path.join(dist, 'workers', 'layout');
    const files = filesIn(layout).filter(hasSource);
    const isEntry = (file: string) => LAYOUT_ENTRIES.includes(path.relative(layout, file));
    expect(files.map((f) => path.relative(layout, f))).to.include([...LAYOUT_ENTRIES, 'reading-regions/index.js', 'thresholds.js']);
    const outside: string[] = [];
    for (const file of files.filter((f) => !isEntry(f))) {
      for (const match of readFileSync(file, 'utf8').matchAll(ANY_IMPORT)) {
        const target = match[1].startsWith('.') ? path.resolve(path.dirname(file), match[1]) : match[1];
        const ok = match[1].startsWith('.') ? target.startsWith(layout + path.sep) && !isEntry(target) : match[1].startsWith('node:');
        if (!ok) outside.push(`${path.relative(dist, file)} imports ${match[1]}`);
      }
    }
    expect(outside).to.equal([]);
  });

  it("the layout engine's stages import only earlier stages, and a stage's folder only through its index", () => {
    const layout = path.join(dist, 'workers', 'layout');
    const edges = filesIn(layout).filter(hasSource).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(IMPORT)]
      .map((match) => ({ from: path.relative(layout, file), to: path.relative(layout, path.resolve(path.dirname(file), match[1])) }))
      .filter((e) => !e.to.startsWith('..'))); // outside the engine: the test above
    expect(edges.length).to.be.above(40);
    expect(edges.filter((e) => layoutStage(e.from) === undefined || layoutStage(e.to) === undefined)
      .map((e) => `${e.from} imports ${e.to}: name its stage in LAYOUT_STAGES`)).to.equal([]);
    expect(laterStageImports(edges)).to.equal([]);
    // Outside a stage's folder, only its index (and the tests' entry) are imported.
    const intoFolders = edges.filter((e) => e.to.includes(path.sep) && path.dirname(e.to) !== path.dirname(e.from)
      && path.basename(e.to) !== 'index.js' && e.from !== 'testing.js');
    expect(intoFolders.map((e) => `${e.from} imports ${e.to}`)).to.equal([]);
  });

  it("the workers' folders import each other without a cycle (the layout engine and the model: one way)", () => {
    const workers = path.join(dist, 'workers');
    const edges: Edge[] = [];
    for (const file of filesIn(workers).filter(hasSource)) {
      const from = path.relative(workers, file).split(path.sep)[0]!;
      for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const target = path.relative(workers, path.resolve(path.dirname(file), match[1]));
        const to = target.split(path.sep)[0]!;
        const inAFolder = !target.startsWith('..') && target.includes(path.sep);
        if (inAFolder && to !== from) edges.push({ from, to, file: path.relative(dist, file), target });
      }
    }
    expect(edges.filter((e) => e.from === 'layout' || e.to === 'layout').length).to.be.above(0);
    expect(findCycle(edges), 'an import cycle between folders of workers/').to.be.undefined();
  });

  it('the stage check sees an import from a later stage into an earlier one', () => {
    expect(laterStageImports([{ from: 'structure.js', to: 'aligned-tables/index.js' }])).to.equal([]);
    expect(laterStageImports([{ from: 'reading-regions/gutters.js', to: 'structure.js' }]))
      .to.equal(['reading-regions/gutters.js (reading-regions) imports structure.js (structure), a later stage']);
    expect(laterStageImports([{ from: 'rows.js', to: 'fragments.js' }]))
      .to.equal(['rows.js (shared) imports fragments.js (fragments), a later stage']);
  });

  it('the cycle check sees a cycle when there is one', () => {
    const edge = (from: string, to: string): Edge => ({ from, to, file: `${from}/a.js`, target: `${to}/b.js` });
    expect(findCycle([edge('core', 'tools'), edge('tools', 'checks')])).to.be.undefined();
    expect(findCycle([edge('core', 'tools'), edge('tools', 'checks'), edge('checks', 'core')])).to.equal(['core', 'tools', 'checks', 'core']);
  });
});
