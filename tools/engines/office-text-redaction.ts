// Redaction inside an Office package (OOXML or OpenDocument, a ZIP of XML parts) embedded in a
// PDF: every match is cut from the text between the tags and from attribute values of each XML
// part, and the package is written again with its parts in their order. A package whose text
// still holds a match afterwards (a match split across runs of differently formatted text), one
// with parts that cannot be searched (embedded objects, macros), or one that is not a readable
// Office package is not returned: the caller removes it.
import { ZipArchive } from 'archiver';
import yauzl, { type Entry } from 'yauzl';

/** More than this many bytes unpacked, or parts, and the package is not searched. */
const MAX_UNPACKED_BYTES = 64 * 1024 * 1024;
const MAX_PARTS = 10_000;

/** Parts that hold no text to search: pictures, and the package's own media type. */
const NO_TEXT = /\.(png|jpe?g|gif|bmp|tiff?|emf|wmf|svg)$|^mimetype$/i;
const XML_PART = /\.(xml|rels)$/i;

type Cutter = (text: string) => { left: string; cuts: number };

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: '\'' };
const unescapeXml = (s: string) => s.replace(/&(amp|lt|gt|quot|apos|#x[0-9a-f]+|#\d+);/gi, (m, e: string) => {
  if (e[0] !== '#') return ENTITIES[e.toLowerCase()] ?? m;
  const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
  return code <= 0x10ffff ? String.fromCodePoint(code) : m;
});
const escapeXml = (s: string) => s.replace(/[&<>"']/g, (c) => `&${Object.entries(ENTITIES).find(([, v]) => v === c)![0]};`);

/** The text of an XML part as a reader joins it: what lies between tags, in order. */
const partText = (xml: string) => unescapeXml(xml.replace(/<[^>]*>/g, ''));

/** Cuts matches from the text between tags and from attribute values; the part and the number cut. */
function redactXml(xml: string, cutText: Cutter): { xml: string; cuts: number } {
  let cuts = 0;
  const redact = (raw: string) => {
    const result = cutText(unescapeXml(raw));
    cuts += result.cuts;
    return result.cuts > 0 ? escapeXml(result.left) : raw;
  };
  const out = xml
    .replace(/>([^<]+)</g, (_m, text: string) => `>${redact(text)}<`)
    .replace(/(=\s*)"([^"<]*)"/g, (_m, eq: string, value: string) => `${eq}"${redact(value)}"`)
    .replace(/(=\s*)'([^'<]*)'/g, (_m, eq: string, value: string) => `${eq}'${redact(value)}'`);
  return { xml: out, cuts };
}

async function readEntries(bytes: Uint8Array): Promise<Array<{ entry: Entry; data: Buffer }> | undefined> {
  const zip = await yauzl.fromBufferPromise(Buffer.from(bytes), { lazyEntries: true, validateEntrySizes: true });
  const entries: Array<{ entry: Entry; data: Buffer }> = [];
  let unpacked = 0;
  try {
    for (;;) {
      const entry = await new Promise<Entry | undefined>((resolve, reject) => {
        zip.once('entry', resolve);
        zip.once('end', () => resolve(undefined));
        zip.once('error', reject);
        zip.readEntry();
      });
      zip.removeAllListeners('entry').removeAllListeners('end').removeAllListeners('error');
      if (!entry) return entries;
      unpacked += entry.uncompressedSize;
      if (entries.length >= MAX_PARTS || unpacked > MAX_UNPACKED_BYTES || entry.isEncrypted()) return undefined;
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) return undefined;
      const chunks: Buffer[] = [];
      if (!entry.fileName.endsWith('/')) for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      entries.push({ entry, data: Buffer.concat(chunks) });
    }
  } finally {
    zip.close();
  }
}

async function writeEntries(entries: ReadonlyArray<{ entry: Entry; data: Buffer }>): Promise<Buffer> {
  const archive = new ZipArchive({ zlib: { level: 6 } });
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    archive.on('data', (chunk: Buffer) => chunks.push(chunk));
    archive.on('end', () => resolve());
    archive.on('error', reject);
  });
  for (const { entry, data } of entries) {
    if (entry.fileName.endsWith('/')) continue;
    archive.append(data, { name: entry.fileName, date: entry.getLastModDate(), store: entry.compressionMethod === 0 });
  }
  await archive.finalize();
  await done;
  return Buffer.concat(chunks);
}

/**
 * The package with every match cut from its XML parts, and the number cut; undefined when it is
 * not an Office package this can search, or a match is left: the caller removes the file.
 */
export async function redactOfficePackage(
  bytes: Uint8Array, patterns: readonly RegExp[], cutText: Cutter,
): Promise<{ bytes: Uint8Array; redacted: number } | undefined> {
  const entries = await readEntries(bytes).catch(() => undefined);
  if (!entries) return undefined;
  const names = new Set(entries.map((e) => e.entry.fileName));
  if (!names.has('[Content_Types].xml') && !names.has('mimetype')) return undefined;
  let redacted = 0;
  for (const part of entries) {
    const name = part.entry.fileName;
    if (name.endsWith('/') || NO_TEXT.test(name)) continue;
    if (!XML_PART.test(name)) return undefined;
    const { xml, cuts } = redactXml(part.data.toString('utf8'), cutText);
    // A match across the pieces of a paragraph (runs of differently set text) is still there.
    const text = partText(xml);
    if (patterns.some((p) => { p.lastIndex = 0; return p.test(text); })) return undefined;
    if (cuts > 0) { part.data = Buffer.from(xml, 'utf8'); redacted += cuts; }
  }
  return { bytes: redacted > 0 ? await writeEntries(entries) : bytes, redacted };
}
