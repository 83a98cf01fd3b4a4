// Pre-payment checks for /v1/office/pdf: which Office format the bytes are (never the file's name
// or declared type alone), whether that agrees with what the request declared, whether the file
// is encrypted, and whether a ZIP package stays within the bounds one conversion can unpack.
// ZIP packages (OOXML, OpenDocument) are read by yauzl from their central directory; legacy Office
// files are OLE2 compound files, read from their directory of streams. Nothing is decompressed
// except the two small parts that name the format ([Content_Types].xml, mimetype).
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { fail, ServiceError } from '../core/errors.js';
import type { OfficeFormat } from '../tools/engines/libreoffice.js';
import { xlsProtection } from './xls-encryption.js';

interface FormatInfo {
  /** How messages name it. */
  name: string;
  /** File name extensions and media types that declare it. */
  extensions: readonly string[];
  mediaTypes: readonly string[];
}

/** Every format /v1/office/pdf converts, with the names and media types a request may declare it by. */
export const OFFICE_FORMATS: Record<OfficeFormat, FormatInfo> = {
  docx: { name: 'a Word document (DOCX)', extensions: ['docx', 'dotx'], mediaTypes: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'application/vnd.openxmlformats-officedocument.wordprocessingml.template'] },
  docm: { name: 'a macro-enabled Word document (DOCM)', extensions: ['docm', 'dotm'], mediaTypes: ['application/vnd.ms-word.document.macroenabled.12', 'application/vnd.ms-word.template.macroenabled.12'] },
  xlsx: { name: 'an Excel workbook (XLSX)', extensions: ['xlsx', 'xltx'], mediaTypes: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'application/vnd.openxmlformats-officedocument.spreadsheetml.template'] },
  xlsm: { name: 'a macro-enabled Excel workbook (XLSM)', extensions: ['xlsm', 'xltm'], mediaTypes: ['application/vnd.ms-excel.sheet.macroenabled.12', 'application/vnd.ms-excel.template.macroenabled.12'] },
  pptx: { name: 'a PowerPoint presentation (PPTX)', extensions: ['pptx', 'ppsx', 'potx'], mediaTypes: ['application/vnd.openxmlformats-officedocument.presentationml.presentation', 'application/vnd.openxmlformats-officedocument.presentationml.slideshow', 'application/vnd.openxmlformats-officedocument.presentationml.template'] },
  pptm: { name: 'a macro-enabled PowerPoint presentation (PPTM)', extensions: ['pptm', 'ppsm', 'potm'], mediaTypes: ['application/vnd.ms-powerpoint.presentation.macroenabled.12', 'application/vnd.ms-powerpoint.slideshow.macroenabled.12'] },
  odt: { name: 'an OpenDocument text (ODT)', extensions: ['odt', 'ott'], mediaTypes: ['application/vnd.oasis.opendocument.text', 'application/vnd.oasis.opendocument.text-template'] },
  ods: { name: 'an OpenDocument spreadsheet (ODS)', extensions: ['ods', 'ots'], mediaTypes: ['application/vnd.oasis.opendocument.spreadsheet', 'application/vnd.oasis.opendocument.spreadsheet-template'] },
  odp: { name: 'an OpenDocument presentation (ODP)', extensions: ['odp', 'otp'], mediaTypes: ['application/vnd.oasis.opendocument.presentation', 'application/vnd.oasis.opendocument.presentation-template'] },
  rtf: { name: 'an RTF document', extensions: ['rtf'], mediaTypes: ['application/rtf', 'text/rtf'] },
  doc: { name: 'a Word 97-2003 document (DOC)', extensions: ['doc', 'dot'], mediaTypes: ['application/msword'] },
  // Declared by the same names and type as Word 97-2003 (FAMILY keeps them one family); only the bytes tell it apart.
  doc6: { name: 'a Word 6.0/95 document (DOC)', extensions: [], mediaTypes: [] },
  xls: { name: 'an Excel 97-2003 workbook (XLS)', extensions: ['xls', 'xlt'], mediaTypes: ['application/vnd.ms-excel'] },
  ppt: { name: 'a PowerPoint 97-2003 presentation (PPT)', extensions: ['ppt', 'pps', 'pot'], mediaTypes: ['application/vnd.ms-powerpoint'] },
};

/** The media types a request may declare an Office file by (the MCP file argument's `mediaType`). */
export const OFFICE_MEDIA_TYPES: readonly string[] = Object.values(OFFICE_FORMATS).flatMap((f) => f.mediaTypes);

/** What the request said the file is: the multipart part's file name extension and Content-Type, or MCP's mediaType. */
export interface DeclaredType {
  /** The file name's extension, lower case, without the dot (only the extension is kept of a name). */
  extension?: string;
  mediaType?: string;
}

/** Bounds on a ZIP package, checked from its central directory before payment. */
export const OFFICE_ZIP_LIMITS = {
  /** Real documents hold tens to a few thousand parts (a workbook: a part per sheet, image, chart). */
  entries: 10_000,
  /** What LibreOffice may inflate: the declared sizes of all parts together (it checks each part's size as it reads it). */
  uncompressedBytes: 512 * 1024 * 1024,
  /**
   * Stray bytes after the end-of-central-directory record and its comment, which unzip and LibreOffice
   * ignore (a transfer or a tool that padded the file) and yauzl refuses: up to this many are cut off.
   */
  trailingBytes: 1024,
} as const;

const ACCEPTED = 'send a DOCX, XLSX, PPTX, ODT, ODS, ODP, RTF, DOC, XLS or PPT file';

function unsupported(what: string): never {
  fail('UNSUPPORTED_TYPE', `the file is ${what}, not an Office document; ${ACCEPTED}`, { field: 'file' });
}

function corrupt(message: string): never {
  fail('CORRUPT_INPUT', message, { field: 'file' });
}

function encrypted(format: string): never {
  // The catalog's ENCRYPTED_PDF speaks of PDFs; a protected Office file is a type this operation does not take.
  fail('UNSUPPORTED_TYPE', `${format} is password-protected (encrypted): it cannot be converted without its password; remove the protection and send it again`, { field: 'file' });
}

// ---- ZIP packages -------------------------------------------------------------------------

/** A ZIP package starts with a local file header. */
const ZIP_SIGNATURE = Buffer.from('PK\x03\x04', 'latin1');

/** Extra field id of ZIP64's sizes and offsets (APPNOTE 4.5.3). */
const ZIP64_EXTRA = 0x0001;

/** The central directory's entries by name, bounded before any part is read; a package that is not a readable ZIP is CORRUPT_INPUT. */
async function zipDirectory(zip: ZipFile): Promise<Map<string, Entry>> {
  if (zip.entryCount > OFFICE_ZIP_LIMITS.entries) fail('LIMIT_EXCEEDED', `the package holds ${zip.entryCount} parts; at most ${OFFICE_ZIP_LIMITS.entries} are converted`, { field: 'file' });
  const byName = new Map<string, Entry>();
  let total = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.extraFields.some((field) => field.id === ZIP64_EXTRA)) corrupt('the ZIP package uses ZIP64 records, which no Office document of this size needs');
      if (entry.isEncrypted()) encrypted('the ZIP package');
      total += entry.uncompressedSize;
      if (total > OFFICE_ZIP_LIMITS.uncompressedBytes) {
        fail('LIMIT_EXCEEDED', `the package's parts unpack to more than ${OFFICE_ZIP_LIMITS.uncompressedBytes / 1024 / 1024} MB, more than one conversion unpacks`, { field: 'file' });
      }
      byName.set(entry.fileName, entry);
    }
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    // yauzl's reader says "unexpected EOF" when an offset or a length reaches past the end of the bytes.
    corrupt(err instanceof Error && /unexpected EOF/.test(err.message)
      ? 'the ZIP package\'s directory points outside the file: it is damaged'
      : 'the ZIP package\'s directory is damaged');
  }
  return byName;
}

/** One small part's bytes, at most `maxBytes` of them (yauzl checks the inflated size against the declared one). */
async function readPart(zip: ZipFile, entry: Entry, maxBytes: number): Promise<Buffer> {
  if (entry.uncompressedSize > maxBytes) corrupt(`the ZIP package's part ${entry.fileName} is ${entry.uncompressedSize} bytes, far more than that part ever holds`);
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    corrupt(`the ZIP package's part ${entry.fileName} uses compression method ${entry.compressionMethod}, which Office documents do not use`);
  }
  try {
    const stream = await zip.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  } catch {
    return corrupt(`the ZIP package's part ${entry.fileName} cannot be decompressed: the file is damaged`);
  }
}

/** The OOXML main part's content type (without the +xml suffix's parameters) → format. */
const OOXML_MAIN: ReadonlyArray<[RegExp, OfficeFormat]> = [
  [/^application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.(document|template)\.main\+xml$/i, 'docx'],
  [/^application\/vnd\.ms-word\.(document|template)\.macroenabled(template)?\.main\+xml$/i, 'docm'],
  [/^application\/vnd\.openxmlformats-officedocument\.spreadsheetml\.(sheet|template)\.main\+xml$/i, 'xlsx'],
  [/^application\/vnd\.ms-excel\.(sheet|template)\.macroenabled(template)?\.main\+xml$/i, 'xlsm'],
  [/^application\/vnd\.openxmlformats-officedocument\.presentationml\.(presentation|slideshow|template)\.main\+xml$/i, 'pptx'],
  [/^application\/vnd\.ms-powerpoint\.(presentation|slideshow|template)\.macroenabled(template)?\.main\+xml$/i, 'pptm'],
];

const ODF_MIMETYPES: Record<string, OfficeFormat> = {
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.text-template': 'odt',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/vnd.oasis.opendocument.spreadsheet-template': 'ods',
  'application/vnd.oasis.opendocument.presentation': 'odp',
  'application/vnd.oasis.opendocument.presentation-template': 'odp',
};

/** The ZIP entry name an OOXML part name (a percent-encoded URI path) stands for; a malformed escape names no entry. */
function packagePath(partName: string): string {
  try {
    return decodeURIComponent(partName).replace(/^\//, '');
  } catch {
    return '';
  }
}

/** APPNOTE 4.3.16: the end-of-central-directory record's signature, its size before the comment, its comment's size. */
const EOCD_SIGNATURE = 0x06054b50;
const EOCD_BYTES = 22;
const EOCD_MAX_COMMENT = 0xffff;

/**
 * The package without the stray bytes after its end record (at most OFFICE_ZIP_LIMITS.trailingBytes),
 * found as yauzl finds it, the last signature from the end; any other package is returned as it is.
 */
function withoutTrailingBytes(bytes: Buffer): Buffer {
  const lowest = Math.max(0, bytes.length - EOCD_BYTES - EOCD_MAX_COMMENT - OFFICE_ZIP_LIMITS.trailingBytes);
  for (let at = bytes.length - EOCD_BYTES; at >= lowest; at -= 1) {
    if (bytes.readUInt32LE(at) !== EOCD_SIGNATURE) continue;
    const end = at + EOCD_BYTES + bytes.readUInt16LE(at + 20);
    const stray = bytes.length - end;
    return stray > 0 && stray <= OFFICE_ZIP_LIMITS.trailingBytes ? bytes.subarray(0, end) : bytes;
  }
  return bytes;
}

async function zipFormat(file: Buffer): Promise<OfficeFormat> {
  const bytes = withoutTrailingBytes(file);
  const zip = await yauzl.fromBufferPromise(bytes, { lazyEntries: true, validateEntrySizes: true })
    .catch(() => corrupt('the file starts like a ZIP package (OOXML or OpenDocument) but has no ZIP directory: it is cut short or damaged'));
  const byName = await zipDirectory(zip);
  const mimetype = byName.get('mimetype');
  if (mimetype) {
    const declared = (await readPart(zip, mimetype, 256)).toString('latin1').trim();
    const format = ODF_MIMETYPES[declared];
    if (!format) {
      unsupported(declared.startsWith('application/vnd.oasis.opendocument.')
        ? `an OpenDocument file of a kind this service does not convert (${declared.slice('application/vnd.oasis.opendocument.'.length, 80)})`
        : 'a ZIP archive whose "mimetype" names no OpenDocument type');
    }
    if (!byName.has('content.xml')) corrupt(`the file says it is ${OFFICE_FORMATS[format].name} but holds no content.xml: it is damaged`);
    return format;
  }
  const types = byName.get('[Content_Types].xml');
  if (!types) unsupported('a ZIP archive (neither an OOXML package with [Content_Types].xml nor an OpenDocument file with a "mimetype")');
  const xml = (await readPart(zip, types, 4 * 1024 * 1024)).toString('utf8');
  for (const override of xml.matchAll(/<Override\b[^>]*>/g)) {
    const contentType = /\bContentType\s*=\s*"([^"]*)"/.exec(override[0])?.[1] ?? '';
    const partName = /\bPartName\s*=\s*"([^"]*)"/.exec(override[0])?.[1] ?? '';
    const found = OOXML_MAIN.find(([pattern]) => pattern.test(contentType.trim()));
    if (!found) continue;
    const format = found[1];
    const part = packagePath(partName);
    if (!byName.has(part)) corrupt(`the file says it is ${OFFICE_FORMATS[format].name} but does not hold its main part ${partName.slice(0, 80)}: it is damaged`);
    return format;
  }
  return unsupported('an OOXML package that is neither a Word document, an Excel workbook nor a PowerPoint presentation (its [Content_Types].xml names no main document part)');
}

// ---- OLE2 compound files (DOC, XLS, PPT) ---------------------------------------------------
// Read here rather than by a compound-file library: what this check needs is the directory's
// stream names and two bytes of the Word stream, and each sector chain followed is bounded.
// cfb (SheetJS) reads every chain of the file before answering: it follows a stream's chain with
// no loop check (a chain that cycles never ends, its memory growing), and walks chains from every
// sector in turn, so a valid file whose stream is stored backwards costs it time and memory
// quadratic in its sectors (800 KB took 700 MB). Bounding it would mean reading the FAT here first.

const CFB_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const END_OF_CHAIN = 0xfffffffe;
const MAX_SECTOR = 0xfffffffa;

interface CfbStream { name: string; type: number; start: number; size: number }

interface CfbDirectory {
  streams: CfbStream[];
  sectorBytes: number;
  fat: number[];
  /** The first sector of the mini FAT (the chain of small streams' mini sectors). */
  miniFatStart: number;
  /** Sector `id`'s bytes; an id outside the file is CORRUPT_INPUT. */
  sectorAt(id: number): Buffer;
}

/** The compound file's directory entries, read through its FAT; damage is CORRUPT_INPUT. */
function cfbDirectory(bytes: Buffer): CfbDirectory {
  if (bytes.length < 512) corrupt('the file is an OLE2 compound file cut short');
  const shift = bytes.readUInt16LE(0x1e);
  if (shift !== 9 && shift !== 12) corrupt('the OLE2 compound file has an invalid sector size: it is damaged');
  const sectorBytes = 1 << shift;
  const sectors = Math.floor((bytes.length - sectorBytes) / sectorBytes) + 1;
  const sectorAt = (id: number) => {
    const at = (id + 1) * sectorBytes;
    if (id > MAX_SECTOR || at >= bytes.length) corrupt('the OLE2 compound file points outside itself: it is damaged');
    return bytes.subarray(at, Math.min(at + sectorBytes, bytes.length));
  };
  // The FAT's own sectors: 109 listed in the header, more in a chain of DIFAT sectors.
  const fatSectors: number[] = [];
  for (let i = 0; i < 109; i += 1) {
    const id = bytes.readUInt32LE(0x4c + i * 4);
    if (id <= MAX_SECTOR) fatSectors.push(id);
  }
  let difat = bytes.readUInt32LE(0x44);
  for (let hops = 0; difat <= MAX_SECTOR; hops += 1) {
    if (hops > sectors) corrupt('the OLE2 compound file\'s sector table loops: it is damaged');
    const sector = sectorAt(difat);
    for (let i = 0; i + 4 < sector.length; i += 4) {
      const id = sector.readUInt32LE(i);
      if (id <= MAX_SECTOR) fatSectors.push(id);
    }
    difat = sector.length >= sectorBytes ? sector.readUInt32LE(sectorBytes - 4) : END_OF_CHAIN;
  }
  const fat: number[] = [];
  for (const id of fatSectors) {
    const sector = sectorAt(id);
    for (let i = 0; i + 4 <= sector.length; i += 4) fat.push(sector.readUInt32LE(i));
  }
  const streams: CfbStream[] = [];
  const seen = new Set<number>();
  for (let id = bytes.readUInt32LE(0x30); id <= MAX_SECTOR; id = fat[id] ?? END_OF_CHAIN) {
    if (seen.has(id)) corrupt('the OLE2 compound file\'s directory loops: it is damaged');
    seen.add(id);
    const sector = sectorAt(id);
    for (let at = 0; at + 128 <= sector.length; at += 128) {
      const nameBytes = Math.min(sector.readUInt16LE(at + 64), 64);
      const type = sector[at + 66]!;
      if (type === 0 || nameBytes < 2) continue;
      streams.push({
        name: sector.toString('utf16le', at, at + nameBytes - 2),
        type,
        start: sector.readUInt32LE(at + 116),
        size: sector.readUInt32LE(at + 120),
      });
    }
  }
  return { streams, sectorBytes, fat, sectorAt, miniFatStart: bytes.readUInt32LE(0x3c) };
}

/** Streams smaller than this live in the mini stream, in 64-byte mini sectors (MS-CFB 2.2: always 4096). */
const MINI_STREAM_CUTOFF = 4096;
const MINI_SECTOR_BYTES = 64;

/**
 * The first bytes of a stream, all the encryption checks need: its first sector (at least 512
 * bytes) or, for a stream in the mini stream, its first mini sector (64 bytes), found by following
 * the root entry's chain (the mini stream) as far as that mini sector, with a loop check.
 */
function streamHead(dir: CfbDirectory, stream: CfbStream): Buffer {
  if (stream.size === 0) return Buffer.alloc(0);
  const head = stream.size >= MINI_STREAM_CUTOFF ? dir.sectorAt(stream.start) : miniSector(dir, stream.start);
  return head.subarray(0, Math.min(head.length, stream.size));
}

/**
 * The first `wanted` bytes of a stream (fewer if it is shorter): its first sectors, or for a stream
 * in the mini stream, its first mini sectors along the mini FAT. Each link followed is bounded.
 */
function streamStart(dir: CfbDirectory, stream: CfbStream, wanted: number): Buffer {
  const limit = Math.min(wanted, stream.size);
  const parts: Buffer[] = [];
  let have = 0;
  const mini = stream.size < MINI_STREAM_CUTOFF;
  for (let id = stream.start; have < limit && id <= MAX_SECTOR; id = mini ? miniFatEntry(dir, id) : dir.fat[id] ?? END_OF_CHAIN) {
    const part = mini ? miniSector(dir, id) : dir.sectorAt(id);
    if (part.length === 0) break;
    parts.push(part);
    have += part.length;
  }
  return Buffer.concat(parts).subarray(0, limit);
}

/** Entry `id` of the mini FAT, whose sectors are chained in the FAT. */
function miniFatEntry(dir: CfbDirectory, id: number): number {
  const offset = id * 4;
  let sector = dir.miniFatStart;
  for (let hops = Math.floor(offset / dir.sectorBytes); hops > 0; hops -= 1) {
    if (hops > dir.fat.length || sector > MAX_SECTOR) corrupt('the OLE2 compound file\'s mini FAT loops: it is damaged');
    sector = dir.fat[sector] ?? END_OF_CHAIN;
  }
  if (sector > MAX_SECTOR) corrupt('the OLE2 compound file\'s mini FAT is missing: it is damaged');
  const entry = dir.sectorAt(sector);
  return offset % dir.sectorBytes + 4 <= entry.length ? entry.readUInt32LE(offset % dir.sectorBytes) : END_OF_CHAIN;
}

/** Mini sector `id`: the root entry's chain holds the mini stream, followed as far as that sector. */
function miniSector(dir: CfbDirectory, id: number): Buffer {
  const root = dir.streams.find((s) => s.type === 5);
  if (!root || id > MAX_SECTOR) corrupt('the OLE2 compound file\'s mini stream is missing: it is damaged');
  const offset = id * MINI_SECTOR_BYTES;
  let sector = root.start;
  for (let hops = Math.floor(offset / dir.sectorBytes); hops > 0; hops -= 1) {
    // No chain has more links than the FAT has entries; a longer walk is a loop or a lie.
    if (hops > dir.fat.length) corrupt('the OLE2 compound file\'s mini stream loops: it is damaged');
    sector = dir.fat[sector] ?? END_OF_CHAIN;
  }
  const at = offset % dir.sectorBytes;
  return dir.sectorAt(sector).subarray(at, at + MINI_SECTOR_BYTES);
}

/** Enough of a workbook's stream for its BOF, a WriteProtect and the longest FILEPASS (RC4 CryptoAPI names its provider). */
const XLS_HEAD_BYTES = 1024;

/** The FIB (Word 6.0 to 2019 alike) says whether the document is encrypted (fEncrypted, bit 8 of the flags at offset 10). */
function wordEncrypted(head: Buffer): boolean {
  return head.length >= 12 && (head.readUInt16LE(10) & 0x0100) !== 0;
}

/** The FIB's nFib (offset 2): Word 6.0 writes 0x0065, Word 95 0x0068, Word 97 and every later version 0x00C1 or more. */
const NFIB_WORD6 = 0x0065;
const NFIB_WORD97 = 0x00c1;

/**
 * Which Word the FIB says wrote the file: LibreOffice loads Word 6.0/95 only with their own filter.
 * Anything else (a FIB too short to say, an older or unknown nFib) is read as Word 97 or not at all.
 */
function wordFormat(head: Buffer): 'doc' | 'doc6' {
  const nFib = head.length >= 4 ? head.readUInt16LE(2) : NFIB_WORD97;
  return nFib >= NFIB_WORD6 && nFib < NFIB_WORD97 ? 'doc6' : 'doc';
}

/** The Current User atom's header token of an encrypted presentation (MS-PPT 2.3.2; 0xE391C05F when not). */
const PPT_ENCRYPTED_TOKEN = 0xf3d1c4df;

/** A PowerPoint file is encrypted when its Current User stream says so (the RC4 CryptoAPI of MS-PPT 2.3.7). */
function presentationEncrypted(head: Buffer): boolean {
  return head.length >= 16 && head.readUInt32LE(12) === PPT_ENCRYPTED_TOKEN;
}

function the(format: OfficeFormat): string {
  return OFFICE_FORMATS[format].name.replace(/^an? /, 'the ');
}

function cfbFormat(bytes: Buffer): OfficeFormat {
  const dir = cfbDirectory(bytes);
  const { streams } = dir;
  const names = new Set(streams.filter((s) => s.type === 2 || s.type === 1).map((s) => s.name));
  const stream = (...candidates: string[]) => streams.find((s) => s.type === 2 && candidates.includes(s.name));
  // An encrypted OOXML document is a compound file holding the package encrypted (MS-OFFCRYPTO).
  if (names.has('EncryptionInfo') && names.has('EncryptedPackage')) encrypted('the document (an encrypted OOXML package)');
  const word = stream('WordDocument');
  if (word) {
    const head = streamHead(dir, word);
    const format = wordFormat(head);
    if (wordEncrypted(head)) encrypted(the(format));
    return format;
  }
  const workbook = stream('Workbook', 'Book');
  if (workbook) {
    // A FILEPASS that Excel's built-in password opens (write protection only) is opened by LibreOffice too.
    if (xlsProtection(streamStart(dir, workbook, XLS_HEAD_BYTES)) === 'password') encrypted(the('xls'));
    return 'xls';
  }
  if (names.has('PowerPoint Document')) {
    const currentUser = stream('Current User');
    if (currentUser && presentationEncrypted(streamHead(dir, currentUser))) encrypted(the('ppt'));
    return 'ppt';
  }
  if (names.has('VisioDocument')) unsupported('a Visio drawing');
  if (names.has('__substg1.0_0037001F') || names.has('__nameid_version1.0')) unsupported('an Outlook message');
  return unsupported('an OLE2 compound file holding no Word, Excel or PowerPoint stream');
}

// ---- Everything else ----------------------------------------------------------------------

function describeOther(bytes: Buffer): string {
  if (bytes.length === 0) return 'empty';
  const head = bytes.subarray(0, 1024).toString('latin1');
  if (head.startsWith('%PDF-')) return 'a PDF';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'a JPEG image';
  if (head.startsWith('\x89PNG')) return 'a PNG image';
  if (/^\s*(<!doctype html|<html)/i.test(head)) return 'an HTML page';
  if (/^\s*</.test(head)) return 'an XML document (flat XML Office files are not converted)';
  const text = bytes.subarray(0, 4096).toString('utf8');
  if (!text.includes('\uFFFD') && !/[^\t\n\v\f\r -\uFFFF]/.test(text)) return 'plain text';
  return 'binary data of an unknown type';
}

/** The Office format of the bytes; refuses anything else, encrypted files and packages over the bounds. */
export async function sniffOfficeFormat(input: Uint8Array): Promise<OfficeFormat> {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (bytes.subarray(0, 4).equals(ZIP_SIGNATURE)) return zipFormat(bytes);
  if (bytes.subarray(0, 8).equals(CFB_SIGNATURE)) return cfbFormat(bytes);
  if (bytes.subarray(0, 5).toString('latin1') === '{\\rtf') return 'rtf';
  return unsupported(describeOther(bytes));
}

/** The format a declaration names, when it names one of the Office formats (a generic type names none). */
function declaredFormat(declared: DeclaredType): { format: OfficeFormat; by: string } | undefined {
  const entries = Object.entries(OFFICE_FORMATS) as Array<[OfficeFormat, FormatInfo]>;
  const mediaType = declared.mediaType?.split(';')[0]?.trim().toLowerCase();
  const byType = mediaType ? entries.find(([, f]) => f.mediaTypes.includes(mediaType)) : undefined;
  if (byType) return { format: byType[0], by: `its declared type ${mediaType}` };
  const byName = declared.extension ? entries.find(([, f]) => f.extensions.includes(declared.extension!)) : undefined;
  if (byName) return { format: byName[0], by: `its name (.${declared.extension})` };
  return undefined;
}

/** Same family: a macro-enabled variant is declared by the plain type often enough (and converts the same). */
const FAMILY: Record<OfficeFormat, string> = {
  docx: 'word-xml', docm: 'word-xml', xlsx: 'excel-xml', xlsm: 'excel-xml', pptx: 'powerpoint-xml', pptm: 'powerpoint-xml',
  odt: 'odt', ods: 'ods', odp: 'odp', rtf: 'rtf', doc: 'doc', doc6: 'doc', xls: 'xls', ppt: 'ppt',
};

/**
 * The pre-payment check: the format of the bytes, which must agree with the format the request
 * declared when it declared one (by file name extension or media type).
 */
export async function inspectOffice(bytes: Uint8Array, declared: DeclaredType | undefined): Promise<OfficeFormat> {
  const format = await sniffOfficeFormat(bytes);
  const claim = declared ? declaredFormat(declared) : undefined;
  if (claim && FAMILY[claim.format] !== FAMILY[format]) {
    fail('UNSUPPORTED_TYPE', `the file is not what it claims: ${claim.by} says ${OFFICE_FORMATS[claim.format].name}, but its bytes are ${OFFICE_FORMATS[format].name}; send it under its right name or type`, { field: 'file' });
  }
  return format;
}
