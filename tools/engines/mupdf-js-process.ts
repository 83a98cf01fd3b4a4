// The MuPDF.js child process (see ./mupdf-js.ts): `node --enable-experimental-regexp-engine
// mupdf-js-process.js <request.json> <input.pdf> <output.pdf>`. It prints its report as JSON on
// stdout and exits 0, or exits MUPDF_JS_EXIT.damaged when MuPDF cannot read or write the file,
// MUPDF_JS_EXIT.matchesRemain when a redaction cannot remove every match the readers find.
// It prints nothing else: no file names, no content.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as mupdf from 'mupdf';
import type { MupdfJsCommand, RemovedCounts, RemovedKind, SanitizeRequest } from './mupdf-js.js';
import { MUPDF_JS_EXIT, isReadOnlyCommand, makesNewDocument } from './mupdf-js.js';
import { fillForm, flatten, loadEveryObject, readForm, readMetadata, writeMetadata } from './mupdf-js-forms.js';
import { MatchesRemain, ReaderFailed, eachContainer, redactDocument } from './mupdf-js-redaction.js';
import { runToolsInThisProcess } from '../process/run-tool.js';
import { stampDocument } from './mupdf-js-stamp.js';
import { imagesDocument } from './mupdf-js-images.js';

// ---------------------------------------------------------------- object walks

/** Calls fn on every dictionary of the document (streams' dictionaries among them). */
function eachDictionary(doc: mupdf.PDFDocument, fn: (dict: mupdf.PDFObject, num: number) => void): void {
  eachContainer(doc, (container, num) => { if (!container.isArray()) fn(container, num); });
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

async function main(): Promise<void> {
  // The readers this process runs (pdftotext) start from here, not from a launcher of their own.
  runToolsInThisProcess();
  const [requestFile, input, output] = process.argv.slice(2);
  const command = JSON.parse(readFileSync(requestFile, 'utf8')) as MupdfJsCommand;
  let doc: mupdf.PDFDocument;
  try {
    const opened = makesNewDocument(command.command) ? new mupdf.PDFDocument()
      : mupdf.Document.openDocument(readFileSync(input), 'application/pdf').asPDF();
    if (!opened) throw new Error('not a PDF');
    doc = opened;
  } catch {
    process.exit(MUPDF_JS_EXIT.damaged);
  }
  let report: unknown = {};
  let bytes: Uint8Array | undefined;
  /** The edited document, written whole; garbage=compact drops what no longer has a reference. */
  const saved = () => doc.saveToBuffer('garbage=compact,compress').asUint8Array();
  try {
    if (['form-fill', 'flatten', 'set-metadata'].includes(command.command)) loadEveryObject(doc);
    switch (command.command) {
      case 'redact':
        // The scratch files sit beside the output, in the job's directory.
        ({ report, bytes } = await redactDocument(doc, command.request, path.join(path.dirname(output), 'redaction-check'), command.deadline));
        break;
      case 'sanitize':
        report = sanitize(doc, command.request) satisfies { removed: RemovedCounts };
        bytes = withoutInfo(saved());
        break;
      case 'stamp': stampDocument(doc, command.request); bytes = saved(); break;
      case 'from-images': imagesDocument(doc, command.request); bytes = saved(); break;
      case 'form-fields': report = readForm(doc); break;
      case 'form-fill':
        fillForm(doc, command.request);
        if (command.request.flatten) flatten(doc);
        bytes = saved();
        break;
      case 'flatten': flatten(doc); bytes = saved(); break;
      case 'metadata': report = readMetadata(doc); break;
      case 'set-metadata': writeMetadata(doc, command.request, command.now); bytes = saved(); break;
    }
  } catch (err) {
    if (err instanceof ReaderFailed) process.exit(MUPDF_JS_EXIT.failed);
    process.exit(err instanceof MatchesRemain ? MUPDF_JS_EXIT.matchesRemain : MUPDF_JS_EXIT.damaged);
  }
  if (!isReadOnlyCommand(command.command) && bytes) writeFileSync(output, bytes);
  process.stdout.write(JSON.stringify(report));
}

await main();
