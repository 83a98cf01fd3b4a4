// The source folders are layers: each imports only the layers below it, at run time (static
// imports, re-exports and dynamic import() in the compiled JavaScript; type-only imports are
// erased). A cycle between folders, or an import upwards, fails here with the file that made it.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const root = path.resolve(dist, '..');

/** Lowest first. The local chains stand beside the service: only server/ loads them, and only in dev mode. */
const LAYERS = ['core', 'tools', 'checks', 'operations', 'workers', 'devchains', 'server', 'bin'] as const;

function filesIn(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => (e.isDirectory() ? filesIn(path.join(dir, e.name)) : e.name.endsWith('.js') ? [path.join(dir, e.name)] : []));
}

/** Compiled output whose source still exists: a build over an older checkout leaves files behind. */
function hasSource(file: string): boolean {
  return existsSync(path.join(root, path.relative(dist, file)).replace(/\.js$/, '.ts'));
}

const IMPORT = /(?:^\s*import\s[^'"]*?from\s*|^\s*import\s*|^\s*export\s[^'"]*?from\s*|\bimport\(\s*)['"](\.{1,2}\/[^'"]+)['"]/gm;

interface Edge { from: string; to: string; file: string; target: string }

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

  it('the cycle check sees a cycle when there is one', () => {
    const edge = (from: string, to: string): Edge => ({ from, to, file: `${from}/a.js`, target: `${to}/b.js` });
    expect(findCycle([edge('core', 'tools'), edge('tools', 'checks')])).to.be.undefined();
    expect(findCycle([edge('core', 'tools'), edge('tools', 'checks'), edge('checks', 'core')])).to.equal(['core', 'tools', 'checks', 'core']);
  });
});
