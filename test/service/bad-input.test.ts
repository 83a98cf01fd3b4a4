// The bad-input matrix: hostile, malformed and out-of-range requests against every operation
// on both surfaces (HTTP multipart and MCP tools) of one running service. Every case asserts the
// exact status and code, that the answer came before any payment (no 402, no PAYMENT-REQUIRED,
// no job started) and that the message names the problem. Afterwards: the job directory is
// empty and the logs hold none of the file names, contents, passwords or schemas that were sent.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import net from 'node:net';
import zlib from 'node:zlib';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestService, type TestService } from '../support/service.js';
import { acroFormPdf, makePdf, textPages } from '../support/pdf-fixtures.js';
import { compoundFile, declaringUnpackedSize, docx, xlsx } from '../support/office-fixtures.js';
import { operations, operationById } from '../../operations/index.js';
import type { Operation } from '../../operations/define.js';
import { runTool } from '../../tools/process/run-tool.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

// Distinctive strings sent in the cases; none may ever reach a log line.
const FILE_NAME = 'Quokka-Payroll-Confidential-4471';
const PDF_MARKER = 'Zanzibarquux';
const MARKDOWN_MARKER = 'Marmalade-Heliotrope-Secret';
const PASSWORD = 'Octarine-Pw-7731';
const WRONG_PASSWORD = 'Wrong-Pw-Xyzzy-9902';
const NEW_PASSWORD = 'Protect-Pw-Saffron-55';
const SCHEMA_MARKER = 'quokkaSecretField';
const SECRETS = [FILE_NAME, PDF_MARKER, MARKDOWN_MARKER, PASSWORD, WRONG_PASSWORD, NEW_PASSWORD, SCHEMA_MARKER];
// Passwords are never echoed, not even to their sender. (A schema error may name the JSON path of
// the mistake inside the sender's own schema; schemas still never reach a log.)
const NEVER_ECHOED = [PASSWORD, WRONG_PASSWORD, NEW_PASSWORD];

const VALID_SCHEMA = JSON.stringify({ type: 'object', properties: { [SCHEMA_MARKER]: { type: 'string' } } });
const MB = 1024 * 1024;

interface Fixtures {
  pdf3: Buffer; pdf31: Buffer; pdf51: Buffer; encrypted: Buffer; truncatedPdf: Buffer; headerOnlyPdf: Buffer;
  hugeCount: Buffer; underCount: Buffer; deepNested: Buffer; inflationBomb: Buffer; loopTree: Buffer; hugePage: Buffer; jpegThenPdf: Buffer;
  png: Buffer; jpeg: Buffer; webp: Buffer; gif: Buffer; svg: Buffer; tiff: Buffer; bmp: Buffer; twoPageTiff: Buffer; truncatedTiff: Buffer;
  truncatedPng: Buffer; truncatedJpeg: Buffer; truncatedWebp: Buffer;
  pngBomb: Buffer; jpegBomb: Buffer; webpBomb: Buffer; pngZip: Buffer; zipPng: Buffer;
  markdown: Buffer; bigMarkdown: Buffer; latin1Markdown: Buffer;
  over50: Buffer;
  docx: Buffer; xlsx: Buffer; encryptedOoxml: Buffer; docxBomb: Buffer;
  html: Buffer; pageZipNested: Buffer; pageZipClimbing: Buffer; pageZipAbsolute: Buffer; pageZipBomb: Buffer;
}
const fx = {} as Fixtures;

// ---- Fixture builders ------------------------------------------------------------------------

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body) >>> 0);
  return Buffer.concat([length, body, crc]);
}

/** A well-formed PNG that declares width x height but carries one row of pixels: a pixel bomb. */
function pngDeclaring(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 0, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr), pngChunk('IDAT', zlib.deflateSync(Buffer.alloc(1 + Math.min(width, 4096)))), pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A PDF written object by object, for page trees and objects no producer would write. */
function rawPdf(objects: string[]): Buffer {
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => { offsets.push(Buffer.byteLength(out, 'latin1')); out += `${i + 1} 0 obj\n${body}\nendobj\n`; });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const CATALOG = '<< /Type /Catalog /Pages 2 0 R >>';
const EMPTY_CONTENT = '<< /Length 0 >>\nstream\n\nendstream';
const pageObject = (extra = '', box = '0 0 595 842') => `<< /Type /Page /Parent 2 0 R /MediaBox [${box}] /Contents 4 0 R${extra} >>`;

/** A stored (uncompressed) ZIP with one entry. */
function zipWith(name: string, data: Buffer): Buffer {
  const crc = zlib.crc32(data) >>> 0;
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18); local.writeUInt32LE(data.length, 22); local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6); central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20); central.writeUInt32LE(data.length, 24); central.writeUInt16LE(name.length, 28);
  const localPart = Buffer.concat([local, Buffer.from(name), data]);
  const centralPart = Buffer.concat([central, Buffer.from(name)]);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(1, 8); end.writeUInt16LE(1, 10);
  end.writeUInt32LE(centralPart.length, 12); end.writeUInt32LE(localPart.length, 16);
  return Buffer.concat([localPart, centralPart, end]);
}

async function buildFixtures(): Promise<void> {
  fx.docx = await docx();
  fx.xlsx = await xlsx();
  fx.encryptedOoxml = compoundFile(['EncryptionInfo', 'EncryptedPackage']);
  fx.docxBomb = declaringUnpackedSize(fx.docx, 300 * MB);
  fx.pdf3 = makePdf(textPages(3, PDF_MARKER));
  fx.pdf31 = makePdf(textPages(31));
  fx.pdf51 = makePdf(textPages(51));
  const scratch = await mkdtemp(path.join('/dev/shm', 'bad-input-'));
  try {
    await writeFile(path.join(scratch, 'in.pdf'), fx.pdf3);
    const enc = await runTool('qpdf', ['--encrypt', PASSWORD, PASSWORD, '256', '--', 'in.pdf', 'enc.pdf'], { cwd: scratch, timeoutMs: 30_000 });
    if (enc.exitCode !== 0) throw new Error('qpdf --encrypt failed');
    fx.encrypted = await readFile(path.join(scratch, 'enc.pdf'));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  fx.truncatedPdf = fx.pdf3.subarray(0, 200);
  fx.headerOnlyPdf = Buffer.from('%PDF-1.7\n%%EOF\n');
  fx.hugeCount = rawPdf([CATALOG, '<< /Type /Pages /Kids [3 0 R] /Count 1000000000 >>', pageObject(), EMPTY_CONTENT]);
  // Three real pages declared as one: priced on /Count it would cost a third of its work.
  fx.underCount = rawPdf([CATALOG, '<< /Type /Pages /Kids [3 0 R 5 0 R 6 0 R] /Count 1 >>', pageObject(), EMPTY_CONTENT, pageObject(), pageObject()]);
  // 2.5 KB whose one content stream inflates (through two Flate layers) to 400 MB of zeros.
  const inflated = zlib.deflateSync(zlib.deflateSync(Buffer.alloc(400 * 1024 * 1024), { level: 9 }), { level: 9 });
  fx.inflationBomb = rawPdf([CATALOG, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', pageObject(),
    `<< /Length ${inflated.length} /Filter [/FlateDecode /FlateDecode] >>\nstream\n${inflated.toString('latin1')}\nendstream`]);
  fx.deepNested = rawPdf([CATALOG, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', pageObject(` /Deep ${'['.repeat(100_000)}${']'.repeat(100_000)}`), EMPTY_CONTENT]);
  fx.loopTree = rawPdf([CATALOG, '<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>', pageObject(), EMPTY_CONTENT]);
  // 200 x 200 inches, the largest page PDF allows: 30000 x 30000 pixels at 150 dpi.
  fx.hugePage = rawPdf([CATALOG, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', pageObject('', '0 0 14400 14400'), EMPTY_CONTENT]);

  const noise = Buffer.alloc(64 * 48 * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 7919) % 251;
  const picture = sharp(noise, { raw: { width: 64, height: 48, channels: 3 } });
  fx.png = await picture.clone().png().toBuffer();
  fx.jpeg = await picture.clone().jpeg({ quality: 95 }).toBuffer();
  fx.webp = await picture.clone().webp({ quality: 90 }).toBuffer();
  fx.gif = await picture.clone().gif().toBuffer();
  fx.tiff = await picture.clone().tiff().toBuffer();
  fx.twoPageTiff = await sharp([fx.tiff, fx.tiff], { join: { animated: true } }).tiff().toBuffer();
  fx.truncatedTiff = fx.tiff.subarray(0, Math.floor(fx.tiff.length * 0.6));
  fx.svg = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image href="http://169.254.169.254/latest/meta-data/"/></svg>');
  fx.bmp = Buffer.concat([Buffer.from('BM'), Buffer.alloc(60)]);
  fx.truncatedPng = fx.png.subarray(0, Math.floor(fx.png.length * 0.6));
  fx.truncatedJpeg = fx.jpeg.subarray(0, Math.floor(fx.jpeg.length * 0.6));
  fx.truncatedWebp = fx.webp.subarray(0, Math.floor(fx.webp.length * 0.6));
  fx.pngBomb = pngDeclaring(100_000, 100_000);
  // The JPEG's frame header patched to 65000 x 65000 (4225 megapixels).
  fx.jpegBomb = Buffer.from(fx.jpeg);
  const sof = fx.jpegBomb.indexOf(Buffer.from([0xff, 0xc0]));
  fx.jpegBomb.writeUInt16BE(65_000, sof + 5);
  fx.jpegBomb.writeUInt16BE(65_000, sof + 7);
  // The lossy WebP's frame header patched to 16383 x 16383 (268 megapixels).
  fx.webpBomb = Buffer.from(fx.webp);
  const vp8 = fx.webpBomb.indexOf('VP8 ');
  fx.webpBomb.writeUInt16LE(16_383, vp8 + 8 + 6);
  fx.webpBomb.writeUInt16LE(16_383, vp8 + 8 + 8);
  fx.pngZip = Buffer.concat([fx.png, zipWith('payload.sh', Buffer.from('#!/bin/sh\necho owned\n'))]);
  fx.zipPng = zipWith('image.png', fx.png);
  fx.jpegThenPdf = Buffer.concat([fx.jpeg, fx.pdf3]);

  fx.markdown = Buffer.from(`# ${MARKDOWN_MARKER}\n\nSome text.\n`);
  fx.bigMarkdown = Buffer.alloc(MB + 1, 'a');
  fx.bigMarkdown.write(`# ${MARKDOWN_MARKER}\n`);
  fx.html = Buffer.from(`<!doctype html><title>${MARKDOWN_MARKER}</title><p>Some text.</p>`);
  fx.pageZipNested = zipWith('site/index.html', fx.html);
  fx.pageZipClimbing = zipWith('../index.html', fx.html);
  fx.pageZipAbsolute = zipWith('/etc/index.html', fx.html);
  // One deflated entry whose directory declares 300 MB: refused from the directory, nothing inflated.
  fx.pageZipBomb = zipWith('index.html', fx.html);
  const central = fx.pageZipBomb.length - 22 - 46 - 'index.html'.length;
  fx.pageZipBomb.writeUInt16LE(8, central + 10);
  fx.pageZipBomb.writeUInt32LE(300 * MB, central + 24);
  fx.latin1Markdown = Buffer.from(`# ${MARKDOWN_MARKER}\n\nCaf\xe9 cr\xe8me\n`, 'latin1');
  fx.over50 = Buffer.alloc(50 * MB + 1);
}

// ---- The matrix ---------------------------------------------------------------------------------

interface Expectation { status: number; code: string; message: RegExp }
interface Upload { bytes: Buffer; name?: string; type?: string }
type HttpRequest =
  | { files: Upload[]; fields?: Record<string, string | string[]>; extraParts?: Array<{ name: string; bytes: Buffer; filename: string }> }
  | { raw: Buffer | string; contentType?: string };
interface HttpCase extends Expectation { surface: 'http'; name: string; op: Operation; request: () => HttpRequest }
interface McpCase extends Expectation { surface: 'mcp'; name: string; op: Operation | undefined; tool: string; args: () => Record<string, unknown> }
type Case = HttpCase | McpCase;

const cases: Case[] = [];
const op = (id: string) => operationById(id);
const IMAGE_OPS = operations.filter((o) => o.input.kind === 'image');
const PDF_OPS = operations.filter((o) => o.input.kind === 'pdf');
const MERGE_OPS = PDF_OPS.filter((o) => o.input.count.max > 1);

/** Fields that make a request valid apart from what a case breaks. */
const VALID_FIELDS: Record<string, Record<string, string | number>> = {
  'image.resize': { width: 10 }, 'image.crop': { width: 5, height: 5 }, 'image.rotate': { angle: 90 }, 'image.flip': { direction: 'horizontal' },
  'pdf.pages': { pages: '1' }, 'pdf.split': { ranges: '1' }, 'pdf.protect': { password: NEW_PASSWORD },
  'pdf.unlock': { password: PASSWORD }, 'pdf.structured': { schema: VALID_SCHEMA }, 'pdf.redact': { text: JSON.stringify([PDF_MARKER]) },
  'pdf.stamp': { text: 'Page {n} of {total}' },
  'pdf.form-fill': { values: '{"name":"Ada"}' }, 'pdf.set-metadata': { title: 'A title' },
};
const validFields = (o: Operation) => VALID_FIELDS[o.id] ?? {};
const asStrings = (fields: Record<string, string | number>) => Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)]));
const validFile = (o: Operation): Buffer => (o.input.kind === 'image' || o.input.kind === 'page-image' ? fx.png : o.input.kind === 'markdown' ? fx.markdown : o.input.kind === 'office' ? fx.docx : o.input.kind === 'web' ? fx.html : o.id === 'pdf.unlock' ? fx.encrypted : fx.pdf3);
const upload = (bytes: Buffer, ext = 'bin', type?: string): Upload => ({ bytes, name: `${FILE_NAME}.${ext}`, ...(type ? { type } : {}) });
/** The op's file(s) with `bad` in the place a case tests: merges get a good first file and the bad one second. */
const filesWith = (o: Operation, bad: Buffer, ext = 'pdf', type?: string): Upload[] => (o.input.count.max > 1 ? [upload(fx.pdf3, 'pdf'), upload(bad, ext, type)] : [upload(bad, ext, type)]);
const b64 = (bytes: Buffer) => ({ data: bytes.toString('base64') });
const mcpFilesWith = (o: Operation, bad: Buffer | { data: unknown }) => {
  const arg = Buffer.isBuffer(bad) ? b64(bad) : bad;
  return o.input.count.max > 1 ? { files: [b64(fx.pdf3), arg] } : { file: arg };
};
const which = (o: Operation) => (o.input.count.max > 1 ? 'file 2: ' : '');

function http(name: string, o: Operation, expectation: Expectation, request: () => HttpRequest): void {
  cases.push({ surface: 'http', name, op: o, request, ...expectation });
}
function mcp(name: string, o: Operation, expectation: Expectation, args: () => Record<string, unknown>): void {
  cases.push({ surface: 'mcp', name, op: o, tool: o.tool, args, ...expectation });
}
const e = (status: number, code: string, message: RegExp): Expectation => ({ status, code, message });

// 1. Every operation, both surfaces: the file missing, and a field the operation does not have.
for (const o of operations) {
  const named = { image: 'a JPEG, PNG, WebP or AVIF image', 'page-image': 'a JPEG, PNG, WebP, AVIF or TIFF image', pdf: 'a PDF', markdown: 'UTF-8 Markdown', office: 'an Office document \\(DOCX, XLSX, PPTX, ODT, ODS, ODP, RTF, DOC, XLS or PPT\\)', web: 'an HTML document, or a ZIP of a page' };
  // from-url takes no file: its page's url is what is missing, and the unknown field comes beside a url.
  const fileless = o.input.count.max === 0;
  const pageUrl: Record<string, string> = fileless ? { url: 'https://example.com/' } : {};
  const missing = fileless ? /"url" is required/
    : new RegExp(`"file" is required: ${named[o.input.kind]}`);
  http(`${o.path}: no file`, o, e(422, 'FIELD_INVALID', missing), () => ({ files: [], fields: asStrings(validFields(o)) }));
  mcp(`${o.tool}: no file`, o, e(422, 'FIELD_INVALID', missing), () => ({ ...validFields(o) }));
  const unknown = new RegExp(`"colour" is not a field of ${o.path.replace(/\//g, '\\/')}`);
  http(`${o.path}: unknown field "colour"`, o, e(422, 'FIELD_INVALID', unknown),
    () => ({
      files: fileless ? [] : o.input.count.max > 1 ? [upload(validFile(o)), upload(validFile(o))] : [upload(validFile(o))],
      fields: { ...asStrings(validFields(o)), ...pageUrl, colour: 'red' },
    }));
  mcp(`${o.tool}: unknown argument "colour"`, o, e(422, 'FIELD_INVALID', unknown),
    () => ({
      ...(fileless ? {} : o.input.count.max > 1 ? { files: [b64(validFile(o)), b64(validFile(o))] } : { file: b64(validFile(o)) }),
      ...validFields(o), ...pageUrl, colour: 'red',
    }));
}

// 2. PDF operations: files that are not PDFs, cut short, empty, encrypted or mislabelled.
for (const o of PDF_OPS) {
  const f = asStrings(validFields(o));
  const w = which(o);
  http(`${o.path}: a PNG sent as a PDF`, o, e(422, 'UNSUPPORTED_TYPE', new RegExp(`^${w}the file is not a PDF: it looks like a PNG image`)), () => ({ files: filesWith(o, fx.png, 'pdf', 'application/pdf'), fields: f }));
  http(`${o.path}: a PDF cut short after 200 bytes`, o, e(422, 'CORRUPT_INPUT', new RegExp(`^${w}the PDF cannot be read`)), () => ({ files: filesWith(o, fx.truncatedPdf), fields: f }));
  http(`${o.path}: an empty file`, o, e(422, 'UNSUPPORTED_TYPE', new RegExp(`^${w}the file is not a PDF: it looks like an empty file`)), () => ({ files: filesWith(o, Buffer.alloc(0)), fields: f }));
  http(`${o.path}: a whole JPEG with a PDF appended (polyglot)`, o, e(422, 'UNSUPPORTED_TYPE', /not a PDF: it looks like a JPEG image/), () => ({ files: filesWith(o, fx.jpegThenPdf), fields: f }));
  mcp(`${o.tool}: a truncated PDF`, o, e(422, 'CORRUPT_INPUT', new RegExp(`^${w}the PDF cannot be read`)), () => ({ ...mcpFilesWith(o, fx.truncatedPdf), ...validFields(o) }));
  if (o.input.acceptsEncrypted) continue;
  http(`${o.path}: a password-protected PDF`, o, e(422, 'ENCRYPTED_PDF', new RegExp(`^${w}the PDF is password-protected; remove the password with /v1/pdf/unlock first`)), () => ({ files: filesWith(o, fx.encrypted), fields: f }));
  mcp(`${o.tool}: a password-protected PDF`, o, e(422, 'ENCRYPTED_PDF', /password-protected/), () => ({ ...mcpFilesWith(o, fx.encrypted), ...validFields(o) }));
  http(`${o.path}: a page tree declaring 1000000000 pages`, o, e(422, 'CORRUPT_INPUT', /declares 1000000000 pages but holds 1/), () => ({ files: filesWith(o, fx.hugeCount), fields: f }));
}
{
  const unlock = op('pdf.unlock');
  http('/v1/pdf/unlock: the wrong password', unlock, e(422, 'WRONG_PASSWORD', /^the password does not open the PDF$/), () => ({ files: [upload(fx.encrypted, 'pdf')], fields: { password: WRONG_PASSWORD } }));
  mcp('svc_pdf_unlock: the wrong password', unlock, e(422, 'WRONG_PASSWORD', /^the password does not open the PDF$/), () => ({ file: b64(fx.encrypted), password: WRONG_PASSWORD }));
  http('/v1/pdf/unlock: a PDF that is not encrypted', unlock, e(422, 'NO_CONTENT', /not password-protected: there is nothing to unlock/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { password: PASSWORD } }));
  http('/v1/pdf/unlock: no password', unlock, e(422, 'FIELD_INVALID', /^"password" is required/), () => ({ files: [upload(fx.encrypted, 'pdf')] }));
  http('/v1/pdf/unlock: an empty password', unlock, e(422, 'FIELD_INVALID', /^"password" must be a string of 1 to 1024 characters/), () => ({ files: [upload(fx.encrypted, 'pdf')], fields: { password: '' } }));
  mcp('svc_pdf_unlock: a list as the password', unlock, e(422, 'FIELD_INVALID', /^"password" has 1 value in a list; send one value/), () => ({ file: b64(fx.encrypted), password: [PASSWORD] }));
  mcp('svc_pdf_unlock: a number as the password', unlock, e(422, 'FIELD_INVALID', /^"password" must be a string of 1 to 1024 characters/), () => ({ file: b64(fx.encrypted), password: 7731 }));
  const protect = op('pdf.protect');
  http('/v1/pdf/protect: a 257-character password', protect, e(422, 'FIELD_INVALID', /^"password" must be a string of 1 to 127 bytes in UTF-8/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { password: NEW_PASSWORD.padEnd(257, 'x') } }));
  http('/v1/pdf/protect: no password', protect, e(422, 'FIELD_INVALID', /^"password" is required/), () => ({ files: [upload(fx.pdf3, 'pdf')] }));
  http('/v1/pdf/protect: the password sent twice', protect, e(422, 'FIELD_INVALID', /^"password" has 2 values \(the field repeated, or a list\); send one value/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { password: [NEW_PASSWORD, PASSWORD] } }));
  const redact = op('pdf.redact');
  const redactWith = (fields: Record<string, string>) => () => ({ files: [upload(fx.pdf3, 'pdf')], fields });
  http('/v1/pdf/redact: nothing to redact', redact, e(422, 'FIELD_INVALID', /^redact needs something to redact: at least one entry in "text", "regex" or "areas"/), redactWith({ text: '[]' }));
  http('/v1/pdf/redact: text that is not JSON', redact, e(422, 'FIELD_INVALID', /^text must be a JSON array; it is not valid JSON/), redactWith({ text: PDF_MARKER }));
  http('/v1/pdf/redact: text that is a JSON object', redact, e(422, 'FIELD_INVALID', /^text must be a JSON array$/), redactWith({ text: '{"a":1}' }));
  http('/v1/pdf/redact: an empty string in text', redact, e(422, 'FIELD_INVALID', /^text\[1\] must be a non-empty string/), redactWith({ text: JSON.stringify([PDF_MARKER, ' ']) }));
  http('/v1/pdf/redact: 51 strings in text', redact, e(422, 'FIELD_INVALID', /^text holds 51 entries; at most 50 are taken/), redactWith({ text: JSON.stringify(Array.from({ length: 51 }, (_, i) => `w${i}`)) }));
  http('/v1/pdf/redact: a backreference in regex', redact, e(422, 'FIELD_INVALID', /^regex\[0\] is refused: it cannot run in linear time/), redactWith({ regex: JSON.stringify(['(a)\\1']) }));
  http('/v1/pdf/redact: a lookahead in regex', redact, e(422, 'FIELD_INVALID', /^regex\[0\] is refused: it cannot run in linear time/), redactWith({ regex: JSON.stringify(['x(?=y)']) }));
  http('/v1/pdf/redact: a repetition count over 16 in regex', redact, e(422, 'FIELD_INVALID', /^regex\[0\] is refused: it cannot run in linear time/), redactWith({ regex: JSON.stringify(['\\d{1,40}']) }));
  http('/v1/pdf/redact: an invalid regex', redact, e(422, 'FIELD_INVALID', /^regex\[1\] is refused: it is not a valid regular expression/), redactWith({ regex: JSON.stringify(['ok', '(unclosed']) }));
  http('/v1/pdf/redact: a regex matching the empty string', redact, e(422, 'FIELD_INVALID', /^regex\[0\] matches the empty string/), redactWith({ regex: JSON.stringify(['a*']) }));
  http('/v1/pdf/redact: a \\p{…} class in regex', redact, e(422, 'FIELD_INVALID', /^regex\[0\] uses a \\p\{…\} class/), redactWith({ regex: JSON.stringify(['\\p{Lu}+']) }));
  http('/v1/pdf/redact: an area on page 4 of 3', redact, e(422, 'FIELD_INVALID', /^areas\[0\]\.page is 4, but the PDF has 3 pages/), redactWith({ areas: JSON.stringify([{ page: 4, x: 0, y: 0, width: 10, height: 10 }]) }));
  http('/v1/pdf/redact: an area of width 0', redact, e(422, 'FIELD_INVALID', /^areas\[0\] must have a positive width and height/), redactWith({ areas: JSON.stringify([{ page: 1, x: 0, y: 0, width: 0, height: 10 }]) }));
  http('/v1/pdf/redact: an area past the page\'s right edge', redact, e(422, 'FIELD_INVALID', /^areas\[1\] is not on page 2, which is 595 x 842 points/), redactWith({ areas: JSON.stringify([{ page: 1, x: 0, y: 0, width: 5, height: 5 }, { page: 2, x: 500, y: 0, width: 200, height: 10 }]) }));
  http('/v1/pdf/redact: an area with a string for x', redact, e(422, 'FIELD_INVALID', /^areas\[0\]\.x must be a number/), redactWith({ areas: JSON.stringify([{ page: 1, x: '0', y: 0, width: 5, height: 5 }]) }));
  http('/v1/pdf/redact: an area with an unknown key', redact, e(422, 'FIELD_INVALID', /^areas\[0\] has keys other than page, x, y, width and height/), redactWith({ areas: JSON.stringify([{ page: 1, x: 0, y: 0, width: 5, height: 5, colour: 'red' }]) }));
  http('/v1/pdf/redact: attachments "keep"', redact, e(422, 'FIELD_INVALID', /^"attachments" must be one of "redact", "remove"/), redactWith({ text: JSON.stringify([PDF_MARKER]), attachments: 'keep' }));
  mcp('svc_pdf_redact: an area above the page', redact, e(422, 'FIELD_INVALID', /^areas\[0\] starts off the page/), () => ({ file: b64(fx.pdf3), areas: JSON.stringify([{ page: 1, x: 0, y: -5, width: 5, height: 5 }]) }));
  mcp('svc_pdf_redact: a backreference in regex', redact, e(422, 'FIELD_INVALID', /^regex\[0\] is refused: it cannot run in linear time/), () => ({ file: b64(fx.pdf3), regex: JSON.stringify(['(a)\\1']) }));
  const sanitize = op('pdf.sanitize');
  http('/v1/pdf/sanitize: keep_links "maybe"', sanitize, e(422, 'FIELD_INVALID', /^"keep_links" must be one of "true", "false"/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { keep_links: 'maybe' } }));
  mcp('svc_pdf_sanitize: keep_links as a boolean', sanitize, e(422, 'FIELD_INVALID', /^"keep_links" must be one of "true", "false"/), () => ({ file: b64(fx.pdf3), keep_links: false }));
  const stamp = op('pdf.stamp');
  // The image is named by its fixture's key: the fixtures are built after the cases are listed.
  const stampWith = (fields: Record<string, string>, image?: keyof Fixtures | (() => Buffer)) => () => {
    const bytes = image === undefined ? undefined : typeof image === 'function' ? image() : fx[image];
    return { files: [upload(fx.pdf3, 'pdf')], fields, ...(bytes ? { extraParts: [{ name: 'image', bytes, filename: `${FILE_NAME}.img` }] } : {}) };
  };
  http('/v1/pdf/stamp: neither text nor image', stamp, e(422, 'FIELD_INVALID', /^\/v1\/pdf\/stamp needs "text" or an "image" to stamp; neither was sent/), stampWith({ position: 'top' }));
  http('/v1/pdf/stamp: both text and image', stamp, e(422, 'FIELD_INVALID', /^send either "text" or "image", not both/), stampWith({ text: 'x' }, 'png'));
  http('/v1/pdf/stamp: Cyrillic text (no glyph in Helvetica)', stamp, e(422, 'FIELD_INVALID', /^"text" holds U\+0416 \(Ж\) at character 7, which the stamp's font \(Helvetica\) cannot show/), stampWith({ text: 'Draft Ж' }));
  mcp('svc_pdf_stamp: a line break in text', stamp, e(422, 'FIELD_INVALID', /^"text" holds U\+000A at character 2/), () => ({ file: b64(fx.pdf3), text: 'a\nb' }));
  http('/v1/pdf/stamp: color "red"', stamp, e(422, 'FIELD_INVALID', /^"color" must be a colour as #rrggbb \(six hexadecimal digits\); received "red"/), stampWith({ text: 'x', color: 'red' }));
  http('/v1/pdf/stamp: opacity 1.5', stamp, e(422, 'FIELD_INVALID', /^"opacity" must be a number from 0 to 1; received 1.5/), stampWith({ text: 'x', opacity: '1.5' }));
  http('/v1/pdf/stamp: position "middle"', stamp, e(422, 'FIELD_INVALID', /^"position" must be one of "center", "top-left"/), stampWith({ text: 'x', position: 'middle' }));
  http('/v1/pdf/stamp: pages "4" of 3', stamp, e(422, 'FIELD_INVALID', /^pages: page 4 does not exist: the PDF has 3 pages/), stampWith({ text: 'x', pages: '4' }));
  http('/v1/pdf/stamp: digits 13', stamp, e(422, 'FIELD_INVALID', /^"digits" must be an integer from 1 to 12; received 13/), stampWith({ text: 'x', digits: '13' }));
  http('/v1/pdf/stamp: image_width with text', stamp, e(422, 'FIELD_INVALID', /^"image_width" applies to an image stamp/), stampWith({ text: 'x', image_width: '100' }));
  http('/v1/pdf/stamp: a WebP image', stamp, e(422, 'UNSUPPORTED_TYPE', /^"image": the file is a WEBP image; "image" takes PNG or JPEG images/), stampWith({}, 'webp'));
  http('/v1/pdf/stamp: a TIFF image', stamp, e(422, 'UNSUPPORTED_TYPE', /^"image": the file is a TIFF image; "image" takes PNG or JPEG images/), stampWith({}, 'tiff'));
  http('/v1/pdf/stamp: a PNG declaring 100000 x 100000 pixels', stamp, e(413, 'LIMIT_EXCEEDED', /^"image": the image declares 100000 x 100000 pixels/), stampWith({}, 'pngBomb'));
  http('/v1/pdf/stamp: a truncated JPEG image', stamp, e(422, 'CORRUPT_INPUT', /^"image": the JPEG file is cut short/), stampWith({}, 'truncatedJpeg'));
  http('/v1/pdf/stamp: an image over 10 MB', stamp, e(413, 'PAYLOAD_TOO_LARGE', /^"image" is \d+ bytes; the limit is 10485760 bytes \(10 MB\)/), stampWith({}, () => Buffer.concat([fx.png, Buffer.alloc(10 * MB)])));
  mcp('svc_pdf_stamp: the image as a string', stamp, e(422, 'FIELD_INVALID', /^image must be an object \{ "data": <standard base64>, "mediaType"\? \} or \{ "url": "https:\/\/…" \}/), () => ({ file: b64(fx.pdf3), image: 'logo.png' }));
  mcp('svc_pdf_stamp: a GIF image', stamp, e(501, 'NOT_IMPLEMENTED', /^"image": GIF input is not supported yet/), () => ({ file: b64(fx.pdf3), image: b64(fx.gif) }));
  mcp('svc_pdf_stamp: opacity "half"', stamp, e(422, 'FIELD_INVALID', /^"opacity" must be a number from 0 to 1; received "half"/), () => ({ file: b64(fx.pdf3), text: 'x', opacity: 'half' }));
  mcp('svc_pdf_stamp: a Greek letter in text', stamp, e(422, 'FIELD_INVALID', /^"text" holds U\+03A9 \(Ω\) at character 1/), () => ({ file: b64(fx.pdf3), text: 'Ω {n}' }));
  const formFill = op('pdf.form-fill');
  const fillWith = (values: string, extra: Record<string, string> = {}) => () => ({ files: [upload(acroFormPdf(), 'pdf')], fields: { values, ...extra } });
  http('/v1/pdf/form-fill: values not JSON', formFill, e(422, 'FIELD_INVALID', /^values must be a JSON object of field names to values; it is not valid JSON/), fillWith('{"name"'));
  http('/v1/pdf/form-fill: values a JSON array', formFill, e(422, 'FIELD_INVALID', /^values must be a JSON object of field names to values, such as/), fillWith('["Ada"]'));
  http('/v1/pdf/form-fill: values an empty object', formFill, e(422, 'FIELD_INVALID', /^values names no field/), fillWith('{ }'));
  http('/v1/pdf/form-fill: a number as a value', formFill, e(422, 'FIELD_INVALID', /^values: "name" must be a string, or true or false for a checkbox/), fillWith('{"name":3}'));
  http('/v1/pdf/form-fill: a name the form lacks', formFill, e(422, 'FIELD_INVALID', /^values: the form has no field named "nmae"/), fillWith('{"nmae":"Ada"}'));
  http('/v1/pdf/form-fill: a radio option that does not exist', formFill, e(422, 'FIELD_INVALID', /^values: "color" is a radio group: its value is one of "red", "blue"/), fillWith('{"color":"green"}'));
  http('/v1/pdf/form-fill: a string for a checkbox', formFill, e(422, 'FIELD_INVALID', /^values: "agree" is a checkbox: its value is true or false/), fillWith('{"agree":"yes"}'));
  http('/v1/pdf/form-fill: a text over its MaxLen', formFill, e(422, 'FIELD_INVALID', /^values: "name" takes at most 40 characters/), fillWith(JSON.stringify({ name: 'x'.repeat(41) })));
  http('/v1/pdf/form-fill: a PDF without a form', formFill, e(422, 'FIELD_INVALID', /^values: the form has no field named "name"/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { values: '{"name":"Ada"}' } }));
  http('/v1/pdf/form-fill: flatten "maybe"', formFill, e(422, 'FIELD_INVALID', /^"flatten" must be true or false; received "maybe"/), fillWith('{"name":"Ada"}', { flatten: 'maybe' }));
  mcp('svc_pdf_form_fill: values as an object, not a string', formFill, e(422, 'FIELD_INVALID', /^"values" must be a string/), () => ({ file: b64(acroFormPdf()), values: { name: 'Ada' } }));
  mcp('svc_pdf_form_fill: a signature given a value', formFill, e(422, 'FIELD_INVALID', /^values: "signature" is a signature field: it is signed, not filled/), () => ({ file: b64(acroFormPdf()), values: '{"signature":"me"}' }));
  for (const o of [op('pdf.form-fields'), formFill, op('pdf.flatten')]) {
    http(`${o.path}: an XFA form`, o, e(422, 'UNSUPPORTED_TYPE', /^the PDF holds an XFA form/), () => ({ files: [upload(acroFormPdf({ xfa: true }), 'pdf')], fields: asStrings(validFields(o)) }));
    mcp(`${o.tool}: an XFA form`, o, e(422, 'UNSUPPORTED_TYPE', /^the PDF holds an XFA form/), () => ({ file: b64(acroFormPdf({ xfa: true })), ...validFields(o) }));
  }
  const setMetadata = op('pdf.set-metadata');
  http('/v1/pdf/set-metadata: no field', setMetadata, e(422, 'FIELD_INVALID', /^set-metadata needs at least one of title, author, subject, keywords, creator; none was sent/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: {} }));
  http('/v1/pdf/set-metadata: a title of 4097 characters', setMetadata, e(422, 'FIELD_INVALID', /^"title" must be a string of at most 4096 characters/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { title: 't'.repeat(4097) } }));
  mcp('svc_pdf_set_metadata: a number for author', setMetadata, e(422, 'FIELD_INVALID', /^"author" must be a string of at most 4096 characters/), () => ({ file: b64(fx.pdf3), author: 42 }));
  const blocks = op('pdf.blocks');
  for (const chunkChars of ['199', '100001', '0', '-500', '1500.5', '2e3', 'many', ' 800']) {
    http(`/v1/pdf/blocks: chunk_chars "${chunkChars}"`, blocks, e(422, 'FIELD_INVALID', /^"chunk_chars" must be an integer from 200 to 100000; received /), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { chunk_chars: chunkChars } }));
  }
  for (const chunkChars of [199, 100001, 512.5, '1e3', null, true]) {
    mcp(`svc_pdf_blocks: chunk_chars ${JSON.stringify(chunkChars)}`, blocks, e(422, 'FIELD_INVALID', /^"chunk_chars" must be an integer from 200 to 100000/), () => ({ file: b64(fx.pdf3), chunk_chars: chunkChars }));
  }
  http('/v1/pdf/blocks: chunk_chars sent twice', blocks, e(422, 'FIELD_INVALID', /^"chunk_chars" has 2 values \(the field repeated, or a list\); send one value/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { chunk_chars: ['500', '600'] } }));
}

// 3. Hostile PDF structure: lying page counts, nesting, loops, giant pages.
{
  const compress = op('pdf.compress');
  for (const o of [compress, op('pdf.split'), op('pdf.render')]) {
    http(`${o.path}: 3 pages declared as /Count 1 (underpricing)`, o, e(422, 'CORRUPT_INPUT', /declares 1 pages but holds 3/), () => ({ files: [upload(fx.underCount, 'pdf')], fields: asStrings(validFields(o)) }));
    http(`${o.path}: a page object nested 100000 arrays deep`, o, e(422, 'CORRUPT_INPUT', /nested too deeply/), () => ({ files: [upload(fx.deepNested, 'pdf')], fields: asStrings(validFields(o)) }));
    http(`${o.path}: a page tree that contains itself`, o, e(422, 'CORRUPT_INPUT', /page tree is broken/), () => ({ files: [upload(fx.loopTree, 'pdf')], fields: asStrings(validFields(o)) }));
  }
  mcp('svc_pdf_extract: a page tree declaring 1000000000 pages', op('pdf.extract'), e(422, 'CORRUPT_INPUT', /declares 1000000000 pages but holds 1/), () => ({ file: b64(fx.hugeCount) }));
  mcp('svc_pdf_extract: a page object nested 100000 arrays deep', op('pdf.extract'), e(422, 'CORRUPT_INPUT', /nested too deeply/), () => ({ file: b64(fx.deepNested) }));
  const render = op('pdf.render');
  http('/v1/pdf/render: a 200 x 200 inch page (900 megapixels at 150 dpi)', render, e(413, 'LIMIT_EXCEEDED', /page 1 would render at 30000 x 30000 pixels at 150 dpi/), () => ({ files: [upload(fx.hugePage, 'pdf')] }));
  mcp('svc_pdf_render: a 200 x 200 inch page at 300 dpi', render, e(413, 'LIMIT_EXCEEDED', /page 1 would render at 60000 x 60000 pixels at 300 dpi/), () => ({ file: b64(fx.hugePage), dpi: 300 }));
  http('/v1/pdf/render: 51 pages', render, e(413, 'LIMIT_EXCEEDED', /the PDF has 51 pages; \/v1\/pdf\/render takes at most 50/), () => ({ files: [upload(fx.pdf51, 'pdf')] }));
  const searchable = op('pdf.searchable');
  http('/v1/pdf/searchable: 51 pages', searchable, e(413, 'LIMIT_EXCEEDED', /the PDF has 51 pages; \/v1\/pdf\/searchable takes at most 50/), () => ({ files: [upload(fx.pdf51, 'pdf')] }));
  mcp('svc_pdf_searchable: 51 pages', searchable, e(413, 'LIMIT_EXCEEDED', /the PDF has 51 pages/), () => ({ file: b64(fx.pdf51) }));
  http('/v1/pdf/searchable: a 200 x 200 inch page (too large to draw at 400 dpi)', searchable, e(413, 'LIMIT_EXCEEDED', /page 1 is too large to read: at 400 dpi it is 80000 x 80000 pixels/), () => ({ files: [upload(fx.hugePage, 'pdf')] }));
}

// 3b. The languages of /v1/pdf/searchable: only installed packs, by code, comma-separated.
{
  const searchable = op('pdf.searchable');
  const languageCases: Array<[string, RegExp]> = [
    ['klingon', /^"languages" holds "klingon", not among the installed language packs: eng, deu, fra, spa, ita, por/],
    ['eng+deu', /^"languages" holds "eng\+deu"/],
    ['eng,,deu', /^"languages" holds an empty code/],
    ['deu,deu', /^"languages" names a language twice/],
    ['eng,deu,fra,spa', /^"languages" names 4 languages; at most 3 are read at once/],
    ['osd', /^"languages" holds "osd"/],
  ];
  for (const [value, message] of languageCases) {
    http(`/v1/pdf/searchable: languages "${value}"`, searchable, e(422, 'FIELD_INVALID', message), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { languages: value } }));
  }
  http('/v1/pdf/searchable: languages of 65 characters', searchable, e(422, 'FIELD_INVALID', /^"languages" must be a string of 3 to 64 characters/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { languages: 'e'.repeat(65) } }));
  mcp('svc_pdf_searchable: languages "chi_sim"', searchable, e(422, 'FIELD_INVALID', /^"languages" holds "chi_sim", not among the installed language packs/), () => ({ file: b64(fx.pdf3), languages: 'chi_sim' }));
  mcp('svc_pdf_searchable: languages as an array', searchable, e(422, 'FIELD_INVALID', /^"languages" has 2 values \(the field repeated, or a list\); send one value/), () => ({ file: b64(fx.pdf3), languages: ['eng', 'deu'] }));
  http('/v1/pdf/searchable: a PNG sent as a PDF', searchable, e(422, 'UNSUPPORTED_TYPE', /^the file is not a PDF: it looks like a PNG image/), () => ({ files: [upload(fx.png, 'pdf', 'application/pdf')], fields: { languages: 'eng' } }));
}

// 4. Page ranges and integers.
{
  const pages = op('pdf.pages');
  const pageCases: Array<[string, RegExp]> = [
    ['0', /pages: page 0 does not exist: pages are numbered from 1/],
    ['5-3', /pages: page 5 does not exist: the PDF has 3 pages/],
    ['3-1', /pages: range 3-1 is reversed/],
    ['1,,2', /pages: item 2 is empty/],
    ['abc', /pages: "abc" is not a page number, a range a-b or z/],
    ['99', /pages: page 99 does not exist: the PDF has 3 pages/],
    ['1-', /pages: "1-" is not a page number/],
    ['-2', /pages: "-2" is not a page number/],
  ];
  for (const [value, message] of pageCases) {
    http(`/v1/pdf/pages: pages "${value}" on a 3-page PDF`, pages, e(422, 'FIELD_INVALID', message), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { pages: value } }));
  }
  mcp('svc_pdf_pages: pages "99" on a 3-page PDF', pages, e(422, 'FIELD_INVALID', /page 99 does not exist/), () => ({ file: b64(fx.pdf3), pages: '99' }));
  http('/v1/pdf/pages: pages "" and no rotate', pages, e(422, 'FIELD_INVALID', /at least one of "pages" and "rotate"; neither was sent/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { pages: '' } }));
  http('/v1/pdf/pages: rotate 45', pages, e(422, 'FIELD_INVALID', /^"rotate" must be one of the integers 90, 180, 270; received 45/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { rotate: '45' } }));
  mcp('svc_pdf_pages: rotate 90.5', pages, e(422, 'FIELD_INVALID', /^"rotate" must be one of the integers 90, 180, 270/), () => ({ file: b64(fx.pdf3), rotate: 90.5 }));
  const split = op('pdf.split');
  http('/v1/pdf/split: 51 ranges', split, e(413, 'LIMIT_EXCEEDED', /ranges holds 51 ranges; at most 50 are allowed/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { ranges: Array(51).fill('1').join(',') } }));
  mcp('svc_pdf_split: 51 ranges', split, e(413, 'LIMIT_EXCEEDED', /ranges holds 51 ranges/), () => ({ file: b64(fx.pdf3), ranges: Array(51).fill('1-2').join(',') }));
  http('/v1/pdf/split: ranges ""', split, e(422, 'FIELD_INVALID', /^"ranges" must be a string of 1 to 4096 characters/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { ranges: '' } }));
  http('/v1/pdf/split: ranges "z-1"', split, e(422, 'FIELD_INVALID', /ranges: range z-1 is reversed \(3 comes after 1\)/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { ranges: 'z-1' } }));
  http('/v1/pdf/split: no ranges', split, e(422, 'FIELD_INVALID', /^"ranges" is required/), () => ({ files: [upload(fx.pdf3, 'pdf')] }));
  http('/v1/pdf/split: ranges sent twice', split, e(422, 'FIELD_INVALID', /^"ranges" has 2 values \(the field repeated, or a list\)/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { ranges: ['1', '2'] } }));
  http('/v1/pdf/split: ranges of 4097 characters', split, e(422, 'FIELD_INVALID', /^"ranges" must be a string of 1 to 4096 characters/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { ranges: '1,'.repeat(2048) + '1' } }));

  const render = op('pdf.render');
  for (const dpi of ['35', '301', '1.5', '-3', '1e3', ' 12', 'NaN', '150dpi']) {
    http(`/v1/pdf/render: dpi "${dpi}"`, render, e(422, 'FIELD_INVALID', /^"dpi" must be an integer from 36 to 300; received /), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { dpi } }));
  }
  for (const dpi of [35, 72.5, '1e2', null, true]) {
    mcp(`svc_pdf_render: dpi ${JSON.stringify(dpi)}`, render, e(422, 'FIELD_INVALID', /^"dpi" must be an integer from 36 to 300/), () => ({ file: b64(fx.pdf3), dpi }));
  }
  const compress = op('pdf.compress');
  http('/v1/pdf/compress: level "ultra"', compress, e(422, 'FIELD_INVALID', /^"level" must be one of "lossless", "balanced", "max"; received "ultra"/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { level: 'ultra' } }));
  mcp('svc_pdf_merge_compress: level 3', op('pdf.merge-compress'), e(422, 'FIELD_INVALID', /^"level" must be one of "lossless", "balanced", "max"/), () => ({ files: [b64(fx.pdf3), b64(fx.pdf3)], level: 3 }));

  const imageCompress = op('image.compress');
  for (const quality of ['1.5', '-3', '1e3', ' 12', 'NaN', '0', '101', '0x10', '+5']) {
    http(`/v1/image/compress: quality "${quality}"`, imageCompress, e(422, 'FIELD_INVALID', /^"quality" must be an integer from 1 to 100; received /), () => ({ files: [upload(fx.png, 'png')], fields: { quality } }));
  }
  for (const quality of [1.5, -3, 101, 'NaN', [90, 80]]) {
    const message = Array.isArray(quality) ? /^"quality" has 2 values \(the field repeated, or a list\)/ : /^"quality" must be an integer from 1 to 100/;
    mcp(`svc_image_compress: quality ${JSON.stringify(quality)}`, imageCompress, e(422, 'FIELD_INVALID', message), () => ({ file: b64(fx.png), quality }));
  }
  http('/v1/image/compress: quality sent twice', imageCompress, e(422, 'FIELD_INVALID', /^"quality" has 2 values \(the field repeated, or a list\); send one value/), () => ({ files: [upload(fx.png, 'png')], fields: { quality: ['80', '90'] } }));
  http('/v1/image/compress: colors "1"', imageCompress, e(422, 'FIELD_INVALID', /^"colors" must be an integer from 2 to 256; received 1/), () => ({ files: [upload(fx.png, 'png')], fields: { colors: '1' } }));
  http('/v1/image/compress: colors "257"', imageCompress, e(422, 'FIELD_INVALID', /^"colors" must be an integer from 2 to 256; received 257/), () => ({ files: [upload(fx.png, 'png')], fields: { colors: '257' } }));
  http('/v1/image/compress: format "gif"', imageCompress, e(422, 'FIELD_INVALID', /^"format" must be one of "jpeg", "png", "webp"/), () => ({ files: [upload(fx.png, 'png')], fields: { format: 'gif' } }));
  http('/v1/image/compress: format "JPEG"', imageCompress, e(422, 'FIELD_INVALID', /^"format" must be one of "jpeg", "png", "webp"/), () => ({ files: [upload(fx.png, 'png')], fields: { format: 'JPEG' } }));
  const resize = op('image.resize');
  http('/v1/image/resize: neither width nor height', resize, e(422, 'FIELD_INVALID', /at least one of "width" and "height"; neither was sent/), () => ({ files: [upload(fx.png, 'png')] }));
  http('/v1/image/resize: width "0"', resize, e(422, 'FIELD_INVALID', /^"width" must be an integer from 1 to 16384; received 0/), () => ({ files: [upload(fx.png, 'png')], fields: { width: '0' } }));
  http('/v1/image/resize: width "16385"', resize, e(422, 'FIELD_INVALID', /^"width" must be an integer from 1 to 16384; received 16385/), () => ({ files: [upload(fx.png, 'png')], fields: { width: '16385' } }));
  http('/v1/image/resize: height "-1"', resize, e(422, 'FIELD_INVALID', /^"height" must be an integer from 1 to 16384; received -1/), () => ({ files: [upload(fx.png, 'png')], fields: { height: '-1' } }));
  http('/v1/image/resize: fit "stretch"', resize, e(422, 'FIELD_INVALID', /^"fit" must be one of "contain", "cover", "fill"/), () => ({ files: [upload(fx.png, 'png')], fields: { width: '10', fit: 'stretch' } }));
  http('/v1/image/resize: 16384 x 16384 fill (a 268-megapixel result)', resize, e(413, 'LIMIT_EXCEEDED', /The result would be 16384 x 16384 pixels \(268\.4 megapixels\); the limit is 40 megapixels/), () => ({ files: [upload(fx.png, 'png')], fields: { width: '16384', height: '16384', fit: 'fill' } }));
  mcp('svc_image_resize: width "ten"', resize, e(422, 'FIELD_INVALID', /^"width" must be an integer from 1 to 16384/), () => ({ file: b64(fx.png), width: 'ten' }));
  const crop = op('image.crop');
  http('/v1/image/crop: no width', crop, e(422, 'FIELD_INVALID', /^"width" is required: an integer from 1 to 16384/), () => ({ files: [upload(fx.png, 'png')], fields: { height: '5' } }));
  http('/v1/image/crop: x "-1"', crop, e(422, 'FIELD_INVALID', /^"x" must be an integer from 0 to 16383; received -1/), () => ({ files: [upload(fx.png, 'png')], fields: { width: '5', height: '5', x: '-1' } }));
  http('/v1/image/crop: x past the right edge', crop, e(422, 'FIELD_INVALID', /the crop starts past the right edge: x = 64 but the image is 64 pixels wide/), () => ({ files: [upload(fx.png, 'png')], fields: { width: '5', height: '5', x: '64' } }));
  mcp('svc_image_crop: a rectangle reaching past the bottom edge', crop, e(422, 'FIELD_INVALID', /the crop reaches past the bottom edge: y \+ height = 50/), () => ({ file: b64(fx.png), width: 5, height: 10, y: 40 }));
  const rotate = op('image.rotate');
  http('/v1/image/rotate: angle "45"', rotate, e(422, 'FIELD_INVALID', /^"angle" must be one of the integers 90, 180, 270; received 45/), () => ({ files: [upload(fx.png, 'png')], fields: { angle: '45' } }));
  http('/v1/image/rotate: angle "-90"', rotate, e(422, 'FIELD_INVALID', /^"angle" must be one of the integers 90, 180, 270; received -90/), () => ({ files: [upload(fx.png, 'png')], fields: { angle: '-90' } }));
  http('/v1/image/rotate: no angle', rotate, e(422, 'FIELD_INVALID', /^"angle" is required: one of the integers 90, 180, 270/), () => ({ files: [upload(fx.png, 'png')] }));
  mcp('svc_image_rotate: angle "90deg"', rotate, e(422, 'FIELD_INVALID', /^"angle" must be one of the integers 90, 180, 270/), () => ({ file: b64(fx.png), angle: '90deg' }));
  const flip = op('image.flip');
  http('/v1/image/flip: direction "diagonal"', flip, e(422, 'FIELD_INVALID', /^"direction" must be one of "horizontal", "vertical"; received "diagonal"/), () => ({ files: [upload(fx.png, 'png')], fields: { direction: 'diagonal' } }));
  mcp('svc_image_flip: no direction', flip, e(422, 'FIELD_INVALID', /^"direction" is required/), () => ({ file: b64(fx.png) }));
}

// 5. Image operations: GIF, SVG, other types, cut-short files, pixel bombs, polyglots, mislabels.
for (const o of IMAGE_OPS) {
  const f = asStrings(validFields(o));
  http(`${o.path}: a GIF`, o, e(501, 'NOT_IMPLEMENTED', /^GIF input is not supported yet; send a JPEG, PNG, WebP or AVIF image/), () => ({ files: [upload(fx.gif, 'gif', 'image/gif')], fields: f }));
  http(`${o.path}: an SVG that references a metadata URL`, o, e(422, 'UNSUPPORTED_TYPE', /^The file is an SVG image; this endpoint accepts JPEG, PNG, WebP or AVIF images/), () => ({ files: [upload(fx.svg, 'svg', 'image/svg+xml')], fields: f }));
  http(`${o.path}: a PNG cut short`, o, e(422, 'CORRUPT_INPUT', /^The PNG file is cut short/), () => ({ files: [upload(fx.truncatedPng, 'png', 'image/png')], fields: f }));
  http(`${o.path}: a PNG declaring 100000 x 100000 pixels`, o, e(413, 'LIMIT_EXCEEDED', /^The image declares 100000 x 100000 pixels \(10000\.0 megapixels\); the limit is 40 megapixels/), () => ({ files: [upload(fx.pngBomb, 'png', 'image/png')], fields: f }));
  http(`${o.path}: a PDF labelled image/png`, o, e(422, 'UNSUPPORTED_TYPE', /^The file is a PDF document; this endpoint accepts/), () => ({ files: [upload(fx.pdf3, 'png', 'image/png')], fields: f }));
  mcp(`${o.tool}: a GIF`, o, e(501, 'NOT_IMPLEMENTED', /GIF input is not supported yet/), () => ({ file: { data: fx.gif.toString('base64'), mediaType: 'image/gif' }, ...validFields(o) }));
  mcp(`${o.tool}: a JPEG declaring 65000 x 65000 pixels`, o, e(413, 'LIMIT_EXCEEDED', /declares 65000 x 65000 pixels/), () => ({ file: b64(fx.jpegBomb), ...validFields(o) }));
}
{
  const compress = op('image.compress');
  const oneOff: Array<[string, () => Buffer, Expectation]> = [
    ['a JPEG cut short', () => fx.truncatedJpeg, e(422, 'CORRUPT_INPUT', /^The JPEG file is cut short/)],
    ['a WebP cut short', () => fx.truncatedWebp, e(422, 'CORRUPT_INPUT', /^The WebP file is cut short/)],
    ['a WebP declaring 16383 x 16383 pixels', () => fx.webpBomb, e(413, 'LIMIT_EXCEEDED', /declares 16383 x 16383 pixels/)],
    ['a TIFF', () => fx.tiff, e(422, 'UNSUPPORTED_TYPE', /^The file is a TIFF image/)],
    ['a BMP', () => fx.bmp, e(422, 'UNSUPPORTED_TYPE', /^The file is a BMP image/)],
    ['a ZIP holding a PNG', () => fx.zipPng, e(422, 'UNSUPPORTED_TYPE', /^The file is a ZIP archive/)],
    ['an empty file', () => Buffer.alloc(0), e(422, 'UNSUPPORTED_TYPE', /^The file is empty/)],
    ['plain text', () => Buffer.from('hello, this is not an image'), e(422, 'UNSUPPORTED_TYPE', /^The file is not an image this service recognises/)],
  ];
  for (const [name, bytes, expectation] of oneOff) {
    http(`/v1/image/compress: ${name}`, compress, expectation, () => ({ files: [upload(bytes(), 'jpg', 'image/jpeg')] }));
    mcp(`svc_image_compress: ${name}`, compress, expectation, () => ({ file: b64(bytes()) }));
  }
  // Not bad inputs: a PNG with a ZIP after its IEND chunk is a valid PNG, and only the PNG is ever
  // decoded, so quoting it is the honest answer; likewise the bytes, not the label, decide the type.
  http('/v1/image/compress: a PNG with a ZIP appended (polyglot, accepted)', compress, e(402, 'PAYMENT_REQUIRED', /./), () => ({ files: [upload(fx.pngZip, 'zip', 'application/zip')] }));
  mcp('svc_image_compress: a PNG with a ZIP appended (polyglot, accepted)', compress, e(402, 'PAYMENT_REQUIRED', /./), () => ({ file: { data: fx.pngZip.toString('base64'), mediaType: 'image/jpeg' } }));
  http('/v1/image/rotate: a PNG labelled application/pdf (accepted)', op('image.rotate'), e(402, 'PAYMENT_REQUIRED', /./), () => ({ files: [upload(fx.png, 'pdf', 'application/pdf')], fields: { angle: '90' } }));
  http('/v1/pdf/extract: a PNG with a ZIP appended', op('pdf.extract'), e(422, 'UNSUPPORTED_TYPE', /not a PDF: it looks like a PNG image/), () => ({ files: [upload(fx.pngZip, 'pdf', 'application/pdf')] }));
}

// 5b. Images to PDF: every file checked like an image operation's (TIFF too), each refusal naming the file.
{
  const fromImages = op('pdf.from-images');
  const jpg = () => upload(fx.jpeg, 'jpg', 'image/jpeg');
  http('/v1/pdf/from-images: file 2 a PDF', fromImages, e(422, 'UNSUPPORTED_TYPE', /^file 2: The file is a PDF document; this endpoint accepts JPEG, PNG, WebP, AVIF or TIFF images/),
    () => ({ files: [jpg(), upload(fx.pdf3, 'jpg', 'image/jpeg')] }));
  http('/v1/pdf/from-images: file 3 a GIF', fromImages, e(501, 'NOT_IMPLEMENTED', /^file 3: GIF input is not supported yet; send a JPEG, PNG, WebP, AVIF or TIFF image/),
    () => ({ files: [jpg(), jpg(), upload(fx.gif, 'gif', 'image/gif')] }));
  http('/v1/pdf/from-images: file 2 a PNG declaring 100000 x 100000 pixels', fromImages, e(413, 'LIMIT_EXCEEDED', /^file 2: The image declares 100000 x 100000 pixels \(10000\.0 megapixels\); the limit is 40 megapixels/),
    () => ({ files: [jpg(), upload(fx.pngBomb, 'png', 'image/png')] }));
  http('/v1/pdf/from-images: file 2 a JPEG cut short', fromImages, e(422, 'CORRUPT_INPUT', /^file 2: The JPEG file is cut short/), () => ({ files: [jpg(), upload(fx.truncatedJpeg, 'jpg')] }));
  http('/v1/pdf/from-images: a TIFF cut short', fromImages, e(422, 'CORRUPT_INPUT', /^The TIFF file is cut short/), () => ({ files: [upload(fx.truncatedTiff, 'tif')] }));
  http('/v1/pdf/from-images: a TIFF of two pages', fromImages, e(501, 'NOT_IMPLEMENTED', /^TIFF files holding several pages \(2\) are not supported yet; send each page as a file of its own/),
    () => ({ files: [upload(fx.twoPageTiff, 'tif', 'image/tiff')] }));
  http('/v1/pdf/from-images: an SVG', fromImages, e(422, 'UNSUPPORTED_TYPE', /^The file is an SVG image; this endpoint accepts JPEG, PNG, WebP, AVIF or TIFF images/), () => ({ files: [upload(fx.svg, 'svg')] }));
  http('/v1/pdf/from-images: 101 files', fromImages, e(413, 'LIMIT_EXCEEDED', /^\/v1\/pdf\/from-images takes at most 100 files; 101 were sent/), () => ({ files: Array.from({ length: 101 }, jpg) }));
  http('/v1/pdf/from-images: page_size "a3"', fromImages, e(422, 'FIELD_INVALID', /^"page_size" must be one of "fit", "a4", "letter"/), () => ({ files: [jpg()], fields: { page_size: 'a3' } }));
  http('/v1/pdf/from-images: margin_mm 51', fromImages, e(422, 'FIELD_INVALID', /^"margin_mm" must be an integer from 0 to 50; received 51/), () => ({ files: [jpg()], fields: { margin_mm: '51' } }));
  // Each URL is fetched in turn: a request names at most 20, refused before any is fetched.
  const urls = Array.from({ length: 21 }, (_, i) => `https://example.com/scan-${i + 1}.jpg`);
  http('/v1/pdf/from-images: 21 files as file_url', fromImages, e(413, 'LIMIT_EXCEEDED', /^at most 20 files can be given as URLs in one request; 21 were sent: upload the others/),
    () => ({ files: [], fields: { file_url: urls } }));
  mcp('svc_pdf_from_images: 21 files as { url }', fromImages, e(413, 'LIMIT_EXCEEDED', /^at most 20 files can be given as URLs in one request; 21 were sent/), () => ({ files: urls.map((url) => ({ url })) }));
  mcp('svc_pdf_from_images: files[1] a BMP', fromImages, e(422, 'UNSUPPORTED_TYPE', /^file 2: The file is a BMP image/), () => ({ files: [b64(fx.jpeg), b64(fx.bmp)] }));
  mcp('svc_pdf_from_images: 101 files', fromImages, e(413, 'LIMIT_EXCEEDED', /takes at most 100 files; 101 were sent/), () => ({ files: Array.from({ length: 101 }, () => b64(fx.jpeg)) }));
  mcp('svc_pdf_from_images: "file" instead of "files"', fromImages, e(422, 'FIELD_INVALID', /takes "files" \(an array\), not "file"/), () => ({ file: b64(fx.jpeg) }));
  mcp('svc_pdf_from_images: margin_mm -1', fromImages, e(422, 'FIELD_INVALID', /^"margin_mm" must be an integer from 0 to 50; received -1/), () => ({ files: [b64(fx.jpeg)], margin_mm: -1 }));
}

// 6. Markdown and schemas: sizes and contents.
{
  const md = op('pdf.from-markdown');
  http('/v1/pdf/from-markdown: 1 MB + 1 byte of Markdown', md, e(413, 'PAYLOAD_TOO_LARGE', /^the file is 1048577 bytes; the limit is 1048576 bytes \(1 MB\)/), () => ({ files: [upload(fx.bigMarkdown, 'md', 'text/markdown')] }));
  mcp('svc_pdf_from_markdown: 1 MB + 1 byte of Markdown', md, e(413, 'PAYLOAD_TOO_LARGE', /^the file is 1048577 bytes; the limit is 1048576 bytes/), () => ({ file: b64(fx.bigMarkdown) }));
  http('/v1/pdf/from-markdown: Latin-1, not UTF-8', md, e(422, 'CORRUPT_INPUT', /^the Markdown is not valid UTF-8: the byte 0xe9 at offset \d+ \(line 3\)/), () => ({ files: [upload(fx.latin1Markdown, 'md', 'text/markdown')] }));
  mcp('svc_pdf_from_markdown: Latin-1, not UTF-8', md, e(422, 'CORRUPT_INPUT', /not valid UTF-8: the byte 0xe9/), () => ({ file: b64(fx.latin1Markdown) }));
  http('/v1/pdf/from-markdown: a PNG sent as Markdown', md, e(422, 'CORRUPT_INPUT', /not valid UTF-8: the byte 0x89 at offset 0/), () => ({ files: [upload(fx.png, 'md', 'text/markdown')] }));
  http('/v1/pdf/render: a page of 200 x 200 units with /UserUnit 100 at 36 dpi (10000 x 10000 pixels)', op('pdf.render'),
    e(413, 'LIMIT_EXCEEDED', /^page 1 would render at 10000 x 10000 pixels at 36 dpi, more than the limit of 50 megapixels/),
    () => ({ files: [upload(makePdf([{ text: 'units', size: [200, 200], userUnit: 100 }]), 'pdf')], fields: { dpi: '36' } }));
  http('/v1/pdf/from-markdown: only whitespace', md, e(422, 'NO_CONTENT', /the Markdown is empty/), () => ({ files: [upload(Buffer.from(' \n\t\n'), 'md')] }));
  http('/v1/pdf/from-markdown: an empty file', md, e(422, 'NO_CONTENT', /the Markdown is empty/), () => ({ files: [upload(Buffer.alloc(0), 'md')] }));
  http('/v1/pdf/from-markdown: a 1001-character title', md, e(422, 'FIELD_INVALID', /^"title" must be a string of at most 1000 characters/), () => ({ files: [upload(fx.markdown, 'md')], fields: { title: 't'.repeat(1001) } }));
  mcp('svc_pdf_from_markdown: two files', md, e(422, 'FIELD_INVALID', /takes one "file", not "files"/), () => ({ files: [b64(fx.markdown), b64(fx.markdown)] }));

  const html = op('pdf.from-html');
  http('/v1/pdf/from-html: a ZIP whose index.html is in a folder', html, e(422, 'FIELD_INVALID', /^the ZIP has no index.html at its root \(one is in site\/: zip that folder's contents/),
    () => ({ files: [upload(fx.pageZipNested, 'zip', 'application/zip')] }));
  mcp('svc_pdf_from_html: a ZIP entry named ../index.html', html, e(422, 'CORRUPT_INPUT', /^the ZIP entry "..\/index.html" climbs out of the archive/), () => ({ file: b64(fx.pageZipClimbing) }));
  http('/v1/pdf/from-html: a ZIP entry with an absolute path', html, e(422, 'CORRUPT_INPUT', /^the ZIP entry "\/etc\/index.html" is an absolute path/),
    () => ({ files: [upload(fx.pageZipAbsolute, 'zip')] }));
  http('/v1/pdf/from-html: a ZIP bomb (300 MB declared)', html, e(413, 'LIMIT_EXCEEDED', /^the ZIP entry "index.html" inflates \d+ times its size; at most 200 times/),
    () => ({ files: [upload(fx.pageZipBomb, 'zip')] }));
  http('/v1/pdf/from-html: a PDF', html, e(422, 'UNSUPPORTED_TYPE', /^the file is a PDF; send an HTML document or a ZIP of a page/), () => ({ files: [upload(fx.pdf3, 'pdf')] }));
  mcp('svc_pdf_from_html: a PNG', html, e(422, 'UNSUPPORTED_TYPE', /holds binary data \(NUL bytes\)/), () => ({ file: b64(fx.png) }));
  http('/v1/pdf/from-html: only whitespace', html, e(422, 'NO_CONTENT', /^the HTML document is empty/), () => ({ files: [upload(Buffer.from(' \n\t'), 'html')] }));
  http('/v1/pdf/from-html: margin_mm 51', html, e(422, 'FIELD_INVALID', /"margin_mm"/), () => ({ files: [upload(fx.html, 'html')], fields: { margin_mm: '51' } }));
  mcp('svc_pdf_from_html: landscape "sideways"', html, e(422, 'FIELD_INVALID', /"landscape"/), () => ({ file: b64(fx.html), landscape: 'sideways' }));
  http('/v1/pdf/from-html: paper b5', html, e(422, 'FIELD_INVALID', /"paper"/), () => ({ files: [upload(fx.html, 'html')], fields: { paper: 'b5' } }));
  http('/v1/pdf/from-html: a 17 KB footer_html', html, e(413, 'PAYLOAD_TOO_LARGE', /^"footer_html" is 17408 bytes; the limit is 16384 bytes/),
    () => ({ files: [upload(fx.html, 'html')], fields: { footer_html: 'f'.repeat(17408) } }));
  mcp('svc_pdf_from_html: a header_html with a stylesheet link', html, e(422, 'FIELD_INVALID', /^header_html holds a <link> element/),
    () => ({ file: b64(fx.html), header_html: '<link rel="stylesheet" href="http://127.0.0.1:9/h.css"><div>H</div>' }));

  const structured = op('pdf.structured');
  const schemaCases: Array<[string, string, Expectation]> = [
    ['16 KB + 1 byte', JSON.stringify({ type: 'object', description: 'x'.repeat(16 * 1024), properties: { [SCHEMA_MARKER]: { type: 'string' } } }).slice(0, 16 * 1024 + 1).padEnd(16 * 1024 + 1, ' '),
      e(413, 'PAYLOAD_TOO_LARGE', /^"schema" is 16385 bytes; the limit is 16384 bytes/)],
    ['not JSON', `{ "type": "object", "properties": { "${SCHEMA_MARKER}": { type: "string" } } }`, e(422, 'FIELD_INVALID', /^schema is not valid JSON: .* at position \d+ \(line 1, column \d+\)/)],
    ['JSON cut short', `{ "type": "object", "properties": { "${SCHEMA_MARKER}": `, e(422, 'FIELD_INVALID', /^schema is not valid JSON/)],
    ['{"type": 12}', '{"type": 12}', e(422, 'FIELD_INVALID', /^schema must describe an object: give it "type": "object" \(got "type" 12\)/)],
    ['an array', `["${SCHEMA_MARKER}"]`, e(422, 'FIELD_INVALID', /^schema must be a JSON object \(a JSON Schema\); got an array/)],
    ['an unknown type inside', JSON.stringify({ type: 'object', properties: { [SCHEMA_MARKER]: { type: 'nonsense' } } }), e(422, 'FIELD_INVALID', /^schema is not a valid JSON Schema \(draft-07\)/)],
    ['a reference to a remote document', JSON.stringify({ type: 'object', properties: { [SCHEMA_MARKER]: { $ref: 'http://169.254.169.254/latest/meta-data/schema.json' } } }),
      e(422, 'FIELD_INVALID', /only local references \("#\/\.\.\."\) are allowed and nothing is fetched/)],
    ['an unsupported draft', JSON.stringify({ $schema: 'http://json-schema.org/draft-03/schema#', type: 'object' }), e(422, 'FIELD_INVALID', /names an unsupported draft/)],
    ['an enum of 8150 nested arrays', `{"type":"object","enum":[${'['.repeat(8150)}${']'.repeat(8150)}]}`, e(422, 'FIELD_INVALID', /^schema nests more than 64 levels of JSON objects and arrays; the limit is 64$/)],
    ['1360 nested allOf', `{"type":"object",${'"allOf":[{'.repeat(1360)}"type":"object"${'}]'.repeat(1360)}}`, e(422, 'FIELD_INVALID', /^schema nests more than 64 levels/)],
  ];
  for (const [name, schema, expectation] of schemaCases) {
    http(`/v1/pdf/structured: a schema that is ${name}`, structured, expectation, () => ({ files: [upload(fx.pdf3, 'pdf')], fields: { schema } }));
  }
  for (const [name, schema, expectation] of [...schemaCases.slice(1, 5), ...schemaCases.slice(-2)]) {
    mcp(`svc_pdf_structured: a schema that is ${name}`, structured, expectation, () => ({ file: b64(fx.pdf3), schema }));
  }
  mcp('svc_pdf_structured: a schema sent as an object, not a string', structured, e(422, 'FIELD_INVALID', /^"schema" must be a string of at least 2 characters; received a value that does not qualify/),
    () => ({ file: b64(fx.pdf3), schema: JSON.parse(VALID_SCHEMA) }));
  http('/v1/pdf/structured: no schema', structured, e(422, 'FIELD_INVALID', /^"schema" is required/), () => ({ files: [upload(fx.pdf3, 'pdf')] }));
}

// 6b. Office documents: what is not one, what claims to be another, encrypted, ZIP bombs.
{
  const office = op('office.pdf');
  const notOffice = (what: string) => new RegExp(`^the file is ${what}, not an Office document; send a DOCX, XLSX, PPTX, ODT, ODS, ODP, RTF, DOC, XLS or PPT file`);
  http('/v1/office/pdf: an XLSX named .docx', office, e(422, 'UNSUPPORTED_TYPE', /^the file is not what it claims: its name \(\.docx\) says a Word document \(DOCX\), but its bytes are an Excel workbook \(XLSX\)/), () => ({ files: [upload(fx.xlsx, 'docx')] }));
  http('/v1/office/pdf: a DOCX sent as a PowerPoint type', office, e(422, 'UNSUPPORTED_TYPE', /its declared type application\/vnd\.openxmlformats-officedocument\.presentationml\.presentation says a PowerPoint presentation \(PPTX\), but its bytes are a Word document/),
    () => ({ files: [upload(fx.docx, 'bin', 'application/vnd.openxmlformats-officedocument.presentationml.presentation')] }));
  mcp('svc_office_pdf: a DOCX declared as a spreadsheet', office, e(422, 'UNSUPPORTED_TYPE', /its declared type application\/vnd\.oasis\.opendocument\.spreadsheet says an OpenDocument spreadsheet \(ODS\), but its bytes are a Word document/),
    () => ({ file: { data: fx.docx.toString('base64'), mediaType: 'application/vnd.oasis.opendocument.spreadsheet' } }));
  http('/v1/office/pdf: a PDF', office, e(422, 'UNSUPPORTED_TYPE', notOffice('a PDF')), () => ({ files: [upload(fx.pdf3, 'pdf', 'application/pdf')] }));
  http('/v1/office/pdf: a PNG named .docx', office, e(422, 'UNSUPPORTED_TYPE', notOffice('a PNG image')), () => ({ files: [upload(fx.png, 'docx')] }));
  mcp('svc_office_pdf: an empty file', office, e(422, 'UNSUPPORTED_TYPE', notOffice('empty')), () => ({ file: b64(Buffer.alloc(0)) }));
  http('/v1/office/pdf: a DOCX cut in half', office, e(422, 'CORRUPT_INPUT', /^the file starts like a ZIP package \(OOXML or OpenDocument\) but has no ZIP directory/), () => ({ files: [upload(fx.docx.subarray(0, fx.docx.length >> 1), 'docx')] }));
  http('/v1/office/pdf: an encrypted OOXML package', office, e(422, 'UNSUPPORTED_TYPE', /password-protected \(encrypted\): it cannot be converted without its password/), () => ({ files: [upload(fx.encryptedOoxml, 'docx')] }));
  mcp('svc_office_pdf: an encrypted OOXML package', office, e(422, 'UNSUPPORTED_TYPE', /password-protected/), () => ({ file: b64(fx.encryptedOoxml) }));
  http('/v1/office/pdf: parts declaring 900 MB unpacked (ZIP bomb)', office, e(413, 'LIMIT_EXCEEDED', /^the package's parts unpack to more than 512 MB/), () => ({ files: [upload(fx.docxBomb, 'docx')] }));
  http('/v1/office/pdf: 50 MB + 1 byte', office, e(413, 'PAYLOAD_TOO_LARGE', /^the file is 52428801 bytes; the limit is 52428800 bytes \(50 MB\)/), () => ({ files: [upload(fx.over50, 'docx')] }));
}

// 7. The model endpoints on a deployment without a provider: 413 and 422 first, then 503, never 402.
{
  for (const id of ['pdf.ocr', 'pdf.tables', 'pdf.structured']) {
    const o = op(id);
    http(`${o.path}: 31 pages (over the limit of 30)`, o, e(413, 'LIMIT_EXCEEDED', new RegExp(`the PDF has 31 pages; ${o.path.replace(/\//g, '\\/')} takes at most 30`)), () => ({ files: [upload(fx.pdf31, 'pdf')], fields: asStrings(validFields(o)) }));
    http(`${o.path}: a valid PDF, but no model provider`, o, e(503, 'PROVIDER_DISABLED', /is not enabled on this deployment: the model provider is not configured/), () => ({ files: [upload(fx.pdf3, 'pdf')], fields: asStrings(validFields(o)) }));
    mcp(`${o.tool}: a valid PDF, but no model provider`, o, e(503, 'PROVIDER_DISABLED', /model provider is not configured/), () => ({ file: b64(fx.pdf3), ...validFields(o) }));
  }
  http('/v1/image/ocr: a valid PNG, but no model provider', op('image.ocr'), e(503, 'PROVIDER_DISABLED', /^\/v1\/image\/ocr is not enabled on this deployment/), () => ({ files: [upload(fx.png, 'png')] }));
  mcp('svc_image_ocr: a valid JPEG, but no model provider', op('image.ocr'), e(503, 'PROVIDER_DISABLED', /model provider is not configured/), () => ({ file: b64(fx.jpeg) }));
}

// 8. File counts and sizes.
{
  for (const o of MERGE_OPS) {
    http(`${o.path}: 21 files`, o, e(413, 'LIMIT_EXCEEDED', new RegExp(`^${o.path.replace(/\//g, '\\/')} takes at most 20 files; 21 were sent`)), () => ({ files: Array.from({ length: 21 }, () => upload(fx.pdf3, 'pdf')) }));
    http(`${o.path}: one file`, o, e(422, 'FIELD_INVALID', new RegExp(`${o.path.replace(/\//g, '\\/')} needs 2 to 20 files; 1 was sent`)), () => ({ files: [upload(fx.pdf3, 'pdf')] }));
    mcp(`${o.tool}: 21 files`, o, e(413, 'LIMIT_EXCEEDED', /takes at most 20 files; 21 were sent/), () => ({ files: Array.from({ length: 21 }, () => b64(fx.pdf3)) }));
    mcp(`${o.tool}: "files" is not an array`, o, e(422, 'FIELD_INVALID', /^"files" must be an array/), () => ({ files: b64(fx.pdf3) }));
    mcp(`${o.tool}: "file" instead of "files"`, o, e(422, 'FIELD_INVALID', /takes "files" \(an array\), not "file"/), () => ({ file: b64(fx.pdf3) }));
  }
  http('/v1/pdf/compress: the file sent twice', op('pdf.compress'), e(422, 'FIELD_INVALID', /^"file" was sent 2 times; \/v1\/pdf\/compress takes exactly one file/), () => ({ files: [upload(fx.pdf3, 'pdf'), upload(fx.pdf3, 'pdf')] }));
  http('/v1/image/compress: 50 MB + 1 byte', op('image.compress'), e(413, 'PAYLOAD_TOO_LARGE', /^the file is 52428801 bytes; the limit is 52428800 bytes \(50 MB\)/), () => ({ files: [upload(fx.over50, 'png', 'image/png')] }));
  mcp('svc_image_rotate: a file that decodes to 73400321 bytes', op('image.rotate'), e(413, 'PAYLOAD_TOO_LARGE', /^file decodes to 73400321 bytes; a call takes at most 73400320 bytes of base64 files: give larger files as \{ "url": … \}/),
    () => ({ file: { data: `${'A'.repeat(Math.ceil(73_400_321 / 3) * 4 - 1)}=` }, angle: 90 }));
}

// 9. MCP arguments: base64 and shapes.
{
  const rotate = op('image.rotate');
  const extract = op('pdf.extract');
  const base64Cases: Array<[string, () => string]> = [
    ['not base64 at all', () => 'this is not base64!!'],
    ['URL-safe base64', () => fx.png.toString('base64url')],
    ['base64 with line breaks', () => fx.png.toString('base64').replace(/(.{76})/g, '$1\n')],
    ['base64 without its padding', () => fx.png.subarray(0, 100).toString('base64').replace(/=+$/, '')],
    ['base64 with a data: URL prefix', () => `data:image/png;base64,${fx.png.toString('base64')}`],
  ];
  for (const [name, data] of base64Cases) {
    mcp(`svc_image_rotate: ${name}`, rotate, e(422, 'FIELD_INVALID', /^file\.data is not standard base64/), () => ({ file: { data: data() }, angle: 90 }));
  }
  mcp('svc_pdf_extract: invalid base64', extract, e(422, 'FIELD_INVALID', /^file\.data is not standard base64/), () => ({ file: { data: '%PDF-1.7 raw bytes' } }));
  mcp('svc_pdf_merge: invalid base64 in files[1]', op('pdf.merge'), e(422, 'FIELD_INVALID', /^files\[1\]\.data is not standard base64/), () => ({ files: [b64(fx.pdf3), { data: '***' }] }));
  mcp('svc_image_rotate: an argument name of 1 MB (repeated shortened)', rotate, e(422, 'FIELD_INVALID', /^"n{40}…" is not a field of \/v1\/image\/rotate/), () => ({ file: b64(fx.png), angle: 90, ['n'.repeat(1024 * 1024)]: 1 }));
  mcp('svc_image_rotate: "file" is a string', rotate, e(422, 'FIELD_INVALID', /^file must be an object \{ "data": <standard base64>, "mediaType"\? \} or \{ "url": "https:\/\/…" \}/), () => ({ file: fx.png.toString('base64'), angle: 90 }));
  mcp('svc_image_rotate: "file.data" is a number', rotate, e(422, 'FIELD_INVALID', /^file must be an object/), () => ({ file: { data: 12345 }, angle: 90 }));
  mcp('svc_pdf_extract: "files" on a one-file tool', extract, e(422, 'FIELD_INVALID', /takes one "file", not "files"/), () => ({ files: [b64(fx.pdf3)] }));
  mcp('svc_pdf_extract: a PDF labelled image/png', extract, e(402, 'PAYMENT_REQUIRED', /./), () => ({ file: { data: fx.pdf3.toString('base64'), mediaType: 'image/png' } }));
}

// 10. HTTP bodies that are not well-formed multipart/form-data.
{
  const compress = op('image.compress');
  const extract = op('pdf.extract');
  const boundary = 'xYzBoundary4471';
  const part = (name: string, body: string | Buffer, filename?: string, type = 'application/octet-stream') => Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"\r\nContent-Type: ${type}` : ''}\r\n\r\n`),
    Buffer.isBuffer(body) ? body : Buffer.from(body), Buffer.from('\r\n'),
  ]);
  const close = Buffer.from(`--${boundary}--\r\n`);
  const multipart = `multipart/form-data; boundary=${boundary}`;
  const rawCases: Array<[string, Operation, () => { raw: Buffer | string; contentType?: string }, Expectation]> = [
    ['a body whose boundary differs from the header', compress, () => ({ raw: Buffer.concat([part('file', fx.png, `${FILE_NAME}.png`), close]), contentType: 'multipart/form-data; boundary=SomethingElse' }),
      e(422, 'MALFORMED_BODY', /could not be parsed as multipart\/form-data: incomplete multipart payload/)],
    ['a body cut off before its closing boundary', compress, () => ({ raw: part('file', fx.png, `${FILE_NAME}.png`).subarray(0, 200), contentType: multipart }),
      e(422, 'MALFORMED_BODY', /could not be parsed as multipart\/form-data: incomplete multipart payload/)],
    ['multipart/form-data without a boundary parameter', compress, () => ({ raw: Buffer.concat([part('file', fx.png, `${FILE_NAME}.png`), close]), contentType: 'multipart/form-data' }),
      e(422, 'MALFORMED_BODY', /could not be parsed as multipart\/form-data: invalid content-type header: multipart missing boundary/)],
    ['a part without a Content-Disposition header', extract, () => ({ raw: Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Type: application/pdf\r\n\r\n`), fx.pdf3, Buffer.from('\r\n'), close]), contentType: multipart }),
      e(422, 'MALFORMED_BODY', /could not be parsed as multipart\/form-data: missing content-disposition header/)],
    ['application/json with the file as a bare string', extract, () => ({ raw: JSON.stringify({ file: fx.pdf3.toString('base64') }), contentType: 'application/json' }),
      e(422, 'FIELD_INVALID', /^file must be an object \{ "data": <standard base64>, "mediaType"\? \} or \{ "url": "https:\/\/…" \}/)],
    ['application/x-www-form-urlencoded', compress, () => ({ raw: 'quality=90&file=abc', contentType: 'application/x-www-form-urlencoded' }),
      e(422, 'UNSUPPORTED_MEDIA', /must be multipart\/form-data/)],
    ['the raw PDF as application/pdf', extract, () => ({ raw: fx.pdf3, contentType: 'application/pdf' }),
      e(422, 'UNSUPPORTED_MEDIA', /must be multipart\/form-data/)],
    // Price probes (what discovery services send): a quote of the minimum price, nothing else.
    ['no body and no content type (a price probe, accepted)', extract, () => ({ raw: '' }), e(402, 'PAYMENT_REQUIRED', /./)],
    ['the JSON {} (a price probe, accepted)', extract, () => ({ raw: '{ }', contentType: 'application/json' }), e(402, 'PAYMENT_REQUIRED', /./)],
    ['a JSON body that is not an object', extract, () => ({ raw: '["file"]', contentType: 'application/json' }), e(422, 'MALFORMED_BODY', /^the JSON body must be an object/)],
    ['a JSON body that does not parse', extract, () => ({ raw: '{"file": ', contentType: 'application/json' }), e(422, 'MALFORMED_BODY', /^the request body is not valid JSON/)],
    ['bytes without a content type', extract, () => ({ raw: fx.pdf3 }), e(422, 'UNSUPPORTED_MEDIA', /must be multipart\/form-data/)],
    ['a field sent as a file part', compress, () => ({ raw: Buffer.concat([part('file', fx.png, `${FILE_NAME}.png`), part('quality', '90', `${FILE_NAME}.txt`), close]), contentType: multipart }),
      e(422, 'FIELD_INVALID', /^"quality" was sent as a file; only "file" carries a file/)],
    // Smuggling a second file through a field value: with the real boundary elsewhere, it is only text.
    ['a second "file" part hidden in a field value', compress, () => ({
      raw: Buffer.concat([part('file', fx.png, `${FILE_NAME}.png`), part('quality', `90\r\n--other\r\nContent-Disposition: form-data; name="file"; filename="${FILE_NAME}.pdf"\r\n\r\n%PDF-1.7`), close]), contentType: multipart,
    }), e(422, 'FIELD_INVALID', /^"quality" must be an integer from 1 to 100; received/)],
    ['more parts than the operation has fields', compress, () => ({ raw: Buffer.concat([part('file', fx.png, `${FILE_NAME}.png`), ...Array.from({ length: 40 }, (_, i) => part(`f${i}`, 'x')), close]), contentType: multipart }),
      e(422, 'MALFORMED_BODY', /could not be parsed as multipart\/form-data: maximum parts exceeded/)],
    ['a field name of 10,000 characters (repeated shortened)', compress, () => ({ raw: Buffer.concat([part('file', fx.png, `${FILE_NAME}.png`), part('q'.repeat(10_000), '90'), close]), contentType: multipart }),
      e(422, 'FIELD_INVALID', /^"q{40}…" is not a field of \/v1\/image\/compress; its fields are/)],
    ['a field name of 20 KB', compress, () => ({ raw: Buffer.concat([part('file', fx.png, `${FILE_NAME}.png`), part('q'.repeat(20_000), '90'), close]), contentType: multipart }),
      e(422, 'MALFORMED_BODY', /could not be parsed as multipart\/form-data: the headers of a part are longer than 16384 bytes$/)],
    ['part headers that are not UTF-8', compress, () => ({ raw: Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="caf`), Buffer.from([0xe9]), Buffer.from(`.png"\r\n\r\n`), fx.png, Buffer.from('\r\n'), close]), contentType: multipart }),
      e(422, 'MALFORMED_BODY', /could not be parsed as multipart\/form-data: the headers of a part are not UTF-8/)],
    ['a preamble not ended by CRLF', compress, () => ({ raw: Buffer.concat([Buffer.from('preamble'), part('file', fx.png, `${FILE_NAME}.png`), close]), contentType: multipart }),
      e(422, 'MALFORMED_BODY', /could not be parsed as multipart\/form-data: preamble missing CRLF terminator/)],
    // Accepted controls: unusual but valid bodies whose file arrives byte for byte.
    ['a file part without a filename (accepted: its bytes are the file)', compress, () => ({ raw: Buffer.concat([part('file', fx.png), close]), contentType: multipart }),
      e(402, 'PAYMENT_REQUIRED', /./)],
    ['a preamble before the first boundary (accepted)', compress, () => ({ raw: Buffer.concat([Buffer.from('This is a multi-part message in MIME format.\r\n'), part('file', fx.png, `${FILE_NAME}.png`), close]), contentType: multipart }),
      e(402, 'PAYMENT_REQUIRED', /./)],
    ['a quoted boundary and unquoted parameters (accepted)', compress, () => ({
      raw: Buffer.concat([Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name=file; filename=upload.png\r\n\r\n`), fx.png, Buffer.from('\r\n'), close]), contentType: `multipart/form-data; boundary="${boundary}"`,
    }), e(402, 'PAYMENT_REQUIRED', /./)],
  ];
  for (const [name, o, request, expectation] of rawCases) http(`${o.path}: ${name}`, o, expectation, request);
}

// ---- Running it ------------------------------------------------------------------------------

interface ErrorBody { error?: { code?: string; status?: number; message?: string; field?: string } }
/** What a client saw: the status, whether a payment was asked for, and the body. */
interface Outcome { status: number; paymentRequired: boolean; body: Record<string, unknown>; text: string }

// The cases are independent, so they run a few at a time (before the assertions) to keep the file fast.
const CONCURRENCY = 4;
const HEAVY = new Set(['/v1/image/compress: 50 MB + 1 byte', 'svc_image_rotate: a file that decodes to 73400321 bytes']);

describe('bad-input matrix (HTTP and MCP, one service, no provider configured)', () => {
  let t: TestService;
  let client: Client;
  const outcomes = new Map<Case, Outcome | Error>();
  const messages: string[] = [];
  let startedBefore = 0;

  async function sendHttp(c: HttpCase): Promise<Outcome> {
    const request = c.request();
    let body: BodyInit | undefined;
    const headers: Record<string, string> = {};
    if ('raw' in request) {
      body = request.raw === '' ? undefined : typeof request.raw === 'string' ? request.raw : new Uint8Array(request.raw);
      if (request.contentType) headers['content-type'] = request.contentType;
    } else {
      const form = new FormData();
      for (const f of request.files) form.append('file', new Blob([new Uint8Array(f.bytes)], f.type ? { type: f.type } : {}), f.name ?? 'upload.bin');
      for (const [k, v] of Object.entries(request.fields ?? {})) for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
      for (const part of request.extraParts ?? []) form.append(part.name, new Blob([new Uint8Array(part.bytes)]), part.filename);
      body = form;
    }
    const res = await fetch(`${t.url}${c.op.path}`, { method: 'POST', body, headers });
    const text = await res.text();
    let parsed: Record<string, unknown> = {};
    try { parsed = JSON.parse(text) as Record<string, unknown>; } catch { /* asserted by the case */ }
    return { status: res.status, paymentRequired: res.headers.get('payment-required') !== null, body: parsed, text };
  }

  async function sendMcp(c: McpCase): Promise<Outcome> {
    type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: Array<{ text?: string }> };
    const result = await client.callTool({ name: c.tool, arguments: c.args() }) as ToolResult;
    expect(result.isError, c.name).to.equal(true);
    const structured = result.structuredContent ?? {};
    const status = 'x402Version' in structured ? 402 : Number((structured as ErrorBody).error?.status ?? 0);
    return { status, paymentRequired: 'accepts' in structured, body: structured, text: result.content[0]?.text ?? '' };
  }

  before({ timeout: 300_000 }, async () => {
    await buildFixtures();
    t = await startTestService();
    client = new Client({ name: 'bad-input-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    await client.listTools();
    startedBefore = await t.metric('paydoc_jobs_total', { outcome: 'started' });
    const run = async (c: Case) => outcomes.set(c, await (c.surface === 'http' ? sendHttp(c) : sendMcp(c)).catch((err: Error) => err));
    const queue = cases.filter((c) => !HEAVY.has(c.name));
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      for (let c = queue.shift(); c; c = queue.shift()) await run(c);
    }));
    // The 50-100 MB bodies go alone, so they never starve the small cases' connections.
    for (const c of cases.filter((x) => HEAVY.has(x.name))) await run(c);
  });
  after(async () => { await client?.close(); await t?.stop(); });

  for (const c of cases) {
    it(`[${c.surface}] ${c.name} → ${c.status} ${c.code}`, () => {
      const outcome = outcomes.get(c);
      if (outcome instanceof Error) throw outcome;
      expect(outcome, 'not run').to.exist();
      const { status, paymentRequired, body, text } = outcome!;
      if (c.status === 402) {
        // The accepted controls: a quote, nothing else.
        expect(status).to.equal(402);
        expect(paymentRequired).to.equal(true);
        expect(body).to.include({ x402Version: 2 });
        return;
      }
      const error = (body as ErrorBody).error;
      expect(error, text.slice(0, 300)).to.exist();
      expect({ status, code: error!.code }).to.equal({ status: c.status, code: c.code });
      expect(error!.status).to.equal(c.status);
      // Before any payment: no quote in a header (HTTP) or in structuredContent (MCP).
      expect(paymentRequired).to.equal(false);
      expect(error!.message).to.match(c.message);
      // Client text is repeated only in short: no error is larger than a few KB, whatever was sent.
      expect(text.length).to.be.below(4096);
      expect((error!.field ?? '').length).to.be.below(64);
      if (c.surface === 'mcp') expect(JSON.parse(text)).to.equal(body);
      messages.push(error!.message!);
    });
  }

  it('quotes a 2.5 KB PDF inflating to 400 MB without waiting for its streams to be decoded (the deep check gives up at 0.8 s)', async () => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(fx.inflationBomb)]), `${FILE_NAME}.pdf`);
    const started = performance.now();
    const res = await fetch(`${t.url}/v1/pdf/extract`, { method: 'POST', body: form });
    expect(res.status).to.equal(402);
    await res.arrayBuffer();
    // The deep check used to wait 3 s for qpdf before giving up; the bound leaves room for a loaded machine.
    expect(performance.now() - started).to.be.below(2_500);
  });

  it('answers a PDF declaring 1000000000 pages, and one nested 100000 deep, in well under the 10 s inspection limit', async () => {
    for (const bytes of [fx.hugeCount, fx.deepNested]) {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(bytes)]), `${FILE_NAME}.pdf`);
      const started = performance.now();
      const res = await fetch(`${t.url}/v1/pdf/compress`, { method: 'POST', body: form });
      expect(res.status).to.equal(422);
      await res.arrayBuffer();
      expect(performance.now() - started).to.be.below(5000);
    }
  });

  it('closes HTTP request-smuggling attempts at the parser: no second request is answered', async () => {
    const attempts = [
      // Both Content-Length and Transfer-Encoding: the classic CL.TE desync.
      'POST /v1/pdf/extract HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n',
      // Two different Content-Length headers.
      'POST /v1/pdf/extract HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 60\r\n\r\nAAAAGET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n',
      // An obfuscated Transfer-Encoding.
      'POST /v1/pdf/extract HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\nContent-Length: 4\r\n\r\nAAAAGET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n',
    ];
    const { port } = new URL(t.url);
    for (const attempt of attempts) {
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1');
        let data = '';
        socket.setTimeout(5000, () => { socket.destroy(); resolve(data); });
        socket.on('data', (chunk) => { data += chunk.toString('latin1'); });
        socket.on('end', () => resolve(data));
        socket.on('close', () => resolve(data));
        socket.on('error', reject);
        socket.write(attempt);
      });
      expect(reply, attempt).to.match(/^HTTP\/1\.1 400 /);
      expect(reply.match(/HTTP\/1\.1 \d{3}/g), attempt).to.have.length(1);
    }
  });

  it(`covers all ${operations.length} operations on both surfaces with at least 150 cases, none of which started a job`, async () => {
    const matrix = cases.filter((c) => c.status !== 402);
    const seen = cases.map((c) => ({ surface: c.surface, status: (outcomes.get(c) as Outcome | undefined)?.status ?? 0 }));
    expect(matrix.length).to.be.at.least(150);
    for (const o of operations) {
      expect(cases.some((c) => c.surface === 'http' && c.op === o), o.path).to.equal(true);
      expect(cases.some((c) => c.surface === 'mcp' && c.op === o), o.tool).to.equal(true);
    }
    expect(outcomes.size).to.equal(cases.length);
    expect(cases.filter((c) => HEAVY.has(c.name)).length).to.equal(HEAVY.size);
    expect(await t.metric('paydoc_jobs_total', { outcome: 'started' })).to.equal(startedBefore);
    expect(startedBefore).to.equal(0);
    const summary: Record<string, number> = {};
    for (const s of seen) summary[`${s.surface} ${s.status}`] = (summary[`${s.surface} ${s.status}`] ?? 0) + 1;
    console.log(`bad-input matrix: ${cases.length} cases (${matrix.length} refusals, ${cases.length - matrix.length} accepted controls):`,
      Object.entries(summary).sort().map(([k, v]) => `${k}: ${v}`).join(', '));
  });

  it('privacy: afterwards the job directory is empty and no log line or message holds a name, content, password or schema', async () => {
    expect(await t.jobDirsLeft()).to.equal([]);
    // The log is not empty (every request wrote a line), so its silence about the secrets is meaningful.
    expect(t.logs.length).to.be.at.least(cases.filter((c) => c.surface === 'http').length);
    const logText = t.logs.join('\n');
    for (const secret of SECRETS) expect(logText.includes(secret), secret).to.equal(false);
    expect(messages.length).to.be.at.least(150);
    const replies = messages.join('\n');
    for (const secret of NEVER_ECHOED) expect(replies.includes(secret), secret).to.equal(false);
  });
});

describe('slow uploads (UPLOAD_TIMEOUT_MS 1.5 s)', () => {
  let t: TestService;
  before(async () => { t = await startTestService({ config: { uploadTimeoutMs: 1_500 } }); });
  after(async () => { await t?.stop(); });

  for (const route of ['/v1/image/rotate', '/v1/pdf/extract', '/mcp']) {
    it(`${route}: a body trickling a byte every 250 ms gets 408 UPLOAD_TIMEOUT at the limit, logged as a client timeout, its connection closed`, async () => {
      const { port } = new URL(t.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      const type = route === '/mcp' ? 'application/json\r\nAccept: application/json, text/event-stream' : 'multipart/form-data; boundary=xYz';
      socket.write(`POST ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: 100000\r\n\r\n`);
      const started = performance.now();
      const trickle = setInterval(() => { if (!socket.destroyed) socket.write('a'); }, 250);
      let reply = '';
      socket.on('data', (chunk) => { reply += chunk.toString('latin1'); });
      await new Promise((resolve) => socket.once('close', resolve));
      clearInterval(trickle);
      const elapsed = performance.now() - started;
      expect(reply).to.match(/^HTTP\/1\.1 408 /);
      const body = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
      expect(body.error.code).to.equal('UPLOAD_TIMEOUT');
      expect(body.error.message).to.contain('did not arrive within 1.5 s');
      // At the limit, and the server closed the connection (the client never stopped sending).
      expect(elapsed).to.be.within(1_400, 8_000);
      const line = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.route === route && l.status === 408);
      expect(line).to.include({ clientTimeout: true });
    });
  }
});
