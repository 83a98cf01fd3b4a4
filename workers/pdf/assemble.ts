// merge, pages (select / reorder / delete / rotate) and split: page assembly with qpdf, which
// copies pages without re-encoding anything.
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Job, JobOutput, WorkFunction } from '../../core/job.js';
import { timeLeft } from '../../core/job.js';
import type { PagesJob } from '../../operations/pdf/pages.js';
import type { SplitJob } from '../../operations/pdf/split.js';
import { runTool } from '../../tools/process/run-tool.js';
import { inputPath, inputsContain, PDF, qpdf, qpdfPageSpec, readBytes, ZIP } from './common.js';
import { withScratch } from '../../tools/process/scratch-directory.js';
import { buildZip, checkZipSize, type ZipEntry } from '../../tools/zip.js';

/**
 * The first input is qpdf's primary file, so its document-level parts (outline, form fields,
 * page labels) are kept; later inputs contribute their pages, annotations and links. The
 * result is written unencrypted, as a new document. The later inputs' outlines are then
 * appended after the first one's (see appendOutlines), so every input's bookmarks survive.
 */
export async function mergeWithQpdf(input: Job, sources: readonly string[], out: string, dir: string, extra: readonly string[] = []): Promise<void> {
  await qpdf(input, [sources[0], '--decrypt', ...extra, '--pages', ...sources, '--', out], dir);
  // The catalog's /Outlines shows in the raw bytes unless the catalog sits in a compressed object
  // stream, so a later input with either may have an outline; without both it has none.
  if (sources.length > 1 && await inputsContain(input, ['/Outlines', '/ObjStm'], 1)) await appendOutlines(input, sources, out, dir);
}

/**
 * Run by mutool: scriptArgs are the merged file, where to write, then each source's page count
 * as qpdf counted it (-1: unknown) and its path. It reads the outline of every input after the
 * first (title, destination as a "#page=N&..." URI, open or closed, children), moves each
 * internal destination by the pages before that input, and appends the entries after the first
 * input's outline (which qpdf already kept exactly) as an incremental update, so qpdf's packing
 * of the file is untouched. Prints what it did as JSON on its last line.
 *
 * - An entry whose destination does not resolve (unknown named destination, JavaScript, a page
 *   outside that input) keeps its title and children, with no destination.
 * - External URIs stay URI actions. mupdf reads /XYZ zoom 0 ("keep the reader's zoom", what
 *   Word and LibreOffice write) as 100 %; it is written back as null, which means the same.
 * - mupdf 1.21's OutlineIterator.item() hands out strings that the next item() call frees,
 *   so they are copied at once.
 */
export const MERGE_OUTLINE_SCRIPT = `var merged = scriptArgs[0], output = scriptArgs[1];
function open(file) {
  var doc = new PDFDocument(file);
  if (doc.needsPassword() && !doc.authenticatePassword('')) throw new Error('needs a password');
  return doc;
}
function copy(s) { return s ? ('.' + s).slice(1) : null; }
function readIterator(doc) {
  var it = doc.outlineIterator();
  function level() {
    var items = [];
    for (;;) {
      var item = it.item();
      if (!item) break;
      var node = { title: copy(item.title) || '', uri: copy(item.uri), open: !!item.open, down: [] };
      if (it.down() === 0) node.down = level();
      it.up();
      items.push(node);
      if (it.next() !== 0) break;
    }
    return items;
  }
  return level();
}
function readLoaded(items) {
  var out = [];
  for (var i = 0; items && i < items.length; i++)
    out.push({ title: items[i].title || '', uri: items[i].uri || null, open: false, down: readLoaded(items[i].down) });
  return out;
}
function read(doc) {
  try { return readIterator(doc); } catch (e) { return readLoaded(doc.loadOutline()); }
}
function count(items) { var n = 0; for (var i = 0; i < items.length; i++) n += 1 + count(items[i].down); return n; }
function relocate(uri, offset, pages) {
  if (!uri) return null;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri)) return uri;
  var m = /^#page=([0-9]+)((?:&[^#]*)?)$/.exec(uri);
  if (!m) return null;
  var page = parseInt(m[1], 10);
  if (page < 1 || page > pages) return null;
  return '#page=' + (page + offset) + m[2].replace(/^&zoom=100,/, '&zoom=nan,');
}
var inputs = [], offset = 0, entries = 0;
for (var i = 2; i + 1 < scriptArgs.length; i += 2) {
  var given = parseInt(scriptArgs[i], 10), items = [], pages = given, later = inputs.length > 0;
  if (later || given < 0) {
    try {
      var src = open(scriptArgs[i + 1]);
      var counted = src.countPages();
      if (given < 0) pages = counted;
      // A source whose pages mupdf counts differently from qpdf cannot be mapped onto the merge.
      if (later && counted === pages) items = read(src);
    } catch (e) { items = []; }
  }
  if (pages < 0) throw new Error('unknown page count');
  inputs.push({ items: items, offset: offset, pages: pages });
  entries += count(items);
  offset += pages;
}
if (entries === 0) { print(JSON.stringify({ entries: 0 })); quit(); }
var doc = open(merged);
if (doc.countPages() !== offset) throw new Error('the merged file has ' + doc.countPages() + ' pages, not ' + offset);
var it = doc.outlineIterator();
if (it.item()) { while (it.next() === 0) {} }
function write(items, input) {
  for (var k = 0; k < items.length; k++) {
    var entry = { title: items[k].title, uri: relocate(items[k].uri, input.offset, input.pages), open: items[k].open };
    it.insert(entry);
    if (items[k].down.length) {
      it.prev();
      it.down();
      write(items[k].down, input);
      it.up();
      it.update(entry);
      it.next();
    }
  }
}
for (var j = 1; j < inputs.length; j++) write(inputs[j].items, inputs[j]);
doc.save(output, 'incremental');
var check = new PDFDocument(output);
if (check.countPages() !== offset) throw new Error('the saved file lost pages');
print(JSON.stringify({ entries: entries }));
`;

/**
 * Adds the outlines of the inputs after the first to qpdf's merged file. This is navigation on
 * top of what was paid for (the pages): if it fails for any reason, qpdf's result stands.
 */
async function appendOutlines(input: Job, sources: readonly string[], out: string, dir: string): Promise<void> {
  const script = path.join(dir, 'merge-outline.js');
  const outlined = path.join(path.dirname(out), `outlined-${path.basename(out)}`);
  const args = [script, out, outlined];
  for (const [i, source] of sources.entries()) args.push(String(input.files[i]?.pages ?? -1), source);
  try {
    await writeFile(script, MERGE_OUTLINE_SCRIPT, { flag: 'w' });
    // Half of the time left at most: if mupdf stalls, there is still time to return the pages.
    const result = await runTool('mutool', ['run', ...args], { cwd: dir, timeoutMs: Math.max(1, Math.min(Math.floor(timeLeft(input) / 2), 60_000)) });
    const report = JSON.parse(Buffer.from(result.stdout).toString('utf8').trim().split('\n').pop() || '{}') as { entries?: number };
    if (result.exitCode === 0 && typeof report.entries === 'number' && report.entries > 0) await rename(outlined, out);
  } catch {
    // qpdf's merge is complete without the later outlines.
  } finally {
    await rm(outlined, { force: true });
  }
}

export const merge: WorkFunction = async (input): Promise<JobOutput> => {
  const sources: string[] = [];
  for (let i = 0; i < input.files.length; i++) sources.push(await inputPath(input, i));
  return withScratch(input.jobDir, async (dir) => {
    const out = path.join(dir, 'merged.pdf');
    await mergeWithQpdf(input, sources, out, dir, ['--object-streams=generate']);
    return { body: await readBytes(out), mediaType: PDF };
  });
};

export const pages: WorkFunction<PagesJob> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const { pages: selected, rotate } = input.params;
    const args = [source, '--object-streams=generate'];
    if (selected) args.push('--pages', '.', qpdfPageSpec(selected), '--');
    // qpdf's "+" rotates relative to each page's current /Rotate, clockwise: what the user sees turns by that much.
    if (rotate !== undefined) args.push(`--rotate=+${rotate}:1-z`);
    const out = path.join(dir, 'pages.pdf');
    args.push(out);
    await qpdf(input, args, dir);
    return { body: await readBytes(out), mediaType: PDF };
  });
};

export function splitEntryName(index: number, first: number, last: number): string {
  return `part-${String(index + 1).padStart(2, '0')}-p${first}-${last}.pdf`;
}

export const split: WorkFunction<SplitJob> = async (input): Promise<JobOutput> => {
  const source = await inputPath(input);
  return withScratch(input.jobDir, async (dir) => {
    const { ranges } = input.params;
    const entries: ZipEntry[] = [];
    for (const [index, range] of ranges.entries()) {
      const out = path.join(dir, `part-${index}.pdf`);
      await qpdf(input, [source, '--object-streams=generate', '--pages', '.', `${range.first}-${range.last}`, '--', out], dir);
      entries.push({ name: splitEntryName(index, range.first, range.last), bytes: await readBytes(out) });
      checkZipSize(entries, input.settings.maxZipBytes);
    }
    return { body: await buildZip(entries, input.settings.maxZipBytes), mediaType: ZIP };
  });
};
