// A tiny SVG chart writer for the report: grouped horizontal bars and a labelled scatter plot.
// Plain strings, no dependency; the charts only need to be readable on GitHub.

const COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
const FONT = 'font-family="DejaVu Sans, Arial, sans-serif"';

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function formatNumber(value: number): string {
  if (value === 0) return '0';
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toPrecision(2);
}

function legend(names: readonly string[], x: number, y: number): string {
  return names.map((name, i) => `<rect x="${x}" y="${y + i * 16}" width="11" height="11" fill="${COLOURS[i % COLOURS.length]}"/>`
    + `<text x="${x + 16}" y="${y + i * 16 + 10}" font-size="11" ${FONT}>${escape(name)}</text>`).join('');
}

export interface BarSeries {
  name: string;
  values: ReadonlyArray<number | undefined>;
}

export interface BarChartOptions {
  title: string;
  /** Axis caption, e.g. "ms (median, this machine)". */
  unit: string;
  categories: readonly string[];
  series: readonly BarSeries[];
  /** Logarithmic axis for values spanning orders of magnitude. */
  log?: boolean;
  width?: number;
}

/** One row per category, one bar per series, the value printed at the end of each bar. */
export function barChart(options: BarChartOptions): string {
  const { title, unit, categories, series, log = false, width = 760 } = options;
  const labelWidth = Math.min(240, 12 + 7 * Math.max(...categories.map((c) => c.length), 4));
  const barHeight = 13;
  const groupHeight = series.length * barHeight + 10;
  const top = 40 + series.length * 16;
  const plotWidth = width - labelWidth - 70;
  const height = top + categories.length * groupHeight + 40;
  const values = series.flatMap((s) => s.values).filter((v): v is number => v !== undefined && Number.isFinite(v) && v > 0);
  const max = values.length ? Math.max(...values) : 1;
  const min = values.length ? Math.min(...values) : 1;
  const low = log ? 10 ** Math.floor(Math.log10(min)) : 0;
  const high = log ? 10 ** Math.ceil(Math.log10(max)) : max * 1.05;
  const scale = (v: number) => (log ? (Math.log10(v) - Math.log10(low)) / (Math.log10(high) - Math.log10(low)) : v / high) * plotWidth;

  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`);
  parts.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  parts.push(`<text x="10" y="20" font-size="14" font-weight="bold" ${FONT}>${escape(title)}</text>`);
  parts.push(legend(series.map((s) => s.name), labelWidth, 30));
  const ticks = log
    ? Array.from({ length: Math.round(Math.log10(high / low)) + 1 }, (_, i) => low * 10 ** i)
    : Array.from({ length: 5 }, (_, i) => (high * i) / 4);
  for (const tick of ticks) {
    const x = labelWidth + scale(tick);
    parts.push(`<line x1="${x}" y1="${top - 4}" x2="${x}" y2="${height - 34}" stroke="#ddd"/>`);
    parts.push(`<text x="${x}" y="${height - 22}" font-size="10" text-anchor="middle" ${FONT}>${formatNumber(tick)}</text>`);
  }
  parts.push(`<text x="${labelWidth + plotWidth / 2}" y="${height - 6}" font-size="11" text-anchor="middle" ${FONT}>${escape(unit)}${log ? ' (log scale)' : ''}</text>`);
  categories.forEach((category, row) => {
    const y0 = top + row * groupHeight;
    parts.push(`<text x="${labelWidth - 6}" y="${y0 + groupHeight / 2}" font-size="11" text-anchor="end" ${FONT}>${escape(category)}</text>`);
    series.forEach((s, i) => {
      const v = s.values[row];
      const y = y0 + i * barHeight;
      if (v === undefined || !Number.isFinite(v) || v <= 0) {
        parts.push(`<text x="${labelWidth + 4}" y="${y + 10}" font-size="10" fill="#888" ${FONT}>n/a</text>`);
        return;
      }
      const w = Math.max(1, scale(v));
      parts.push(`<rect x="${labelWidth}" y="${y}" width="${w.toFixed(1)}" height="${barHeight - 2}" fill="${COLOURS[i % COLOURS.length]}"/>`);
      parts.push(`<text x="${labelWidth + w + 4}" y="${y + 10}" font-size="10" ${FONT}>${formatNumber(v)}</text>`);
    });
  });
  parts.push('</svg>');
  return parts.join('\n');
}

export interface ScatterPoint {
  x: number;
  y: number;
  series: string;
  label?: string;
}

export interface ScatterOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  points: readonly ScatterPoint[];
  xMin?: number;
  xMax?: number;
  yMin?: number;
  yMax?: number;
  width?: number;
  height?: number;
}

export function scatterChart(options: ScatterOptions): string {
  const { title, xLabel, yLabel, points, width = 760, height = 460 } = options;
  const names = [...new Set(points.map((p) => p.series))];
  const left = 60, right = 170, top = 36, bottom = 50;
  const xs = points.map((p) => p.x), ys = points.map((p) => p.y);
  const xMin = options.xMin ?? Math.min(0, ...xs), xMax = options.xMax ?? Math.max(1, ...xs) * 1.05;
  const yMin = options.yMin ?? Math.min(...ys, 0), yMax = options.yMax ?? Math.max(...ys, 1) * 1.02;
  const px = (x: number) => left + ((x - xMin) / (xMax - xMin || 1)) * (width - left - right);
  const py = (y: number) => height - bottom - ((y - yMin) / (yMax - yMin || 1)) * (height - top - bottom);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`);
  parts.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  parts.push(`<text x="10" y="20" font-size="14" font-weight="bold" ${FONT}>${escape(title)}</text>`);
  for (let i = 0; i <= 4; i++) {
    const x = xMin + ((xMax - xMin) * i) / 4, y = yMin + ((yMax - yMin) * i) / 4;
    parts.push(`<line x1="${px(x)}" y1="${top}" x2="${px(x)}" y2="${height - bottom}" stroke="#eee"/>`);
    parts.push(`<text x="${px(x)}" y="${height - bottom + 14}" font-size="10" text-anchor="middle" ${FONT}>${formatNumber(x)}</text>`);
    parts.push(`<line x1="${left}" y1="${py(y)}" x2="${width - right}" y2="${py(y)}" stroke="#eee"/>`);
    parts.push(`<text x="${left - 4}" y="${py(y) + 3}" font-size="10" text-anchor="end" ${FONT}>${formatNumber(y)}</text>`);
  }
  parts.push(`<rect x="${left}" y="${top}" width="${width - left - right}" height="${height - top - bottom}" fill="none" stroke="#999"/>`);
  parts.push(`<text x="${left + (width - left - right) / 2}" y="${height - 12}" font-size="11" text-anchor="middle" ${FONT}>${escape(xLabel)}</text>`);
  parts.push(`<text transform="translate(14 ${top + (height - top - bottom) / 2}) rotate(-90)" font-size="11" text-anchor="middle" ${FONT}>${escape(yLabel)}</text>`);
  for (const p of points) {
    const colour = COLOURS[names.indexOf(p.series) % COLOURS.length];
    parts.push(`<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="4" fill="${colour}" fill-opacity="0.8"><title>${escape(`${p.series}${p.label ? ` ${p.label}` : ''}: ${formatNumber(p.x)}, ${formatNumber(p.y)}`)}</title></circle>`);
    if (p.label) parts.push(`<text x="${(px(p.x) + 6).toFixed(1)}" y="${(py(p.y) - 4).toFixed(1)}" font-size="9" fill="#444" ${FONT}>${escape(p.label)}</text>`);
  }
  parts.push(legend(names, width - right + 12, top));
  parts.push('</svg>');
  return parts.join('\n');
}
