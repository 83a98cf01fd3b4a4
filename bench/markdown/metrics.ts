// The scores of opendataloader-bench, implemented here: NID (normalized indel distance on
// the whole text), TEDS (tree edit distance over HTML table trees) and MHS (tree edit
// distance over the flat list of headings with the content under each), each with an
// "-S" variant (text without tables; table structure only; heading levels only).

/** Length of the longest common subsequence, bit-parallel (Allison-Dix / Hyyrö), O(|a||b|/32). */
export function lcsLength(a: string, b: string): number {
  if (a.length < b.length) [a, b] = [b, a];
  const m = b.length; // bits index the shorter string
  if (m === 0) return 0;
  const words = Math.ceil(m / 32);
  const masks = new Map<number, Uint32Array>();
  for (let i = 0; i < m; i++) {
    const c = b.charCodeAt(i);
    let mask = masks.get(c);
    if (!mask) { mask = new Uint32Array(words); masks.set(c, mask); }
    mask[i >>> 5]! |= 1 << (i & 31);
  }
  const v = new Uint32Array(words).fill(0xffffffff);
  const empty = new Uint32Array(words);
  for (let j = 0; j < a.length; j++) {
    const pm = masks.get(a.charCodeAt(j)) ?? empty;
    let carry = 0;
    for (let w = 0; w < words; w++) {
      const vw = v[w]!;
      const u = (vw & pm[w]!) >>> 0;
      const sum = vw + u + carry; // V + U with carry across words
      carry = sum > 0xffffffff ? 1 : 0;
      v[w] = ((sum >>> 0) | (vw & ~pm[w]!)) >>> 0;
    }
  }
  let zeros = 0;
  for (let i = 0; i < m; i++) if (!(v[i >>> 5]! & (1 << (i & 31)))) zeros++;
  return zeros;
}

/** 1 - indel(a, b) / (|a| + |b|): 1 for equal strings, 0 for nothing in common. */
export function indelSimilarity(a: string, b: string): number {
  if (!a.length && !b.length) return 1;
  return (2 * lcsLength(a, b)) / (a.length + b.length);
}

// ------------------------------------------------------------ parsing Markdown for scoring

export interface TableCell { text: string; colspan: number; rowspan: number }
export type Table = TableCell[][];

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
function decode(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (w, n: string) =>
    n[0] === '#' ? String.fromCodePoint(n[1] === 'x' || n[1] === 'X' ? parseInt(n.slice(2), 16) : parseInt(n.slice(1), 10)) : ENTITIES[n.toLowerCase()] ?? w);
}

function parseHtmlTable(html: string): Table {
  const rows: Table = [];
  for (const tr of html.match(/<tr\b[\s\S]*?<\/tr>/gi) ?? []) {
    const row: TableCell[] = [];
    for (const m of tr.matchAll(/<(td|th)\b([^>]*)>([\s\S]*?)<\/\1>/gi)) {
      const attrs = m[2] ?? '';
      row.push({
        text: decode((m[3] ?? '').replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ').trim(),
        colspan: Number(/colspan="?(\d+)/i.exec(attrs)?.[1] ?? 1),
        rowspan: Number(/rowspan="?(\d+)/i.exec(attrs)?.[1] ?? 1),
      });
    }
    rows.push(row);
  }
  return rows;
}

function splitPipeRow(line: string): string[] {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map((c) => c.replace(/\\\|/g, '|').trim());
}

function canonicalTable(t: Table): string {
  return '<table>' + t.map((r) => '<tr>' + r.map((c) =>
    `<td${c.colspan > 1 ? ` colspan="${c.colspan}"` : ''}${c.rowspan > 1 ? ` rowspan="${c.rowspan}"` : ''}>${c.text}</td>`).join('') + '</tr>').join('') + '</table>';
}

/**
 * Markdown with every table (HTML or pipe) replaced by one canonical HTML serialization,
 * so whitespace inside GT tables and the table syntax an engine chose do not count.
 */
export function canonicalize(md: string): { text: string; tables: Table[] } {
  const tables: Table[] = [];
  let text = md.replace(/<table\b[\s\S]*?<\/table>/gi, (html) => {
    const t = parseHtmlTable(html); tables.push(t); return `\n${canonicalTable(t)}\n`;
  });
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const next = lines[i + 1];
    if (/^\s*\|.*\|\s*$/.test(line) && next !== undefined && /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(next)) {
      const t: Table = [splitPipeRow(line).map((c) => ({ text: c, colspan: 1, rowspan: 1 }))];
      i += 1;
      while (i + 1 < lines.length && /^\s*\|.*\|\s*$/.test(lines[i + 1]!)) {
        i++;
        t.push(splitPipeRow(lines[i]!).map((c) => ({ text: c, colspan: 1, rowspan: 1 })));
      }
      const stripped = t.map((r) => r.map((c) => ({ ...c, text: stripEmphasis(c.text) })));
      tables.push(stripped);
      out.push(canonicalTable(stripped));
      continue;
    }
    out.push(line);
  }
  text = out.join('\n');
  return { text, tables };
}

const EMPHASIS = /(\*{1,3}|~~|__|_)(\S(?:[\s\S]*?\S)?)\1/g;
export function stripEmphasis(text: string): string {
  let prev;
  do { prev = text; text = text.replace(EMPHASIS, '$2'); } while (prev !== text);
  return text;
}

function normalizeText(text: string): string {
  return stripEmphasis(text).replace(/\s+/g, ' ').trim();
}

// ------------------------------------------------------------ tree edit distance (Zhang-Shasha)

export interface TreeNode { label: string; text: string; children: TreeNode[] }

function postorder(root: TreeNode) {
  const nodes: TreeNode[] = [];
  const leftmost: number[] = [];
  const walk = (n: TreeNode): number => {
    let first = -1;
    for (const c of n.children) { const l = walk(c); if (first < 0) first = l; }
    nodes.push(n);
    const index = nodes.length - 1;
    leftmost[index] = first < 0 ? index : first;
    return leftmost[index]!;
  };
  walk(root);
  const keyroots: number[] = [];
  const seen = new Set<number>();
  for (let i = nodes.length - 1; i >= 0; i--) if (!seen.has(leftmost[i]!)) { seen.add(leftmost[i]!); keyroots.push(i); }
  keyroots.sort((a, b) => a - b);
  return { nodes, leftmost, keyroots };
}

export function treeSize(n: TreeNode): number {
  return 1 + n.children.reduce((s, c) => s + treeSize(c), 0);
}

/** Zhang-Shasha tree edit distance, unit insert/delete, rename cost from `rename` in [0, 1]. */
export function treeEditDistance(a: TreeNode, b: TreeNode, rename: (x: TreeNode, y: TreeNode) => number): number {
  const A = postorder(a), B = postorder(b);
  const n = A.nodes.length, m = B.nodes.length;
  const td = Array.from({ length: n }, () => new Float64Array(m));
  for (const i of A.keyroots) for (const j of B.keyroots) {
    const li = A.leftmost[i]!, lj = B.leftmost[j]!;
    const rows = i - li + 2, cols = j - lj + 2;
    const fd = Array.from({ length: rows }, () => new Float64Array(cols));
    for (let x = 1; x < rows; x++) fd[x]![0] = fd[x - 1]![0]! + 1;
    for (let y = 1; y < cols; y++) fd[0]![y] = fd[0]![y - 1]! + 1;
    for (let x = 1; x < rows; x++) for (let y = 1; y < cols; y++) {
      const ai = li + x - 1, bj = lj + y - 1;
      if (A.leftmost[ai] === li && B.leftmost[bj] === lj) {
        fd[x]![y] = Math.min(fd[x - 1]![y]! + 1, fd[x]![y - 1]! + 1, fd[x - 1]![y - 1]! + rename(A.nodes[ai]!, B.nodes[bj]!));
        td[ai]![bj] = fd[x]![y]!;
      } else {
        const px = A.leftmost[ai]! - li, py = B.leftmost[bj]! - lj;
        fd[x]![y] = Math.min(fd[x - 1]![y]! + 1, fd[x]![y - 1]! + 1, fd[px]![py]! + td[ai]![bj]!);
      }
    }
  }
  return td[n - 1]![m - 1]!;
}

function tablesTree(tables: Table[]): TreeNode {
  return {
    label: 'root', text: '', children: tables.map((t) => ({
      label: 'table', text: '', children: t.map((r) => ({
        label: 'tr', text: '', children: r.map((c) => ({ label: `td:${c.colspan}:${c.rowspan}`, text: normalizeText(c.text), children: [] })),
      })),
    })),
  };
}

function similarityScore(a: TreeNode, b: TreeNode, structureOnly: boolean): number {
  const dist = treeEditDistance(a, b, (x, y) => {
    if (x.label !== y.label) return 1;
    if (structureOnly) return 0;
    return 1 - indelSimilarity(x.text, y.text);
  });
  return Math.max(0, 1 - dist / Math.max(treeSize(a), treeSize(b), 1));
}

interface Heading { level: number; text: string; content: string }

function headingsOf(text: string): { before: string; headings: Heading[] } {
  const headings: Heading[] = [];
  let before = '';
  for (const line of text.split('\n')) {
    const m = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (m) { headings.push({ level: m[1]!.length, text: normalizeText(m[2]!), content: '' }); continue; }
    const last = headings[headings.length - 1];
    if (last) last.content += ` ${line}`; else before += ` ${line}`;
  }
  for (const h of headings) h.content = normalizeText(h.content);
  return { before: normalizeText(before), headings };
}

function headingTree(text: string): TreeNode {
  const { before, headings } = headingsOf(text);
  return {
    label: 'root', text: '', children: [
      ...(before ? [{ label: 'content', text: before, children: [] }] : []),
      ...headings.map((h) => ({ label: `h${h.level}`, text: h.text, children: [{ label: 'content', text: h.content, children: [] }] })),
    ],
  };
}

export interface PageScores {
  nid: number; nidS: number;
  teds: number | null; tedsS: number | null;
  mhs: number | null; mhsS: number | null;
}

/** All six scores of one predicted page against its ground truth (null where the GT has no tables or headings). */
export function scorePage(gtMarkdown: string, predMarkdown: string): PageScores {
  const gt = canonicalize(gtMarkdown);
  const pred = canonicalize(predMarkdown);
  const noTables = (t: string) => t.replace(/<table>[\s\S]*?<\/table>/g, ' ');
  const nid = indelSimilarity(normalizeText(gt.text), normalizeText(pred.text));
  const nidS = indelSimilarity(normalizeText(noTables(gt.text)), normalizeText(noTables(pred.text)));
  let teds: number | null = null, tedsS: number | null = null;
  if (gt.tables.length) {
    const a = tablesTree(gt.tables), b = tablesTree(pred.tables);
    teds = similarityScore(a, b, false);
    tedsS = similarityScore(a, b, true);
  }
  let mhs: number | null = null, mhsS: number | null = null;
  const gtHeadings = headingsOf(gt.text).headings;
  if (gtHeadings.length) {
    const a = headingTree(noTables(gt.text)), b = headingTree(noTables(pred.text));
    mhs = similarityScore(a, b, false);
    mhsS = similarityScore(a, b, true);
  }
  return { nid, nidS, teds, tedsS, mhs, mhsS };
}

// ------------------------------------------------------------ table cells (cell F1)

/** A table as /v1/pdf/tables returns it. */
export interface ShapedTable { headers: string[]; rows: string[][] }

export interface CellCounts {
  /** Cells found in the right place with the right text. */
  matched: number;
  /** Non-empty cells the engine returned; non-empty cells in the ground truth. */
  predicted: number;
  truth: number;
  /** Tables the engine returned on a page whose ground truth has none. */
  spurious: number;
}

function cellText(text: string): string {
  // Markdown-born cells may carry emphasis, link syntax or escaped pipes; the endpoint's never do.
  return stripEmphasis(text.normalize('NFKC').replace(/\\\|/g, '|').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')).replace(/\s+/g, ' ').trim();
}

/** The non-empty cells of a table as a multiset of "row, column, text" keys; the header row is row 0. */
function cellKeys(table: ShapedTable): Map<string, number> {
  const keys = new Map<string, number>();
  [table.headers, ...table.rows].forEach((row, r) => row.forEach((cell, c) => {
    const text = cellText(cell);
    if (!text) return;
    const key = `${r}\u0000${c}\u0000${text}`;
    keys.set(key, (keys.get(key) ?? 0) + 1);
  }));
  return keys;
}

function overlap(a: Map<string, number>, b: Map<string, number>): number {
  let n = 0;
  for (const [key, count] of a) n += Math.min(count, b.get(key) ?? 0);
  return n;
}

const size = (keys: Map<string, number>) => [...keys.values()].reduce((n, c) => n + c, 0);

/**
 * Cell counts of one page: each predicted table is paired with at most one ground-truth table
 * (greedily, the pair sharing the most cells first), and a cell counts as matched when its
 * row, column and normalised text are the same in the pair. Cell F1 over any set of pages is
 * 2PR / (P + R) with P = matched / predicted and R = matched / truth.
 */
export function cellCounts(truth: readonly ShapedTable[], predicted: readonly ShapedTable[]): CellCounts {
  const t = truth.map(cellKeys), p = predicted.map(cellKeys);
  const pairs: Array<{ i: number; j: number; n: number }> = [];
  t.forEach((a, i) => p.forEach((b, j) => { const n = overlap(a, b); if (n > 0) pairs.push({ i, j, n }); }));
  pairs.sort((x, y) => y.n - x.n);
  const usedT = new Set<number>(), usedP = new Set<number>();
  let matched = 0;
  for (const { i, j, n } of pairs) {
    if (usedT.has(i) || usedP.has(j)) continue;
    usedT.add(i); usedP.add(j); matched += n;
  }
  const total = (keys: typeof p) => keys.reduce((n, k) => n + size(k), 0);
  return { matched, predicted: total(p), truth: total(t), spurious: truth.length ? 0 : predicted.length };
}

export function cellF1(c: Pick<CellCounts, 'matched' | 'predicted' | 'truth'>): { precision: number; recall: number; f1: number } {
  const precision = c.predicted ? c.matched / c.predicted : 0;
  const recall = c.truth ? c.matched / c.truth : 0;
  return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 };
}
