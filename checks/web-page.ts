// Pre-payment checks for /v1/pdf/from-html: the upload is an HTML document, or a ZIP of a page
// with index.html at its root. A ZIP is read by yauzl from its central directory and bounded
// there (entries, declared sizes, names) before anything is inflated; the worker inflates the
// same entries again (readPageFiles), each checked against its declared size as it is read.
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { fail, ServiceError } from '../core/errors.js';

export const PAGE_ZIP_LIMITS = {
  /** A page's own files: a document, its stylesheets, scripts, images and fonts. */
  entries: 2000,
  /** The declared sizes of all entries together: what the worker may inflate into memory. */
  uncompressedBytes: 200 * 1024 * 1024,
  /** An entry inflating to more than this many times its stored size is a ZIP bomb's, not a page's. */
  ratio: 200,
} as const;

/** The document a ZIP of a page is opened at. */
export const PAGE_INDEX = 'index.html';

export type WebPageForm = 'html' | 'zip';

const ZIP_SIGNATURE = Buffer.from('PK\x03\x04', 'latin1');
const ZIP64_EXTRA = 0x0001;
/** A bomb's ratio only matters once the entry is large: tiny files of spaces compress beyond any ratio. */
const RATIO_FLOOR_BYTES = 1024 * 1024;

function refuse(code: 'CORRUPT_INPUT' | 'UNSUPPORTED_TYPE' | 'LIMIT_EXCEEDED' | 'NO_CONTENT' | 'FIELD_INVALID', message: string): never {
  fail(code, message, { field: 'file' });
}

/** Why an entry's name cannot be a file of the page (absolute, climbing out, Windows paths), or undefined. */
export function unsafeEntryName(name: string): string | undefined {
  if (name.startsWith('/')) return 'is an absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'starts with a drive letter';
  if (name.includes('\\')) return 'holds a backslash';
  if (name.includes('\0')) return 'holds a NUL character';
  if (name.split('/').some((segment) => segment === '..')) return 'climbs out of the archive (..)';
  return undefined;
}

/** The entries that are files (directories left out), every name and size checked. */
async function pageEntries(zip: ZipFile): Promise<Entry[]> {
  if (zip.entryCount > PAGE_ZIP_LIMITS.entries) refuse('LIMIT_EXCEEDED', `the ZIP holds ${zip.entryCount} entries; a page's ZIP may hold at most ${PAGE_ZIP_LIMITS.entries}`);
  const files: Entry[] = [];
  let total = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      const unsafe = unsafeEntryName(entry.fileName);
      // Names come from the buyer's archive: cut short, never a path of this machine.
      if (unsafe) refuse('CORRUPT_INPUT', `the ZIP entry "${entry.fileName.slice(0, 80)}" ${unsafe}; a page's files must sit below its root`);
      if (entry.extraFields.some((f) => f.id === ZIP64_EXTRA)) refuse('CORRUPT_INPUT', 'the ZIP uses ZIP64 records, which no page of this size needs');
      if (entry.isEncrypted()) refuse('UNSUPPORTED_TYPE', 'the ZIP is encrypted; send it without a password');
      if (entry.fileName.endsWith('/')) continue;
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
        refuse('CORRUPT_INPUT', `the ZIP entry "${entry.fileName.slice(0, 80)}" uses compression method ${entry.compressionMethod}; only stored and deflated entries are read`);
      }
      const ratioLimit = PAGE_ZIP_LIMITS.ratio * Math.max(1, entry.compressedSize);
      if (entry.uncompressedSize > RATIO_FLOOR_BYTES && entry.uncompressedSize > ratioLimit) {
        refuse('LIMIT_EXCEEDED', `the ZIP entry "${entry.fileName.slice(0, 80)}" inflates ${Math.round(entry.uncompressedSize / Math.max(1, entry.compressedSize))} times its size; at most ${PAGE_ZIP_LIMITS.ratio} times is read (a ZIP bomb)`);
      }
      total += entry.uncompressedSize;
      if (total > PAGE_ZIP_LIMITS.uncompressedBytes) {
        refuse('LIMIT_EXCEEDED', `the ZIP's files unpack to more than ${PAGE_ZIP_LIMITS.uncompressedBytes / 1024 / 1024} MB; a page's ZIP may unpack to at most that`);
      }
      files.push(entry);
    }
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    // yauzl checks names itself (backslashes, absolute paths, ..) and stops with the name.
    const named = err instanceof Error ? /^(?:absolute path|invalid relative path|invalid characters in fileName): (.*)$/s.exec(err.message) : null;
    const unsafe = named ? unsafeEntryName(named[1]) : undefined;
    if (named && unsafe) refuse('CORRUPT_INPUT', `the ZIP entry "${named[1].slice(0, 80)}" ${unsafe}; a page's files must sit below its root`);
    refuse('CORRUPT_INPUT', 'the ZIP\'s directory is damaged');
  }
  return files;
}

async function openZip(bytes: Uint8Array): Promise<ZipFile> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return yauzl.fromBufferPromise(buffer, { lazyEntries: true, validateEntrySizes: true })
    .catch(() => refuse('CORRUPT_INPUT', 'the file starts like a ZIP but has no ZIP directory: it is cut short or damaged'));
}

/**
 * What the upload is: a ZIP of a page (bounded, safe names, index.html at its root) or an HTML
 * document (text, not empty). Anything else is refused naming what is wrong.
 */
export async function inspectWebPage(bytes: Uint8Array): Promise<WebPageForm> {
  if (bytes.byteLength >= 4 && ZIP_SIGNATURE.equals(bytes.subarray(0, 4))) {
    const zip = await openZip(bytes);
    try {
      const entries = await pageEntries(zip);
      if (!entries.some((e) => e.fileName === PAGE_INDEX)) {
        const nested = entries.find((e) => e.fileName.endsWith(`/${PAGE_INDEX}`));
        refuse('FIELD_INVALID', `the ZIP has no ${PAGE_INDEX} at its root${nested ? ` (one is in ${nested.fileName.slice(0, -PAGE_INDEX.length - 1).slice(0, 80)}/: zip that folder's contents, not the folder)` : ''}; the page opens at ${PAGE_INDEX}`);
      }
    } finally {
      zip.close();
    }
    return 'zip';
  }
  const head = bytes.subarray(0, 64 * 1024);
  if (Buffer.from(head.subarray(0, 5)).toString('latin1') === '%PDF-') refuse('UNSUPPORTED_TYPE', 'the file is a PDF; send an HTML document or a ZIP of a page');
  if (head.includes(0)) refuse('UNSUPPORTED_TYPE', 'the file holds binary data (NUL bytes); send an HTML document (text) or a ZIP of a page');
  if (!/\S/.test(Buffer.from(head).toString('utf8'))) refuse('NO_CONTENT', 'the HTML document is empty');
  return 'html';
}

/**
 * The page's files by path (the ZIP's entries, or the one document as index.html), for the
 * worker to answer the browser's requests from. The upload passed inspectWebPage.
 */
export async function readPageFiles(bytes: Uint8Array, form: WebPageForm): Promise<Map<string, Buffer>> {
  if (form === 'html') return new Map([[PAGE_INDEX, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]]);
  const zip = await openZip(bytes);
  const files = new Map<string, Buffer>();
  try {
    for (const entry of await pageEntries(zip)) {
      const stream = await zip.openReadStreamPromise(entry);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      files.set(entry.fileName, Buffer.concat(chunks));
    }
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    refuse('CORRUPT_INPUT', 'an entry of the ZIP cannot be decompressed: the file is damaged');
  } finally {
    zip.close();
  }
  return files;
}
