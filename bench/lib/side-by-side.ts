// Two ways of doing the same thing, measured in the same run: one warm-up each, then pairs in
// alternating order (A B, B A, A B, ...) so that drift in the machine's load falls on both sides.
// Reference sides may join each round (A B C, C B A, ...).
import { ratio, summarize, type Summary } from './stats.js';

export interface Side {
  label: string;
  /** Called before every run of this side (for example to set process-wide thread settings). */
  prepare?(): void;
  /** Called after every run, outside the timing (for example to remove what the run wrote). */
  after?(): void;
  /** Does the work once; may return named sub-timings in ms (payment, processing, ...). */
  run(): Promise<Record<string, number> | void>;
}

export interface SideResult {
  label: string;
  ms: Summary;
  samples: number[];
  /** Sub-timings summarised by name, when the side reports them. */
  parts: Record<string, Summary>;
}

export interface Comparison {
  name: string;
  a: SideResult;
  b: SideResult;
  /** The `also` sides, measured in the same rounds. */
  also: SideResult[];
  /** median(A) / median(B). */
  ratio: number | undefined;
  /** p95(A) / p95(B). */
  p95Ratio: number | undefined;
  warmup: number;
  pairs: number;
}

export interface CompareOptions {
  warmup?: number;
  runs?: number;
  /** Stop adding pairs after this long (at least minRuns pairs are always made). */
  maxMs?: number;
  minRuns?: number;
}

async function timed(side: Side): Promise<{ ms: number; parts: Record<string, number> }> {
  side.prepare?.();
  const started = performance.now();
  const parts = await side.run();
  const ms = performance.now() - started;
  side.after?.();
  return { ms, parts: parts ?? {} };
}

function collect(side: Side, runs: Array<{ ms: number; parts: Record<string, number> }>): SideResult {
  const names = new Set(runs.flatMap((r) => Object.keys(r.parts)));
  const parts: Record<string, Summary> = {};
  for (const name of names) parts[name] = summarize(runs.map((r) => r.parts[name]).filter((v): v is number => v !== undefined));
  const samples = runs.map((r) => Math.round(r.ms * 100) / 100);
  return { label: side.label, ms: summarize(samples), samples, parts };
}

/**
 * Measures a against b. `also` sides (for example a reference floor) run in every round too, so
 * that they see the same moments of the machine's load; the order reverses every round.
 */
export async function compare(name: string, a: Side, b: Side, options: CompareOptions = {}, also: Side[] = []): Promise<Comparison> {
  const { warmup = 1, runs = 5, maxMs = Infinity, minRuns = 3 } = options;
  const sides = [a, b, ...also];
  for (let i = 0; i < warmup; i++) {
    for (const side of sides) await timed(side);
  }
  const started = performance.now();
  const runsOf: Array<Array<{ ms: number; parts: Record<string, number> }>> = sides.map(() => []);
  for (let i = 0; i < runs; i++) {
    if (i >= minRuns && performance.now() - started > maxMs) break;
    const order = sides.map((_, k) => k);
    if (i % 2 === 1) order.reverse();
    for (const k of order) runsOf[k].push(await timed(sides[k]));
  }
  const [resultA, resultB, ...others] = sides.map((side, k) => collect(side, runsOf[k]));
  return {
    name, a: resultA, b: resultB, also: others,
    ratio: ratio(resultA.ms.median, resultB.ms.median),
    p95Ratio: ratio(resultA.ms.p95, resultB.ms.p95),
    warmup, pairs: runsOf[0].length,
  };
}
