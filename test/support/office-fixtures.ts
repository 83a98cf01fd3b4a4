// Office documents made here, byte by byte: the smallest valid DOCX, XLSX, ODT, ODS, ODP and RTF
// with two pages (or sheets, or slides) of known words, and documents that carry what a conversion
// must never act on (a macro run on opening, an image linked by URL). PPTX, DOC, XLS and PPT are
// made from these by LibreOffice itself (officeVariants), as no hand-written minimal file of those
// formats would be a fair sample.
import { ZipArchive } from 'archiver';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { tool } from './independent-tools.js';
import { rc4 } from '../../checks/xls-encryption.js';

/** The words on the first and on the second page of every generated document. */
export const PAGE_WORDS = ['Quarterly heron ledger', 'Second walrus appendix'] as const;

interface Part { name: string; text: string | Buffer; store?: boolean }

/** A ZIP of the parts in order (an ODF `mimetype` first and stored, as the format requires). */
export async function zipOf(parts: readonly Part[]): Promise<Buffer> {
  const archive = new ZipArchive({ zlib: { level: 6 } });
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    archive.on('data', (chunk: Buffer) => chunks.push(chunk));
    archive.on('end', () => resolve());
    archive.on('error', reject);
  });
  const date = new Date('2000-01-01T00:00:00Z');
  for (const part of parts) archive.append(Buffer.from(part.text), { name: part.name, date, store: part.store === true });
  await archive.finalize();
  await done;
  return Buffer.concat(chunks);
}

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';
const RELS_TYPE = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

function contentTypes(overrides: Record<string, string>): string {
  return `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`
    + '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
    + Object.entries(overrides).map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`).join('')
    + '</Types>';
}

const packageRels = (main: string) => `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${RELS_TYPE}/officeDocument" Target="${main}"/></Relationships>`;

/** A DOCX of two pages; `mainType` lets a test declare another main part type. */
export function docx(mainType = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml'): Promise<Buffer> {
  const [first, second] = PAGE_WORDS;
  return zipOf([
    { name: '[Content_Types].xml', text: contentTypes({ '/word/document.xml': mainType }) },
    { name: '_rels/.rels', text: packageRels('word/document.xml') },
    {
      name: 'word/document.xml',
      text: `${XML}<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`
        + `<w:p><w:r><w:t>${first}</w:t></w:r></w:p><w:p><w:r><w:br w:type="page"/><w:t>${second}</w:t></w:r></w:p>`
        + '</w:body></w:document>',
    },
  ]);
}

/** A one-page DOCX of the given paragraphs, each one run or a list of runs (the second of each list in bold). */
export function docxOf(paragraphs: ReadonlyArray<string | readonly string[]>): Promise<Buffer> {
  const escape = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return zipOf([
    { name: '[Content_Types].xml', text: contentTypes({ '/word/document.xml': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml' }) },
    { name: '_rels/.rels', text: packageRels('word/document.xml') },
    {
      name: 'word/document.xml',
      text: `${XML}<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`
        + paragraphs.map((p) => `<w:p>${(typeof p === 'string' ? [p] : p).map((run, i) => `<w:r>${i % 2 === 1 ? '<w:rPr><w:b/></w:rPr>' : ''}`
          + `<w:t xml:space="preserve">${escape(run)}</w:t></w:r>`).join('')}</w:p>`).join('') + '</w:body></w:document>',
    },
  ]);
}

/** An XLSX of two sheets, one cell of words each (each sheet prints on a page of its own). */
export function xlsx(): Promise<Buffer> {
  const sheet = (words: string) => `${XML}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`
    + `<row r="1"><c r="A1" t="inlineStr"><is><t>${words}</t></is></c></row></sheetData></worksheet>`;
  const sheetType = 'application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml';
  return zipOf([
    {
      name: '[Content_Types].xml',
      text: contentTypes({
        '/xl/workbook.xml': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml',
        '/xl/worksheets/sheet1.xml': sheetType, '/xl/worksheets/sheet2.xml': sheetType,
      }),
    },
    { name: '_rels/.rels', text: packageRels('xl/workbook.xml') },
    {
      name: 'xl/workbook.xml',
      text: `${XML}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${RELS_TYPE}"><sheets>`
        + '<sheet name="First" sheetId="1" r:id="rId1"/><sheet name="Second" sheetId="2" r:id="rId2"/></sheets></workbook>',
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      text: `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`
        + `<Relationship Id="rId1" Type="${RELS_TYPE}/worksheet" Target="worksheets/sheet1.xml"/>`
        + `<Relationship Id="rId2" Type="${RELS_TYPE}/worksheet" Target="worksheets/sheet2.xml"/></Relationships>`,
    },
    { name: 'xl/worksheets/sheet1.xml', text: sheet(PAGE_WORDS[0]) },
    { name: 'xl/worksheets/sheet2.xml', text: sheet(PAGE_WORDS[1]) },
  ]);
}

const ODF_NS = 'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
  + 'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
  + 'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
  + 'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" '
  + 'xmlns:script="urn:oasis:names:tc:opendocument:xmlns:script:1.0" xmlns:ooo="http://openoffice.org/2004/office" xmlns:dom="http://www.w3.org/2001/xml-events"';

type OdfKind = 'text' | 'spreadsheet' | 'presentation';

function odf(kind: OdfKind, body: string, extra: { scripts?: string; parts?: Part[] } = {}): Promise<Buffer> {
  const mediaType = `application/vnd.oasis.opendocument.${kind}`;
  const parts = extra.parts ?? [];
  return zipOf([
    { name: 'mimetype', text: mediaType, store: true },
    {
      name: 'content.xml',
      text: `${XML}<office:document-content ${ODF_NS} office:version="1.3">${extra.scripts ?? ''}`
        + '<office:automatic-styles><style:style style:name="Break" style:family="paragraph"><style:paragraph-properties fo:break-before="page"/></style:style></office:automatic-styles>'
        + `<office:body>${body}</office:body></office:document-content>`,
    },
    ...parts,
    {
      name: 'META-INF/manifest.xml',
      text: `${XML}<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">`
        + `<manifest:file-entry manifest:full-path="/" manifest:media-type="${mediaType}"/>`
        + '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        + parts.map((p) => `<manifest:file-entry manifest:full-path="${p.name}" manifest:media-type="text/xml"/>`).join('')
        + '</manifest:manifest>',
    },
  ]);
}

const textBody = (extra = '') => `<office:text><text:p>${PAGE_WORDS[0]}</text:p>${extra}<text:p text:style-name="Break">${PAGE_WORDS[1]}</text:p></office:text>`;

export const odt = (): Promise<Buffer> => odf('text', textBody());

/** An ODT of `pages` pages, each starting with its number. */
export const odtOfPages = (pages: number): Promise<Buffer> => odf('text', `<office:text>${Array.from({ length: pages }, (_, i) =>
  `<text:p${i > 0 ? ' text:style-name="Break"' : ''}>Page ${i + 1}</text:p>`).join('')}</office:text>`);

export const ods = (): Promise<Buffer> => odf('spreadsheet', `<office:spreadsheet>${PAGE_WORDS.map((words, i) =>
  `<table:table table:name="Sheet${i + 1}"><table:table-row><table:table-cell office:value-type="string"><text:p>${words}</text:p></table:table-cell></table:table-row></table:table>`).join('')}</office:spreadsheet>`);

export const odp = (): Promise<Buffer> => odf('presentation', `<office:presentation>${PAGE_WORDS.map((words, i) =>
  `<draw:page draw:name="Slide${i + 1}"><draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" svg:height="3cm"><draw:text-box><text:p>${words}</text:p></draw:text-box></draw:frame></draw:page>`).join('')}</office:presentation>`);

export const rtf = (): Buffer => Buffer.from(`{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Liberation Serif;}}\\f0\\fs24 ${PAGE_WORDS[0]}\\par\\page ${PAGE_WORDS[1]}\\par}`);

/**
 * An ODT whose Basic macro, bound to the document's opening, writes `marker`; and whose image
 * is linked from `imageUrl` rather than embedded.
 */
export function hostileOdt(marker: string, imageUrl: string): Promise<Buffer> {
  const basicDoctype = (root: string, dtd: string) => `<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE ${root} PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "${dtd}">`;
  return odf('text', textBody(`<text:p><draw:frame draw:name="linked" svg:width="2cm" svg:height="2cm" text:anchor-type="as-char"><draw:image xlink:href="${imageUrl}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>`), {
    scripts: '<office:scripts><office:event-listeners><script:event-listener script:language="ooo:script" script:event-name="dom:load" '
      + 'xlink:href="vnd.sun.star.script:Standard.Module1.Main?language=Basic&amp;location=document" xlink:type="simple"/></office:event-listeners></office:scripts>',
    parts: [
      { name: 'Basic/script-lc.xml', text: `${basicDoctype('library:libraries', 'libraries.dtd')}<library:libraries xmlns:library="http://openoffice.org/2000/library" xmlns:xlink="http://www.w3.org/1999/xlink"><library:library library:name="Standard" library:link="false"/></library:libraries>` },
      { name: 'Basic/Standard/script-lb.xml', text: `${basicDoctype('library:library', 'library.dtd')}<library:library xmlns:library="http://openoffice.org/2000/library" library:name="Standard" library:readonly="false" library:passwordprotected="false"><library:element library:name="Module1"/></library:library>` },
      {
        name: 'Basic/Standard/Module1.xml',
        text: `${basicDoctype('script:module', 'module.dtd')}<script:module xmlns:script="http://openoffice.org/2000/script" script:name="Module1" script:language="StarBasic">Sub Main\n  Open "${marker}" For Output As #1\n  Print #1, "ran"\n  Close #1\nEnd Sub\n</script:module>`,
      },
    ],
  });
}

/** The generated documents by format, PPTX, DOC, XLS and PPT converted from them by LibreOffice. */
export async function officeSamples(): Promise<Record<'docx' | 'xlsx' | 'pptx' | 'odt' | 'ods' | 'odp' | 'rtf' | 'doc' | 'xls' | 'ppt', Buffer>> {
  const made = { docx: await docx(), xlsx: await xlsx(), odt: await odt(), ods: await ods(), odp: await odp(), rtf: rtf() };
  const dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-office-'));
  try {
    await writeFile(path.join(dir, 'sample.odt'), made.odt);
    await writeFile(path.join(dir, 'sample.ods'), made.ods);
    await writeFile(path.join(dir, 'sample.odp'), made.odp);
    const convert = async (source: string, target: string) => {
      const { code, err } = await tool('soffice', ['--headless', '--norestore', `-env:UserInstallation=file://${dir}/profile`, '--convert-to', target, '--outdir', dir, path.join(dir, source)]);
      if (code !== 0) throw new Error(`soffice could not make ${target}: ${err}`);
      return readFile(path.join(dir, `${path.basename(source, path.extname(source))}.${target.split(':')[0]}`));
    };
    const doc = await convert('sample.odt', 'doc:MS Word 97');
    const xls = await convert('sample.ods', 'xls:MS Excel 97');
    const ppt = await convert('sample.odp', 'ppt:MS PowerPoint 97');
    const pptx = await convert('sample.odp', 'pptx:Impress MS PowerPoint 2007 XML');
    return { ...made, pptx, doc, xls, ppt };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * An OLE2 compound file holding empty streams of the given names (one FAT sector, one directory
 * sector): the shape of a legacy Office file, or of an encrypted OOXML package (EncryptionInfo and
 * EncryptedPackage), without their contents.
 */
export function compoundFile(streams: readonly string[]): Buffer {
  if (streams.length > 3) throw new Error('one directory sector holds the root and three streams');
  const FREE = 0xffffffff;
  const END = 0xfffffffe;
  const header = Buffer.alloc(512, 0);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(header, 0);
  header.writeUInt16LE(0x3e, 0x18); header.writeUInt16LE(3, 0x1a); header.writeUInt16LE(0xfffe, 0x1c);
  header.writeUInt16LE(9, 0x1e); header.writeUInt16LE(6, 0x20);
  header.writeUInt32LE(1, 0x2c); // one FAT sector
  header.writeUInt32LE(1, 0x30); // the directory starts at sector 1
  header.writeUInt32LE(4096, 0x38); header.writeUInt32LE(END, 0x3c); header.writeUInt32LE(END, 0x44);
  header.writeUInt32LE(0, 0x4c); // the FAT is sector 0
  for (let i = 1; i < 109; i += 1) header.writeUInt32LE(FREE, 0x4c + i * 4);
  const fat = Buffer.alloc(512, 0xff);
  fat.writeUInt32LE(0xfffffffd, 0); fat.writeUInt32LE(END, 4);
  const directory = Buffer.alloc(512, 0);
  ['Root Entry', ...streams].forEach((name, i) => {
    const at = i * 128;
    directory.write(name, at, 'utf16le');
    directory.writeUInt16LE((name.length + 1) * 2, at + 64);
    directory[at + 66] = i === 0 ? 5 : 2;
    directory.writeUInt32LE(FREE, at + 68); directory.writeUInt32LE(FREE, at + 72);
    directory.writeUInt32LE(i === 0 && streams.length > 0 ? 1 : FREE, at + 76);
    if (i > 0 && i < streams.length) directory.writeUInt32LE(i + 1, at + 72);
    directory.writeUInt32LE(END, at + 116);
  });
  return Buffer.concat([header, fat, directory]);
}

/** The package with every part's declared unpacked size in the central directory set to `size`: a ZIP bomb's shape. */
export function declaringUnpackedSize(zip: Buffer, size: number): Buffer {
  const out = Buffer.from(zip);
  for (let at = out.indexOf('PK\x01\x02'); at >= 0; at = out.indexOf('PK\x01\x02', at + 4)) out.writeUInt32LE(size, at + 24);
  return out;
}

/**
 * A compound file holding one Workbook stream of `content` (padded to 4096 bytes, so it lives in
 * ordinary sectors, not the mini stream): the shape of a legacy Excel file around the records given.
 */
export function workbookFile(content: Buffer): Buffer {
  const stream = Buffer.concat([content, Buffer.alloc(Math.max(0, 4096 - content.length))]);
  const sectors = Math.ceil(stream.length / 512);
  const END = 0xfffffffe;
  const header = compoundFile([]).subarray(0, 512);
  const fat = Buffer.alloc(512, 0xff);
  fat.writeUInt32LE(0xfffffffd, 0); fat.writeUInt32LE(END, 4);
  for (let i = 0; i < sectors; i += 1) fat.writeUInt32LE(i === sectors - 1 ? END : 3 + i, (2 + i) * 4);
  const directory = Buffer.alloc(512, 0);
  ['Root Entry', 'Workbook'].forEach((name, i) => {
    const at = i * 128;
    directory.write(name, at, 'utf16le');
    directory.writeUInt16LE((name.length + 1) * 2, at + 64);
    directory[at + 66] = i === 0 ? 5 : 2;
    directory.writeUInt32LE(0xffffffff, at + 68); directory.writeUInt32LE(0xffffffff, at + 72);
    directory.writeUInt32LE(i === 0 ? 1 : 0xffffffff, at + 76);
    directory.writeUInt32LE(i === 0 ? END : 2, at + 116);
    directory.writeUInt32LE(i === 0 ? 0 : stream.length, at + 120);
  });
  return Buffer.concat([header, fat, directory, stream, Buffer.alloc(sectors * 512 - stream.length)]);
}

/** A BIFF record: type, size, body. */
export function biffRecord(type: number, body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16LE(type, 0); head.writeUInt16LE(body.length, 2);
  return Buffer.concat([head, body]);
}

/** The globals' BOF of a BIFF8 workbook, then `records`, then EOF. */
export function biff8Workbook(...records: Buffer[]): Buffer {
  const bof = Buffer.from('0006050000000000000000000600000000', 'hex').subarray(0, 16);
  return Buffer.concat([biffRecord(0x0809, bof), ...records, biffRecord(0x000a, Buffer.alloc(0))]);
}

const le16 = (value: number) => { const b = Buffer.alloc(2); b.writeUInt16LE(value); return b; };
const le32 = (value: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(value); return b; };
const digest = (name: string, ...parts: Buffer[]) => createHash(name).update(Buffer.concat(parts)).digest();

/** A FILEPASS of XOR obfuscation with the given password verifier (MS-OFFCRYPTO 2.3.7.1; the key is not read). */
export function xorFilePass(verifier: number): Buffer {
  return biffRecord(0x002f, Buffer.concat([le16(0), le16(0x1234), le16(verifier)]));
}

/**
 * A FILEPASS of RC4 CryptoAPI (MS-OFFCRYPTO 2.3.5) made for `password`, as Excel 2002 and later
 * write it: a 40-bit key, a random salt and verifier, the verifier's SHA-1, both encrypted.
 */
export function cryptoApiFilePass(password: string): Buffer {
  const salt = randomBytes(16);
  const verifier = randomBytes(16);
  const provider = Buffer.from('Microsoft Base Cryptographic Provider v1.0\0', 'utf16le');
  // Flags, SizeExtra, AlgID (RC4), AlgIDHash (SHA-1), KeySize 40, ProviderType (PROV_RSA_FULL), two reserved, the provider's name.
  const header = Buffer.concat([le32(0x04), le32(0), le32(0x6801), le32(0x8004), le32(40), le32(1), le32(0), le32(0), provider]);
  const key = Buffer.alloc(16);
  digest('sha1', digest('sha1', salt, Buffer.from(password, 'utf16le')), le32(0)).copy(key, 0, 0, 5);
  const encrypted = rc4(key, Buffer.concat([verifier, digest('sha1', verifier)]));
  const body = Buffer.concat([
    le16(1), le16(4), le16(2), le32(0x04), le32(header.length), header,
    le32(16), salt, encrypted.subarray(0, 16), le32(20), encrypted.subarray(16),
  ]);
  return biffRecord(0x002f, body);
}

/** A FILEPASS of RC4 (MS-OFFCRYPTO 2.3.6.2, Excel 97's scheme) made for `password`. */
export function rc4FilePass(password: string): Buffer {
  const salt = randomBytes(16);
  const verifier = randomBytes(16);
  const h0 = digest('md5', Buffer.from(password, 'utf16le')).subarray(0, 5);
  const intermediate = digest('md5', ...Array.from({ length: 16 }, () => Buffer.concat([h0, salt]))).subarray(0, 5);
  const encrypted = rc4(digest('md5', intermediate, le32(0)), Buffer.concat([verifier, digest('md5', verifier)]));
  return biffRecord(0x002f, Buffer.concat([le16(1), le16(1), le16(1), salt, encrypted]));
}

/**
 * A LibreOffice-made XLS with `filePass` put right after its workbook's BOF, over the records that
 * follow it (the stream keeps its length: a record of filler takes up the rest of what is replaced).
 * The records after it are not encrypted: the result has an encrypted workbook's header only.
 */
export function withFilePass(xls: Buffer, filePass: Buffer): Buffer {
  const out = Buffer.from(xls);
  const bof = out.indexOf(Buffer.from('0908100000060500', 'hex'));
  if (bof < 0) throw new Error('no BIFF8 workbook BOF');
  const start = bof + 20;
  let end = start;
  while (end - start < filePass.length + 4) end += 4 + out.readUInt16LE(end + 2);
  // Filled as a WriteAccess record, the longest of those LibreOffice writes after the BOF.
  Buffer.concat([filePass, biffRecord(0x005c, Buffer.alloc(end - start - filePass.length - 4, 0x20))]).copy(out, start);
  return out;
}
