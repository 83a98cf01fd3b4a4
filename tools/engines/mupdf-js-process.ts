// The MuPDF.js child process (see ./mupdf-js.ts): `node --enable-experimental-regexp-engine
// mupdf-js-process.js <request.json> <input.pdf> <output.pdf>`. It prints its report as JSON on
// stdout and exits 0, or exits MUPDF_JS_EXIT.damaged when MuPDF cannot read or write the file.
// It prints nothing else: no file names, no content.
import { readFileSync, writeFileSync } from 'node:fs';
import * as mupdf from 'mupdf';
import type { EngineCommand, RedactionReport, RedactionRequest, RemovedCounts, RemovedKind, SanitizeRequest } from './mupdf-js.js';
import { MUPDF_JS_EXIT } from './mupdf-js.js';

type Quad = [number, number, number, number, number, number, number, number];

// ---------------------------------------------------------------- redaction

/** A literal as a pattern: special characters escaped, any run of white space matching any other. */
function literalPattern(text: string): string {
  return text.trim().split(/\s+/).map((word) => word.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('\\s+');
}

/** The linear-time engine's flags: global matching, no Unicode mode (it does not run in linear time). */
function compile(patterns: readonly string[]): RegExp[] {
  // eslint-disable-next-line no-invalid-regexp -- `l` is V8's linear-time flag (LINEAR_REGEXP_FLAG on this process's command line)
  return patterns.map((p) => new RegExp(p, 'gl'));
}

interface Glyph { quad: Quad; line: number }

/**
 * A page's text as MuPDF reads it, lines separated by a line break, with the boxes of each UTF-16
 * unit. A word hyphenated at a line's end is joined as pdftotext joins it ("rhon-" and "cus" read
 * "rhoncus"), the hyphen's box going with the letter before it, so a literal finds it whole.
 */
function pageText(page: mupdf.PDFPage): { text: string; boxes: Glyph[][] } {
  let text = '';
  const boxes: Glyph[][] = [];
  let line = 0;
  const stext = page.toStructuredText('preserve-whitespace');
  stext.walk({
    onChar(c: string, _origin: unknown, _font: unknown, _size: unknown, quad: Quad) {
      for (let i = 0; i < c.length; i++) boxes.push([{ quad, line }]);
      text += c;
    },
    endLine() {
      if (/\p{L}-$/u.test(text)) {
        text = text.slice(0, -1);
        const hyphen = boxes.pop()!;
        boxes[boxes.length - 1].push(...hyphen);
      } else {
        text += '\n';
        boxes.push([]);
      }
      line += 1;
    },
  });
  stext.destroy();
  return { text, boxes };
}

/**
 * The boxes of characters [start, end), one per line, cut to the middle half of the line's
 * height: a glyph's box is as tall as its font's ascent and descent, which reaches into the
 * lines above and below when they are set close, and MuPDF removes every glyph a redaction
 * touches. The middle half still crosses every glyph of the match and no glyph of its neighbours.
 */
function matchQuads(found: ReturnType<typeof pageText>, start: number, end: number): Quad[] {
  const byLine = new Map<number, [number, number, number, number]>();
  for (let i = start; i < end; i++) {
    for (const { quad: q, line } of found.boxes[i]) {
      const xs = [q[0], q[2], q[4], q[6]];
      const ys = [q[1], q[3], q[5], q[7]];
      const box: [number, number, number, number] = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
      const seen = byLine.get(line);
      byLine.set(line, seen ? [Math.min(seen[0], box[0]), Math.min(seen[1], box[1]), Math.max(seen[2], box[2]), Math.max(seen[3], box[3])] : box);
    }
  }
  return [...byLine.values()].map(([x0, y0, x1, y1]) => {
    const inset = (y1 - y0) / 4;
    const [top, bottom] = [y0 + inset, y1 - inset];
    return [x0, top, x1, top, x0, bottom, x1, bottom];
  });
}

/** Cuts every match of the patterns out of a string; undefined when nothing matched. */
function cut(value: string, patterns: readonly RegExp[]): string | undefined {
  let result = value;
  for (const pattern of patterns) {
    pattern.lastIndex = 0;
    result = result.replace(pattern, '');
  }
  return result === value ? undefined : result;
}

function redact(doc: mupdf.PDFDocument, request: RedactionRequest): RedactionReport {
  const patterns = compile([...request.text.map(literalPattern), ...request.regex]);
  const pages: number[] = [];
  for (let index = 0; index < doc.countPages(); index++) {
    const page = doc.loadPage(index);
    let count = 0;
    if (patterns.length > 0) {
      const found = pageText(page);
      for (const pattern of patterns) {
        pattern.lastIndex = 0;
        for (const match of found.text.matchAll(pattern)) {
          if (match[0].length === 0) continue;
          const quads = matchQuads(found, match.index, match.index + match[0].length);
          if (quads.length === 0) continue;
          page.createAnnotation('Redact').setQuadPoints(quads);
          count += 1;
        }
      }
      // Paths only where a match covers them whole (a table rule through a name stays).
      if (count > 0) page.applyRedactions(true, mupdf.PDFPage.REDACT_IMAGE_PIXELS, mupdf.PDFPage.REDACT_LINE_ART_REMOVE_IF_COVERED, mupdf.PDFPage.REDACT_TEXT_REMOVE);
    }
    const areas = request.areas.filter((a) => a.page === index + 1);
    for (const a of areas) page.createAnnotation('Redact').setRect([a.x, a.y, a.x + a.width, a.y + a.height]);
    // Under an area nothing may remain: every path that reaches into it goes.
    if (areas.length > 0) page.applyRedactions(true, mupdf.PDFPage.REDACT_IMAGE_PIXELS, mupdf.PDFPage.REDACT_LINE_ART_REMOVE_IF_TOUCHED, mupdf.PDFPage.REDACT_TEXT_REMOVE);
    pages.push(count + areas.length);
    page.destroy();
  }
  const elsewhere = patterns.length > 0 ? redactElsewhere(doc, patterns) : 0;
  return { total: pages.reduce((a, b) => a + b, 0), pages, elsewhere };
}

/** Calls fn on every dictionary and array of the document: each object, and those inside it. */
function eachContainer(doc: mupdf.PDFDocument, fn: (container: mupdf.PDFObject, num: number) => void): void {
  const count = doc.countObjects();
  const visit = (obj: mupdf.PDFObject, num: number, depth: number) => {
    if (depth > 64 || !(obj.isDictionary() || obj.isStream() || obj.isArray())) return;
    fn(obj, num);
    obj.forEach((value) => { if (!value.isIndirect()) visit(value, num, depth + 1); });
  };
  // A stream answers as one only through its reference (a resolved stream reads as its dictionary).
  for (let num = 1; num < count; num++) visit(doc.newIndirect(num), num, 0);
}

/** Calls fn on every dictionary of the document (streams' dictionaries among them). */
function eachDictionary(doc: mupdf.PDFDocument, fn: (dict: mupdf.PDFObject, num: number) => void): void {
  eachContainer(doc, (container, num) => { if (!container.isArray()) fn(container, num); });
}

/**
 * Every other copy of the redacted text: strings anywhere in the document's objects (the Info
 * dictionary, outline titles, annotation contents, form values and their defaults, names) and
 * the XMP metadata lose each match. An annotation or form field whose strings changed gets its
 * appearance drawn again from what is left, so its old text is not kept in a stale appearance.
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

// ---------------------------------------------------------------- sanitizing

const ACTION_KINDS: Record<string, RemovedKind> = {
  JavaScript: 'javascript', Launch: 'launch', ImportData: 'import_data', SubmitForm: 'submit_form',
  GoToR: 'remote_goto', GoToE: 'remote_goto', Rendition: 'other_actions', RichMediaExecute: 'other_actions',
  Sound: 'other_actions', Movie: 'other_actions', GoTo3DView: 'other_actions',
};
/** Actions that only move within the document, show or hide parts of it: kept. */
const SAFE_ACTIONS = new Set(['GoTo', 'Named', 'Thread', 'SetOCGState', 'Trans', 'Hide', 'ResetForm']);

function sanitize(doc: mupdf.PDFDocument, request: SanitizeRequest): { removed: RemovedCounts } {
  const removed: RemovedCounts = {};
  const note = (kind: RemovedKind, n = 1) => { if (n > 0) removed[kind] = (removed[kind] ?? 0) + n; };
  const nameOf = (obj: mupdf.PDFObject) => (obj.isName() ? obj.asName() : undefined);
  /** The kind an action would be removed as, or undefined when it is kept. */
  const removedAs = (action: mupdf.PDFObject): RemovedKind | undefined => {
    const type = nameOf(action.get('S'));
    if (type === undefined) return action.get('JS').isNull() ? undefined : 'javascript';
    if (type === 'URI') return request.keepLinks ? undefined : 'uri';
    if (SAFE_ACTIONS.has(type)) return undefined;
    return ACTION_KINDS[type] ?? 'other_actions';
  };

  /** An action of a kind removed wherever it stands (other dictionaries have an /S too: groups, labels). */
  const isRemovedAction = (dict: mupdf.PDFObject): boolean => {
    const type = nameOf(dict.get('S'));
    return type === undefined ? false : type in ACTION_KINDS || (type === 'URI' && !request.keepLinks);
  };

  const trailer = doc.getTrailer();
  const root = trailer.get('Root');
  // The trailer's Info goes when the document is written (withoutInfo): an edit to the trailer
  // of a file with a cross-reference stream is not written.
  if (!trailer.get('Info').isNull()) note('info');
  if (!root.get('OpenAction').isNull()) { root.delete('OpenAction'); note('open_action'); }
  const names = root.get('Names');
  if (!names.isNull()) {
    for (const [tree, kind] of [['JavaScript', 'javascript'], ['EmbeddedFiles', 'embedded_files']] as const) {
      if (names.get(tree).isNull()) continue;
      note(kind, Math.max(1, Object.keys(doc.loadNameTree(tree)).length));
      names.delete(tree);
    }
  }
  const form = root.get('AcroForm');
  if (!form.isNull()) {
    if (!form.get('XFA').isNull()) { form.delete('XFA'); note('xfa'); }
    // The calculation order lists fields whose scripts compute values; the scripts go below.
    form.delete('CO');
  }
  root.delete('NeedsRendering');

  const attachments = new Set<number>();
  eachDictionary(doc, (dict, num) => {
    const subtype = nameOf(dict.get('Subtype'));
    const type = nameOf(dict.get('Type'));
    if (subtype === 'FileAttachment') attachments.add(num);
    if (!dict.get('AA').isNull()) { note('additional_actions', Math.max(1, dict.get('AA').resolve().length)); dict.delete('AA'); }
    for (const key of ['A', 'PA', 'Next']) {
      const action = dict.get(key);
      if (!action.isDictionary() && !action.isArray()) continue;
      const actions = action.isArray() ? Array.from({ length: action.length }, (_, i) => action.get(i)) : [action];
      const kinds = actions.filter((a) => a.isDictionary()).map(removedAs).filter((k): k is RemovedKind => k !== undefined);
      if (kinds.length === 0) continue;
      for (const kind of kinds) note(kind);
      dict.delete(key);
    }
    if (!dict.get('JS').isNull() && removedAs(dict) !== undefined) dict.delete('JS');
    // Associated files (PDF 2.0), and a file specification's embedded streams.
    if (!dict.get('AF').isNull()) { note('embedded_files'); dict.delete('AF'); }
    if (!dict.get('EF').isNull()) { note('embedded_files'); dict.delete('EF'); }
    if (type === 'Metadata' || !dict.get('Metadata').isNull()) {
      if (!dict.get('Metadata').isNull()) { note('xmp'); dict.delete('Metadata'); }
    }
  });
  // File attachment annotations leave their pages' annotation lists.
  if (attachments.size > 0) {
    for (let index = 0; index < doc.countPages(); index++) {
      const page = doc.loadPage(index);
      for (const annot of page.getAnnotations()) {
        const obj = annot.getObject();
        if (obj.isIndirect() && attachments.has(obj.asIndirect())) { page.deleteAnnotation(annot); note('file_attachments'); }
      }
      page.destroy();
    }
  }
  // What is no longer referenced (embedded file streams, scripts, XMP packets) is not written:
  // the save collects garbage. Whatever some other key still reaches is deleted here.
  for (let num = 1; num < doc.countObjects(); num++) {
    const obj = doc.newIndirect(num);
    if (!obj.isDictionary() && !obj.isStream()) continue;
    const type = nameOf(obj.get('Type'));
    const stale = type === 'EmbeddedFile' || (type === 'Metadata' && nameOf(obj.get('Subtype')) === 'XML')
      || (!obj.isStream() && isRemovedAction(obj));
    if (stale) doc.deleteObject(num);
  }
  return { removed };
}

// ---------------------------------------------------------------- entry

/** The written document again without the trailer's Info: MuPDF's own output has a plain trailer, which takes the edit. */
function withoutInfo(bytes: Uint8Array): Uint8Array {
  const doc = mupdf.Document.openDocument(bytes, 'application/pdf').asPDF()!;
  if (doc.getTrailer().get('Info').isNull()) return bytes;
  doc.getTrailer().delete('Info');
  return doc.saveToBuffer('garbage=compact,compress').asUint8Array();
}

function main(): void {
  const [requestFile, input, output] = process.argv.slice(2);
  const command = JSON.parse(readFileSync(requestFile, 'utf8')) as EngineCommand;
  let doc: mupdf.PDFDocument;
  try {
    const opened = mupdf.Document.openDocument(readFileSync(input), 'application/pdf').asPDF();
    if (!opened) throw new Error('not a PDF');
    doc = opened;
  } catch {
    process.exit(MUPDF_JS_EXIT.damaged);
  }
  let report: RedactionReport | { removed: RemovedCounts };
  let bytes: Uint8Array;
  try {
    report = command.command === 'redact' ? redact(doc, command.request) : sanitize(doc, command.request);
    // garbage=compact drops what is no longer referenced: the content streams a redaction
    // replaced, the scripts and files sanitizing cut loose.
    bytes = doc.saveToBuffer('garbage=compact,compress').asUint8Array();
    if (command.command === 'sanitize') bytes = withoutInfo(bytes);
  } catch {
    process.exit(MUPDF_JS_EXIT.damaged);
  }
  writeFileSync(output, bytes);
  process.stdout.write(JSON.stringify(report));
}

main();
