// Summaries of repeated timings. Medians and percentiles, not means: a shared machine produces
// occasional long outliers that say nothing about the code being measured.

export interface Summary {
  n: number;
  median: number;
  p95: number;
  q1: number;
  q3: number;
  /** Interquartile range, q3 - q1: the spread reported next to every median. */
  iqr: number;
  min: number;
  max: number;
}

/** Linear interpolation between closest ranks (the common "type 7" definition). */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (position - below);
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

export function summarize(values: readonly number[]): Summary {
  const q1 = quantile(values, 0.25);
  const q3 = quantile(values, 0.75);
  return {
    n: values.length,
    median: round(median(values)),
    p95: round(quantile(values, 0.95)),
    q1: round(q1),
    q3: round(q3),
    iqr: round(q3 - q1),
    min: round(values.length ? Math.min(...values) : Number.NaN),
    max: round(values.length ? Math.max(...values) : Number.NaN),
  };
}

/** a / b, rounded for reports; undefined when b is not a positive number. */
export function ratio(a: number, b: number): number | undefined {
  return b > 0 && Number.isFinite(a) ? Math.round((a / b) * 1000) / 1000 : undefined;
}

export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
