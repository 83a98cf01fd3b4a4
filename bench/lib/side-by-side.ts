// Two ways of doing the same thing, measured in the same run: one warm-up each, then pairs in
// alternating order (A B, B A, A B, ...) so that drift in the machine's load falls on both sides.
import { ratio, summarize, type Summary } from './stats.js';

export interface Side {
  label: string;
  /** Called before every run of this side (for example to set process-wide thread settings). */
  prepare?(): void;
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
  return { ms: performance.now() - started, parts: parts ?? {} };
}

function collect(side: Side, runs: Array<{ ms: number; parts: Record<string, number> }>): SideResult {
  const names = new Set(runs.flatMap((r) => Object.keys(r.parts)));
  const parts: Record<string, Summary> = {};
  for (const name of names) parts[name] = summarize(runs.map((r) => r.parts[name]).filter((v): v is number => v !== undefined));
  const samples = runs.map((r) => Math.round(r.ms * 100) / 100);
  return { label: side.label, ms: summarize(samples), samples, parts };
}

export async function compare(name: string, a: Side, b: Side, options: CompareOptions = {}): Promise<Comparison> {
  const { warmup = 1, runs = 5, maxMs = Infinity, minRuns = 3 } = options;
  for (let i = 0; i < warmup; i++) {
    await timed(a);
    await timed(b);
  }
  const started = performance.now();
  const ofA: Array<{ ms: number; parts: Record<string, number> }> = [];
  const ofB: typeof ofA = [];
  for (let i = 0; i < runs; i++) {
    if (i >= minRuns && performance.now() - started > maxMs) break;
    if (i % 2 === 0) {
      ofA.push(await timed(a));
      ofB.push(await timed(b));
    } else {
      ofB.push(await timed(b));
      ofA.push(await timed(a));
    }
  }
  const resultA = collect(a, ofA);
  const resultB = collect(b, ofB);
  return {
    name, a: resultA, b: resultB,
    ratio: ratio(resultA.ms.median, resultB.ms.median),
    p95Ratio: ratio(resultA.ms.p95, resultB.ms.p95),
    warmup, pairs: ofA.length,
  };
}
