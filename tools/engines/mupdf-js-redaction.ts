// Redaction, run in the MuPDF.js child process (./mupdf-js-process.ts). Text is found as two
// readers extract it: MuPDF's structured text and poppler's `pdftotext -bbox-layout` (a font's
// ToUnicode map one of them reads and the other drops, as MuPDF drops a whole CMap over one entry
// it cannot parse, leaves the text readable to the other). Every match either reader finds is
// boxed and MuPDF removes the glyphs under the box. The written file is read again by both, and
// what they still find is redacted again, a bounded number of times, or the job fails: a file is
// never returned with a match either reader extracts. Embedded files are searched and redacted
// where they hold text (PDF, plain text, Office packages) or removed.
import { readFileSync, writeFileSync } from 'node:fs';
import { runTool } from '../process/run-tool.js';
import path from 'node:path';
import * as mupdf from 'mupdf';
import type { RedactionReport, RedactionRequest } from './mupdf-js.js';
import { redactOfficePackage } from './office-text-redaction.js';

type Quad = [number, number, number, number, number, number, number, number];
type Rect = [number, number, number, number];

/** Passes over the written file before a match still found fails the job. */
const MAX_PASSES = 3;
/** Embedded files inside embedded files inside the document are searched; deeper ones are removed. */
const MAX_ATTACHMENT_DEPTH = 2;
/** An embedded file larger than this (decoded) is removed rather than searched. */
const MAX_ATTACHMENT_BYTES = 64 * 1024 * 1024;

/** Thrown when a pass still finds a match: the job fails rather than return it. */
export class MatchesRemain extends Error {}
/** Thrown when pdftotext does not complete (cannot start, or passes the deadline). */
export class ReaderFailed extends Error {}

// ---------------------------------------------------------------- patterns

/** A literal as a pattern: special characters escaped, any run of white space matching any other. */
function literalPattern(text: string): string {
  return text.trim().split(/\s+/).map((word) => word.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('\\s+');
}

/** The linear-time engine's flags: global matching, no Unicode mode (it does not run in linear time). */
export function compilePatterns(request: RedactionRequest): RegExp[] {
  // eslint-disable-next-line no-invalid-regexp -- `l` is V8's linear-time flag (LINEAR_REGEXP_FLAG on this process's command line)
  return [...request.text.map(literalPattern), ...request.regex].map((p) => new RegExp(p, 'gl'));
}

/** Cuts every match of the patterns out of a string: what is left and how many matches went. */
function cutMatches(value: string, patterns: readonly RegExp[]): { left: string; cuts: number } {
  let left = value;
  let cuts = 0;
  for (const pattern of patterns) {
    pattern.lastIndex = 0;
    left = left.replace(pattern, (m) => { if (m.length > 0) cuts += 1; return ''; });
  }
  return { left, cuts };
}

/** Cuts every match out of a string; undefined when nothing matched. */
function cut(value: string, patterns: readonly RegExp[]): string | undefined {
  const { left, cuts } = cutMatches(value, patterns);
  return cuts === 0 ? undefined : left;
}

// ---------------------------------------------------------------- the two readings

/** A unit of a page's text (a UTF-16 unit) and where it is drawn; `upright` when its line runs left to right. */
interface Place { rect: Rect; line: number; upright: boolean }
/** A page's text as one reader extracts it, lines separated by a line break, and the places of each unit. */
interface Reading { text: string; places: Place[][] }

/** Joins a word hyphenated at a line's end as pdftotext joins it; otherwise ends the line. */
function endLine(reading: Reading): void {
  if (/\p{L}-$/u.test(reading.text)) {
    reading.text = reading.text.slice(0, -1);
    const hyphen = reading.places.pop()!;
    reading.places[reading.places.length - 1].push(...hyphen);
  } else {
    reading.text += '\n';
    reading.places.push([]);
  }
}

const union = (a: Rect, b: Rect): Rect => [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])];

const quadRect = (q: Quad): Rect => {
  const xs = [q[0], q[2], q[4], q[6]];
  const ys = [q[1], q[3], q[5], q[7]];
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
};

/** A page's text as MuPDF reads it. A word hyphenated at a line's end is joined ("rhon-" and "cus" read "rhoncus"). */
function mupdfReading(page: mupdf.PDFPage): Reading {
  const reading: Reading = { text: '', places: [] };
  let line = 0;
  let upright = true;
  const stext = page.toStructuredText('preserve-whitespace');
  stext.walk({
    beginLine(_bbox: unknown, _wmode: unknown, direction: [number, number]) { upright = Math.abs(direction[0]) >= Math.abs(direction[1]); },
    onChar(c: string, _origin: unknown, _font: unknown, _size: unknown, quad: Quad) {
      for (let i = 0; i < c.length; i++) reading.places.push([{ rect: quadRect(quad), line, upright }]);
      reading.text += c;
    },
    endLine() { endLine(reading); line += 1; },
  });
  stext.destroy();
  return reading;
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: '\'' };
const unescapeXml = (s: string) => s.replace(/&(amp|lt|gt|quot|apos|#x[0-9a-f]+|#\d+);/gi, (m, e: string) => {
  if (e[0] !== '#') return XML_ENTITIES[e.toLowerCase()] ?? m;
  const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
  return code <= 0x10ffff ? String.fromCodePoint(code) : m;
});

/**
 * Every page's text as poppler reads it (`pdftotext -bbox-layout`): words in lines, with their
 * boxes in points from the top-left corner of the page as displayed. Poppler gives a box per
 * word; a character's box is its share of the word's width (the whole box when the word runs
 * up or down the page). Poppler ignores UserUnit; `scale` gives each page's.
 */
async function popplerReadings(file: string, scale: (page: number) => number, deadline: number): Promise<Reading[]> {
  const out = `${file}.html`;
  const options = { cwd: path.dirname(file), timeoutMs: Math.max(1000, deadline - Date.now()) };
  const run = await runTool('pdftotext', ['-bbox-layout', '-enc', 'UTF-8', file, out], options)
    .catch(() => undefined);
  if (!run) throw new ReaderFailed('pdftotext did not complete');
  // A file poppler cannot open (an encryption it refuses) holds no text for its readers.
  if (run.exitCode !== 0) return [];
  const html = readFileSync(out, 'utf8');
  const readings: Reading[] = [];
  let reading: Reading | undefined;
  let unit = 1;
  let line = 0;
  let wordsInLine = 0;
  const tags = /<page\b|<\/line>|<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">([^<]*)<\/word>/g;
  for (const tag of html.matchAll(tags)) {
    if (tag[0] === '<page') {
      reading = { text: '', places: [] };
      readings.push(reading);
      unit = scale(readings.length - 1);
      continue;
    }
    if (!reading) continue;
    if (tag[0] === '</line>') {
      if (wordsInLine > 0) endLine(reading);
      line += 1;
      wordsInLine = 0;
      continue;
    }
    const [x0, y0, x1, y1] = tag.slice(1, 5).map((v) => Number(v) * unit);
    const word = unescapeXml(tag[5]);
    if (wordsInLine > 0) { reading.text += ' '; reading.places.push([]); }
    const upright = x1 - x0 >= y1 - y0 || word.length === 1;
    const step = (x1 - x0) / word.length;
    for (let i = 0; i < word.length; i++) {
      const rect: Rect = upright ? [x0 + i * step, y0, x0 + (i + 1) * step, y1] : [x0, y0, x1, y1];
      reading.places.push([{ rect, line, upright }]);
    }
    reading.text += word;
    wordsInLine += 1;
  }
  return readings;
}

/**
 * The boxes of units [start, end), one per line, cut to the middle half of the line's height: a
 * glyph's box is as tall as its font's ascent and descent, which reaches into the lines above and
 * below when they are set close, and MuPDF removes every glyph a redaction touches. The middle
 * half still crosses every glyph of the match and no glyph of its neighbours.
 */
function matchRects(reading: Reading, start: number, end: number): Rect[] {
  const byLine = new Map<number, { rect: Rect; upright: boolean }>();
  for (let i = start; i < end; i++) {
    for (const { rect, line, upright } of reading.places[i]) {
      const seen = byLine.get(line)?.rect;
      byLine.set(line, { upright, rect: seen ? union(seen, rect) : rect });
    }
  }
  return [...byLine.values()].map(({ rect: [x0, y0, x1, y1], upright }) => {
    if (!upright) {
      const inset = (x1 - x0) / 4;
      return [x0 + inset, y0, x1 - inset, y1];
    }
    const inset = (y1 - y0) / 4;
    return [x0, y0 + inset, x1, y1 - inset];
  });
}

/** Each match of the patterns in a reading: the boxes it covers. */
function findMatches(reading: Reading | undefined, patterns: readonly RegExp[]): Rect[][] {
  if (!reading) return [];
  const found: Rect[][] = [];
  for (const pattern of patterns) {
    pattern.lastIndex = 0;
    for (const match of reading.text.matchAll(pattern)) {
      if (match[0].length === 0) continue;
      const rects = matchRects(reading, match.index, match.index + match[0].length);
      if (rects.length > 0) found.push(rects);
    }
  }
  return found;
}

const overlaps = (a: Rect, b: Rect) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];

/**
 * The matches on a page by both readers, each once: a match poppler finds where MuPDF found one
 * too (their boxes overlap) is the same match.
 */
function pageMatches(mupdfFound: Rect[][], popplerFound: Rect[][]): Rect[][] {
  const merged = [...mupdfFound];
  for (const match of popplerFound) {
    if (!mupdfFound.some((seen) => seen.some((a) => match.some((b) => overlaps(a, b))))) merged.push(match);
  }
  return merged;
}

// ---------------------------------------------------------------- pages

const rectQuad = ([x0, y0, x1, y1]: Rect): Quad => [x0, y0, x1, y0, x0, y1, x1, y1];

/**
 * The document written, as bytes of its own: MuPDF's buffer is a view of WebAssembly memory that
 * later work reuses once the buffer is collected.
 */
function written(doc: mupdf.PDFDocument, options: string): Uint8Array {
  const buffer = doc.saveToBuffer(options);
  const bytes = buffer.asUint8Array().slice();
  buffer.destroy();
  return bytes;
}

/** Annotations whose appearance is drawn over the page, not its content: a redaction does not reach into them. */
const KEPT_ANNOTATIONS = new Set(['Redact', 'Link', 'Popup', 'Widget']);

/**
 * Removes the annotations (stamps, free text, notes, markup) that lie over a match: the match may
 * be drawn by the annotation's own appearance, which a redaction of the page content leaves as it
 * is, and markup over a removed match shows where it was. Form fields stay: their values lose the
 * match elsewhere and are drawn again.
 */
function removeAnnotationsOver(page: mupdf.PDFPage, rects: readonly Rect[]): void {
  if (rects.length === 0) return;
  for (const annot of page.getAnnotations()) {
    if (KEPT_ANNOTATIONS.has(annot.getType())) continue;
    const bounds = annot.getBounds() as Rect;
    if (rects.some((r) => overlaps(r, bounds))) page.deleteAnnotation(annot);
  }
}

/** Poppler's readings of the document as it stands (`bytes` when they are already written), written to `file` first. */
async function readWithPoppler(doc: mupdf.PDFDocument, bytes: Uint8Array | undefined, file: string, deadline: number): Promise<Reading[]> {
  // Decrypted for the first reading: poppler reads the text MuPDF reads, whatever the encryption.
  writeFileSync(file, bytes ?? written(doc, 'decrypt'));
  const units: number[] = [];
  for (let index = 0; index < doc.countPages(); index++) {
    const unit = doc.findPage(index).get('UserUnit');
    units.push(unit.isNumber() && unit.asNumber() > 0 ? unit.asNumber() : 1);
  }
  return popplerReadings(file, (i) => units[i] ?? 1, deadline);
}

/** Redacts every match either reader finds on every page; the matches per page. */
async function redactPageText(
  doc: mupdf.PDFDocument, patterns: readonly RegExp[], { scratch, deadline }: Omit<Nesting, 'depth'>,
  again?: { bytes: Uint8Array; changed: ReadonlySet<number> },
): Promise<number[]> {
  const poppler = await readWithPoppler(doc, again?.bytes, scratch, deadline);
  const counts: number[] = [];
  for (let index = 0; index < doc.countPages(); index++) {
    const page = doc.loadPage(index);
    // Read again, a page MuPDF found nothing on and no redaction changed reads as it did.
    const byMupdf = !again || again.changed.has(index) ? findMatches(mupdfReading(page), patterns) : [];
    const matches = pageMatches(byMupdf, findMatches(poppler[index], patterns));
    for (const rects of matches) page.createAnnotation('Redact').setQuadPoints(rects.map(rectQuad));
    removeAnnotationsOver(page, matches.flat());
    // Paths only where a match covers them whole (a table rule through a name stays).
    if (matches.length > 0) {
      const { REDACT_IMAGE_PIXELS, REDACT_LINE_ART_REMOVE_IF_COVERED, REDACT_TEXT_REMOVE } = mupdf.PDFPage;
      page.applyRedactions(true, REDACT_IMAGE_PIXELS, REDACT_LINE_ART_REMOVE_IF_COVERED, REDACT_TEXT_REMOVE);
    }
    counts.push(matches.length);
    page.destroy();
  }
  return counts;
}

function redactAreas(doc: mupdf.PDFDocument, request: RedactionRequest): number[] {
  const counts: number[] = [];
  for (let index = 0; index < doc.countPages(); index++) {
    const areas = request.areas.filter((a) => a.page === index + 1);
    if (areas.length > 0) {
      const page = doc.loadPage(index);
      for (const a of areas) page.createAnnotation('Redact').setRect([a.x, a.y, a.x + a.width, a.y + a.height]);
      // Under an area nothing may remain: every path that reaches into it goes.
      const { REDACT_IMAGE_PIXELS, REDACT_LINE_ART_REMOVE_IF_TOUCHED, REDACT_TEXT_REMOVE } = mupdf.PDFPage;
      page.applyRedactions(true, REDACT_IMAGE_PIXELS, REDACT_LINE_ART_REMOVE_IF_TOUCHED, REDACT_TEXT_REMOVE);
      page.destroy();
    }
    counts.push(areas.length);
  }
  return counts;
}

// ---------------------------------------------------------------- elsewhere in the file

/** Calls fn on every dictionary and array of the document: each object, and those inside it. */
export function eachContainer(doc: mupdf.PDFDocument, fn: (container: mupdf.PDFObject, num: number) => void): void {
  const count = doc.countObjects();
  const visit = (obj: mupdf.PDFObject, num: number, depth: number) => {
    if (depth > 64 || !(obj.isDictionary() || obj.isStream() || obj.isArray())) return;
    fn(obj, num);
    obj.forEach((value) => { if (!value.isIndirect()) visit(value, num, depth + 1); });
  };
  // A stream answers as one only through its reference (a resolved stream reads as its dictionary).
  for (let num = 1; num < count; num++) visit(doc.newIndirect(num), num, 0);
}

/**
 * Every other copy of the redacted text: strings anywhere in the document's objects (the Info
 * dictionary, outline titles, annotation contents, form values and their defaults, names, file
 * specifications) and the XMP metadata lose each match. An annotation or form field whose strings
 * changed gets its appearance drawn again from what is left, so its old text is not kept in a
 * stale appearance.
 */
function redactElsewhere(doc: mupdf.PDFDocument, patterns: readonly RegExp[]): number {
  let cuts = 0;
  const changed = new Set<number>();
  const cutStrings = (holder: mupdf.PDFObject, num: number) => {
    holder.forEach((value, key) => {
      if (!value.isString()) return;
      const left = cut(value.asString(), patterns);
      if (left === undefined) return;
      holder.put(key, doc.newString(left));
      cuts += 1;
      changed.add(num);
    });
  };
  eachContainer(doc, (dict, num) => {
    cutStrings(dict, num);
    if (dict.isStream() && dict.get('Type').toString() === '/Metadata') {
      const xml = dict.readStream().asString();
      const left = cut(xml, patterns);
      if (left !== undefined) { dict.writeStream(left); cuts += 1; }
    }
  });
  // The trailer is not an object of its own: its Info is reached through the walk above.
  if (changed.size > 0) {
    for (let index = 0; index < doc.countPages(); index++) {
      const page = doc.loadPage(index);
      for (const annot of [...page.getAnnotations(), ...page.getWidgets()]) {
        const obj = annot.getObject();
        const num = obj.isIndirect() ? obj.asIndirect() : -1;
        const field = obj.get('Parent');
        const parent = field.isIndirect() ? field.asIndirect() : -1;
        if (!changed.has(num) && !changed.has(parent)) continue;
        obj.resolve().delete('AP');
        annot.update();
      }
      page.destroy();
    }
  }
  return cuts;
}

// ---------------------------------------------------------------- embedded files

export interface AttachmentCounts { redacted: number; removed: number }

/** Where an embedded file sits: how deep among embedded documents, the scratch file name of its level, the job's deadline. */
interface Nesting { depth: number; scratch: string; deadline: number }

/** Text whose bytes decode without loss: UTF-8, or UTF-16 with its byte order mark. */
function asText(bytes: Uint8Array): { text: string; encode(text: string): Uint8Array } | undefined {
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
    const big = bytes[0] === 0xfe;
    const body = Buffer.from(bytes.subarray(2));
    if (big) body.swap16();
    const text = body.toString('utf16le');
    return {
      text,
      encode: (t) => {
        const out = Buffer.from(t, 'utf16le');
        if (big) out.swap16();
        return Buffer.concat([Buffer.from(bytes.subarray(0, 2)), out]);
      },
    };
  }
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  // Binary data (a NUL, other control characters, bytes that are not UTF-8) is not text.
  const control = [...text].some((c) => { const code = c.charCodeAt(0); return code < 0x20 && !'\t\n\v\f\r\x1b'.includes(c); });
  if (text.includes('\ufffd') || control) return undefined;
  return { text, encode: (t) => Buffer.from(t, 'utf8') };
}

const isZip = (b: Uint8Array) => b.length > 4 && b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04;
const isPdf = (b: Uint8Array) => Buffer.from(b.subarray(0, 1024)).includes('%PDF-');

/**
 * The redacted bytes of one embedded file, and the matches cut from it; undefined when it cannot
 * be searched (an image, an archive, an encrypted or damaged PDF, one nested too deep): removed.
 */
async function redactAttachment(
  bytes: Uint8Array, request: RedactionRequest, patterns: readonly RegExp[], { depth, scratch, deadline }: Nesting,
): Promise<{ bytes: Uint8Array; redacted: number; removed: number } | undefined> {
  if (bytes.length > MAX_ATTACHMENT_BYTES) return undefined;
  if (isPdf(bytes)) {
    if (depth >= MAX_ATTACHMENT_DEPTH) return undefined;
    let inner: mupdf.PDFDocument | null;
    try {
      inner = mupdf.Document.openDocument(bytes, 'application/pdf').asPDF();
    } catch {
      return undefined;
    }
    if (!inner || inner.needsPassword()) return undefined;
    const { report, bytes: out } = await redactDocument(inner, { ...request, areas: [] }, `${scratch}-${depth}`, deadline, depth + 1);
    return { bytes: out, redacted: report.total + report.elsewhere + report.attachments.redacted, removed: report.attachments.removed };
  }
  if (isZip(bytes)) {
    const office = await redactOfficePackage(bytes, patterns, (part) => cutMatches(part, patterns));
    return office && { ...office, removed: 0 };
  }
  const text = asText(bytes);
  // RTF is text whose words control words may split ("Jane \\b Doe"): not searched as text, removed.
  if (!text || text.text.trimStart().startsWith('{\\rtf')) return undefined;
  const { left, cuts } = cutMatches(text.text, patterns);
  return { bytes: cuts > 0 ? text.encode(left) : bytes, redacted: cuts, removed: 0 };
}

/** The file specifications of the document that carry an embedded file (their /EF), by object number. */
function fileSpecs(doc: mupdf.PDFDocument): Map<number, mupdf.PDFObject> {
  const specs = new Map<number, mupdf.PDFObject>();
  for (let num = 1; num < doc.countObjects(); num++) {
    const obj = doc.newIndirect(num);
    if (obj.isDictionary() && obj.get('EF').isDictionary()) specs.set(num, obj);
  }
  return specs;
}

/**
 * Searches every embedded file and cuts its matches, or removes it: all of them when `attachments`
 * is "remove", and those that cannot be searched otherwise. A removed file leaves the EmbeddedFiles
 * tree, its file specification loses its stream, and a file attachment annotation showing it goes.
 */
async function redactAttachments(
  doc: mupdf.PDFDocument, request: RedactionRequest, patterns: readonly RegExp[], at: Nesting,
): Promise<AttachmentCounts> {
  const counts: AttachmentCounts = { redacted: 0, removed: 0 };
  const removed = new Set<number>();
  const done = new Set<number>();
  for (const [num, spec] of fileSpecs(doc)) {
    const ef = spec.get('EF');
    let keep = request.attachments !== 'remove';
    ef.forEach((stream) => {
      if (!stream.isStream()) keep = false;
    });
    if (keep) {
      const keys: string[] = [];
      ef.forEach((_value, key) => keys.push(String(key)));
      for (const key of keys) {
        const stream = ef.get(key);
        const streamNum = stream.isIndirect() ? stream.asIndirect() : -1;
        if (done.has(streamNum)) continue;
        done.add(streamNum);
        const result = await redactAttachment(stream.readStream().asUint8Array().slice(), request, patterns, at);
        if (!result) { keep = false; break; }
        counts.redacted += result.redacted;
        counts.removed += result.removed;
        if (result.redacted + result.removed > 0) {
          stream.writeStream(result.bytes);
          // The size and checksum in the stream's parameters described the old bytes.
          const params = stream.get('Params');
          if (params.isDictionary()) { params.delete('CheckSum'); params.put('Size', result.bytes.length); }
        }
      }
    }
    if (!keep) {
      spec.delete('EF');
      removed.add(num);
      counts.removed += 1;
    }
  }
  if (removed.size === 0) return counts;
  const isRemoved = (obj: mupdf.PDFObject) => obj.isIndirect() && removed.has(obj.asIndirect());
  const names = doc.getTrailer().get('Root').get('Names');
  if (names.isDictionary() && !names.get('EmbeddedFiles').isNull()) {
    const tree = doc.getEmbeddedFiles();
    for (const [name, spec] of Object.entries(tree)) if (isRemoved(spec)) doc.deleteEmbeddedFile(name);
    if (Object.keys(doc.getEmbeddedFiles()).length === 0) names.delete('EmbeddedFiles');
  }
  // Out of the pages' annotation lists directly: MuPDF's deleteAnnotation misses an annotation written in place (not by reference).
  for (let index = 0; index < doc.countPages(); index++) {
    const annots = doc.findPage(index).get('Annots');
    if (!annots.isArray()) continue;
    for (let i = annots.length - 1; i >= 0; i--) {
      const annot = annots.get(i);
      if (annot.get('Subtype').toString() === '/FileAttachment' && isRemoved(annot.get('FS'))) annots.delete(i);
    }
  }
  return counts;
}

// ---------------------------------------------------------------- the document

/**
 * Redacts a document: the given areas, then every match on its pages as either reader finds it,
 * its other strings, its embedded files; then reads the written file again with both readers and
 * redacts what they still find, up to MAX_PASSES times. `scratch` names files this may write;
 * `deadline` (epoch milliseconds) bounds the poppler runs.
 */
export async function redactDocument(
  doc: mupdf.PDFDocument, request: RedactionRequest, scratch: string, deadline: number, depth = 0,
): Promise<{ report: RedactionReport; bytes: Uint8Array }> {
  const patterns = compilePatterns(request);
  const pages = redactAreas(doc, request);
  let elsewhere = 0;
  let attachments: AttachmentCounts = { redacted: 0, removed: 0 };
  if (patterns.length > 0 || request.attachments === 'remove') {
    attachments = await redactAttachments(doc, request, patterns, { depth, scratch, deadline });
  }
  let bytes = written(doc, 'garbage=compact,compress');
  // Pass 0 redacts what the readers find; each later pass reads the written file again.
  let changed: Set<number> | undefined;
  for (let pass = 0; patterns.length > 0; pass++) {
    if (pass > 0) doc = mupdf.Document.openDocument(bytes, 'application/pdf').asPDF()!;
    // Strings first: an annotation's or a field's appearance drawn again without the match is
    // not a match on the page any more (its copy is counted once, elsewhere).
    const cuts = redactElsewhere(doc, patterns);
    const again = changed && cuts === 0 ? { bytes, changed } : undefined;
    const found = await redactPageText(doc, patterns, { scratch: `${scratch}.pdf`, deadline }, again);
    if (found.every((n) => n === 0) && cuts === 0) break;
    if (pass >= MAX_PASSES - 1) throw new MatchesRemain();
    found.forEach((n, i) => { pages[i] += n; });
    changed = new Set(found.flatMap((n, i) => (n > 0 ? [i] : [])));
    elsewhere += cuts;
    // garbage=compact drops what is no longer referenced: the content streams a redaction replaced.
    bytes = written(doc, 'garbage=compact,compress');
  }
  return { report: { total: pages.reduce((a, b) => a + b, 0), pages, elsewhere, attachments }, bytes };
}
