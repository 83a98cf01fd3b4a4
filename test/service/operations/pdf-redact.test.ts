// /v1/pdf/redact: matched text and given areas are removed from the file, not covered. Checked
// with readers other than the engine: no redacted string comes out of pdftotext, mutool draw -F
// txt, or a byte search of qpdf's decompressed rewrite; the line after a removed line keeps its
// place (MuPDF 1.21 moved it off the page); metadata, outline, annotation and form copies are cut.
// Text in a CID font whose ToUnicode map poppler reads and MuPDF drops is found and removed; the
// files embedded in the PDF are redacted or removed, and read back after pdfdetach saves them.
// Then paid calls over HTTP on the local chain, and one over MCP, with the report beside the file.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { makePdf, textPages, type FixtureAttachment, type FixturePage } from '../../support/pdf-fixtures.js';
import { docxOf } from '../../support/office-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { tool, withFile } from '../../support/independent-tools.js';
import { startTestService, form, signOnBase, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../../shared/corpus');

// Words of the PDF syntax itself, found in any file's bytes whatever its text.
const PDF_KEYWORDS = new Set(['stream', 'endstream', 'endobj', 'trailer', 'startxref']);

interface Report { total: number; pages: number[]; elsewhere: number; attachments: { redacted: number; removed: number } }
const NONE = { redacted: 0, removed: 0 };

/** What three independent readers can get out of a PDF: poppler's text, MuPDF's text, and qpdf's decompressed bytes. */
async function readable(pdf: Uint8Array): Promise<{ poppler: string; mupdf: string; qdf: string }> {
  return withFile(pdf, 'pdf', async (file, dir) => {
    const poppler = await tool('pdftotext', ['-enc', 'UTF-8', file, '-'], dir);
    const mupdf = await tool('mutool', ['draw', '-F', 'txt', '-o', '-', file], dir);
    const qdf = path.join(dir, 'qdf.pdf');
    let rewritten = await tool('qpdf', ['--qdf', '--object-streams=disable', '--decode-level=all', file, qdf], dir);
    // A stream qpdf cannot decode at every level (a damaged image in the corpus): the generalized filters then.
    if (!existsSync(qdf)) rewritten = await tool('qpdf', ['--qdf', '--object-streams=disable', file, qdf], dir);
    expect(rewritten.code, rewritten.err).to.be.at.most(3);
    // qpdf's own comments (%% Contents for page 1, %% Original object ID) are not the file's content.
    const bytes = (await readFile(qdf)).toString('latin1').split('\n').filter((l) => !l.startsWith('%%')).join('\n');
    return { poppler: poppler.out, mupdf: mupdf.out, qdf: bytes };
  });
}

/** The places a string can be found: as text, and in the bytes as PDF text strings write it (Latin-1 and UTF-16BE). */
function findings(where: Awaited<ReturnType<typeof readable>>, secret: string): string[] {
  const utf16 = Buffer.from(secret, 'utf16le').swap16().toString('latin1');
  // A word inside a PDF name (/Contents, /PDFAnnotator) is syntax there, not text.
  const inBytes = (needle: string) => new RegExp(`(?<!/[\\w#.+-]*)${needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).test(where.qdf);
  return [
    ...(where.poppler.includes(secret) ? ['pdftotext'] : []),
    ...(where.mupdf.includes(secret) ? ['mutool draw -F txt'] : []),
    ...(inBytes(secret) || where.qdf.includes(utf16) ? ['qpdf --qdf bytes'] : []),
  ];
}

async function redact(pdf: Uint8Array, fields: Record<string, unknown>): Promise<{ pdf: Uint8Array; report: Report }> {
  const { output, error } = await runOperation('pdf.redact', [pdf], Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])));
  expect(error, error?.message).to.not.exist();
  expect(output!.mediaType).to.equal('application/pdf');
  return { pdf: output!.body, report: output!.report as unknown as Report };
}

/** Words and their boxes (top-left origin, points) as poppler reads them. */
async function words(pdf: Uint8Array): Promise<Array<{ text: string; page: number; x: number; y: number }>> {
  return withFile(pdf, 'pdf', async (file, dir) => {
    const { out } = await tool('pdftotext', ['-bbox', file, '-'], dir);
    const found: Array<{ text: string; page: number; x: number; y: number }> = [];
    let page = 0;
    for (const line of out.split('\n')) {
      if (line.includes('<page ')) page += 1;
      const m = /<word xMin="([\d.]+)" yMin="([\d.]+)"[^>]*>([^<]*)<\/word>/.exec(line);
      if (m) found.push({ text: m[3], page, x: Number(m[1]), y: Number(m[2]) });
    }
    return found;
  });
}

/** A PDF with a copy of the name in every other place it can hide: Info, XMP, outline, a FreeText annotation, a form field. */
async function documentWithCopies(name: string): Promise<Uint8Array> {
  const xmp = `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator><rdf:Seq><rdf:li>${name}</rdf:li></rdf:Seq></dc:creator></rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;
  const content = `BT /F1 14 Tf 16 TL 56 770 Td (Client: ${name}) Tj T* (Second line stays) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R /Outlines 8 0 R /AcroForm << /Fields [7 0 R] /DA (/Helv 12 Tf 0 g) /DR << /Font << /Helv 4 0 R >> >> >> /Metadata 10 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R /Annots [6 0 R 7 0 R] >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    `<< /Type /Annot /Subtype /FreeText /Rect [300 600 500 650] /Contents (Note about ${name}) /DA (/Helv 12 Tf 0 g) >>`,
    `<< /Type /Annot /Subtype /Widget /FT /Tx /T (name) /V (${name}) /Rect [56 500 300 520] /DA (/Helv 12 Tf 0 g) /P 3 0 R /F 4 >>`,
    '<< /Type /Outlines /First 9 0 R /Last 9 0 R /Count 1 >>',
    `<< /Title (About ${name}) /Parent 8 0 R /Dest [3 0 R /XYZ 0 842 0] >>`,
    `<< /Type /Metadata /Subtype /XML /Length ${xmp.length} >>\nstream\n${xmp}\nendstream`,
    `<< /Title (File of ${name}) /Author (${name}) >>`,
  ];
  const body = objects.map((o, i) => `${i + 1} 0 obj\n${o}\nendobj\n`).join('');
  // No cross-reference table: qpdf rebuilds one, and its rewrite is the fixture.
  const raw = Buffer.from(`%PDF-1.7\n${body}trailer\n<< /Root 1 0 R /Info 11 0 R /Size 12 >>\n%%EOF\n`, 'latin1');
  return withFile(raw, 'pdf', async (file, dir) => {
    const out = path.join(dir, 'fixed.pdf');
    await tool('qpdf', [file, out], dir);
    return new Uint8Array(await readFile(out));
  });
}

/** The files embedded in a PDF, as poppler's pdfdetach saves them: name and bytes. */
async function attachmentsOf(pdf: Uint8Array): Promise<Array<{ name: string; bytes: Uint8Array }>> {
  return withFile(pdf, 'pdf', async (file, dir) => {
    const out = path.join(dir, 'attached');
    await tool('mkdir', [out], dir);
    const saved = await tool('pdfdetach', ['-saveall', '-o', out, file], dir);
    expect(saved.code, saved.err).to.equal(0);
    const names = (await readdir(out)).sort();
    return Promise.all(names.map(async (name) => ({ name, bytes: new Uint8Array(await readFile(path.join(out, name))) })));
  });
}

/**
 * The readers that still find the secret in a PDF or in any file embedded in it (an embedded PDF
 * read as a PDF, other files as bytes and unzipped).
 */
async function findingsWithAttachments(pdf: Uint8Array, secret: string): Promise<string[]> {
  const found = findings(await readable(pdf), secret);
  for (const { name, bytes } of await attachmentsOf(pdf)) {
    if (name.endsWith('.pdf')) found.push(...findings(await readable(bytes), secret).map((f) => `${name}: ${f}`));
    else if (name.endsWith('.docx')) {
      const parts = await withFile(bytes, 'zip', async (file) => (await tool('unzip', ['-p', file])).out);
      if (parts.includes(secret)) found.push(`${name}: unzip`);
    } else if (Buffer.from(bytes).toString('latin1').includes(secret)) found.push(`${name}: bytes`);
  }
  return found;
}

/** Three pages: the secret in Helvetica, in the CID font whose text map MuPDF drops, and nowhere. */
const cidPages = (secret: string): FixturePage[] => [
  { text: `Plain page naming ${secret} once` },
  { text: 'Heading in a standard font', cidText: `Invoice for ${secret}\nAccount 4471-9920 closed` },
  { text: 'Nothing here' },
];

/** The attachments of the embedded-file tests: a text file, a PDF and a DOCX naming the secret, and a PNG. */
async function attachmentsNaming(secret: string): Promise<FixtureAttachment[]> {
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).png().toBuffer();
  return [
    { name: 'notes.txt', mediaType: 'text/plain', bytes: Buffer.from(`Call ${secret} on Monday.\nThen ${secret} again.\nKeep this line.\n`), annotation: true },
    { name: 'inner.pdf', mediaType: 'application/pdf', bytes: makePdf([{ text: `Embedded letter to ${secret}\nInner line kept` }]) },
    { name: 'memo.docx', mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes: await docxOf([`Memo about ${secret}`, 'Memo line kept']) },
    { name: 'photo.png', mediaType: 'image/png', bytes: png },
  ];
}

/** A page whose only copy of the name is drawn by a stamp annotation's appearance (no Contents string to cut). */
function stampedPdf(name: string): Buffer {
  const appearance = `BT /F1 12 Tf 5 10 Td (Stamped for ${name}) Tj ET`;
  const content = 'BT /F1 14 Tf 56 770 Td (Page text stays) Tj ET';
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R /Annots [6 0 R] >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Annot /Subtype /Stamp /Rect [56 600 356 630] /AP << /N 7 0 R >> /F 4 >>',
    `<< /Type /XObject /Subtype /Form /BBox [0 0 300 30] /Resources << /Font << /F1 4 0 R >> >> /Length ${appearance.length} >>\nstream\n${appearance}\nendstream`,
  ];
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => { offsets.push(out.length); out += `${i + 1} 0 obj\n${body}\nendobj\n`; });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  return Buffer.from(`${out}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`, 'latin1');
}

describe('redaction removes the text, and only it', () => {
  it('literal strings and patterns: gone for pdftotext, mutool and the bytes; counted per page; the rest stays where it was', async () => {
    const pdf = makePdf([
      { text: 'Name: Jane Doe\nSSN 123-45-6789 on file\nThe next line keeps its place\nCall Jane Doe at 555-0142' },
      { text: 'Nothing to see on this page' },
      { text: 'Jane Doe signed here' },
    ]);
    const before = await words(pdf);
    const { pdf: out, report } = await redact(pdf, { text: ['Jane Doe'], regex: ['\\d{3}-\\d{2}-\\d{4}', '555-\\d{4}'] });
    expect(report).to.equal({ total: 5, pages: [4, 0, 1], elsewhere: 0, attachments: NONE });
    const where = await readable(out);
    for (const secret of ['Jane', 'Doe', '123-45-6789', '555-0142']) expect(findings(where, secret), secret).to.equal([]);
    // Every word that was not redacted is still there, at the same place (MuPDF 1.21 moved a line to y = 1234).
    const after = await words(out);
    const kept = before.filter((w) => !['Jane', 'Doe', '123-45-6789', '555-0142'].includes(w.text));
    for (const w of kept) {
      const same = after.find((a) => a.text === w.text && a.page === w.page && Math.abs(a.x - w.x) < 0.5 && Math.abs(a.y - w.y) < 0.5);
      expect(same, `${w.text} on page ${w.page}`).to.exist();
    }
    expect(after.length).to.equal(kept.length);
  });

  it('a line after a fully redacted line keeps its position (the MuPDF 1.21 fault that moved it to y = 1234)', async () => {
    const pdf = makePdf([{ text: 'Entirely secret line\nVisible line after it\nAnd one more' }]);
    const before = (await words(pdf)).filter((w) => w.text === 'Visible');
    const { pdf: out, report } = await redact(pdf, { text: ['Entirely secret line'] });
    expect(report.pages).to.equal([1]);
    const after = (await words(out)).filter((w) => w.text === 'Visible');
    expect(after).to.have.length(1);
    expect(after[0].y).to.be.about(before[0].y, 0.5);
    expect(after[0].x).to.be.about(before[0].x, 0.5);
    expect(findings(await readable(out), 'Entirely')).to.equal([]);
  });

  it('a string or pattern that matches nothing is count 0, not an error; the file still opens', async () => {
    const pdf = makePdf(textPages(2));
    const { pdf: out, report } = await redact(pdf, { text: ['Zebra crossing'], regex: ['\\d{9}'] });
    expect(report).to.equal({ total: 0, pages: [0, 0], elsewhere: 0, attachments: NONE });
    expect((await readable(out)).poppler).to.contain('quick brown fox');
  });

  it('areas clear text, image pixels and drawings inside them, in points from the top-left corner', async () => {
    // A red RGB image over the bottom-left quarter, and text at the top.
    const [w, h] = [64, 64];
    const pixels = Buffer.alloc(w * h * 3);
    for (let i = 0; i < w * h; i++) pixels[i * 3] = 255;
    const pdf = makePdf([{ text: 'Top secret heading\nKept line', rgb: { pixels, width: w, height: h } }]);
    // The first line (glyph boxes from 57 to 76 pt from the top; the next line's start at 73, and a
    // glyph whose box reaches into an area goes) and a square inside the image (y 421 to 842).
    const areas = [{ page: 1, x: 40, y: 55, width: 200, height: 15 }, { page: 1, x: 100, y: 600, width: 100, height: 100 }];
    const { pdf: out, report } = await redact(pdf, { areas });
    expect(report).to.equal({ total: 2, pages: [2], elsewhere: 0, attachments: NONE });
    const where = await readable(out);
    expect(findings(where, 'secret')).to.equal([]);
    expect(where.poppler).to.contain('Kept line');
    // Rendered at 72 dpi, the middle of the cleared square is no longer red, the image around it still is.
    const png = await withFile(out, 'pdf', async (file, dir) => {
      const target = path.join(dir, 'page.png');
      await tool('mutool', ['draw', '-r', '72', '-o', target, file, '1'], dir);
      return readFile(target);
    });
    const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
    expect(at(150, 650)).to.not.equal([255, 0, 0]);
    expect(at(50, 800)).to.equal([255, 0, 0]);
  });

  it('areas on rotated pages and on pages with a UserUnit: placed on the page as displayed, in points (poppler\'s boxes, turned, and scaled by the UserUnit it ignores)', async () => {
    const cases: Array<{ page: FixturePage; unit: number }> = [
      { page: { text: 'Alpha secret\nBeta kept', rotate: 90 }, unit: 1 },
      { page: { text: 'Alpha secret\nBeta kept', rotate: 270 }, unit: 1 },
      { page: { text: 'Alpha secret\nBeta kept', rotate: 180 }, unit: 1 },
      { page: { text: 'Alpha secret\nBeta kept', userUnit: 2, size: [300, 400] }, unit: 2 },
    ];
    for (const { page, unit } of cases) {
      const pdf = makePdf([page]);
      const box = await withFile(pdf, 'pdf', async (file, dir) => {
        const { out } = await tool('pdftotext', ['-bbox', file, '-'], dir);
        const m = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">secret<\/word>/.exec(out);
        return m!.slice(1, 5).map((v) => Number(v) * unit);
      });
      // A band through the word's middle, across its length: it meets every glyph of the word and
      // no glyph of the lines beside it.
      const [x0, y0, x1, y1] = box;
      const along = x1 - x0 > y1 - y0;
      const [cx, cy] = [(x0 + x1) / 2, (y0 + y1) / 2];
      const area = along
        ? { page: 1, x: x0 + 1, y: cy - 3, width: x1 - x0 - 2, height: 6 }
        : { page: 1, x: cx - 3, y: y0 + 1, width: 6, height: y1 - y0 - 2 };
      const { pdf: out, report } = await redact(pdf, { areas: [area] });
      expect(report, JSON.stringify(page)).to.equal({ total: 1, pages: [1], elsewhere: 0, attachments: NONE });
      const where = await readable(out);
      expect(findings(where, 'secret'), JSON.stringify(page)).to.equal([]);
      expect(where.poppler, JSON.stringify(page)).to.contain('Alpha');
      expect(where.poppler, JSON.stringify(page)).to.contain('Beta kept');
    }
  });

  it('every other copy is cut: Info and XMP metadata, outline title, annotation contents and form value', async () => {
    const name = 'Quentin Marlowe';
    const pdf = await documentWithCopies(name);
    expect(findings(await readable(pdf), 'Marlowe').length).to.be.above(0);
    const { pdf: out, report } = await redact(pdf, { text: [name] });
    expect(report.pages).to.equal([1]);
    expect(report.elsewhere).to.be.at.least(6);
    const where = await readable(out);
    expect(findings(where, 'Marlowe')).to.equal([]);
    expect(where.poppler).to.contain('Second line stays');
    expect(where.qdf).to.contain('About ');
  });

  it('a CID font whose ToUnicode map poppler reads and MuPDF drops: found by poppler, removed, counted on its page', async () => {
    const secret = 'Quentin Marlowe';
    const pdf = makePdf(cidPages(secret));
    // The two readers differ on the fixture: pdftotext reads the CID page, MuPDF reads U+FFFD there.
    const before = await readable(pdf);
    expect(before.poppler.split('\f')[1]).to.contain(`Invoice for ${secret}`);
    expect(before.mupdf).to.not.contain('Invoice');
    expect(before.mupdf).to.contain(`Plain page naming ${secret}`);
    const { pdf: out, report } = await redact(pdf, { text: [secret], regex: ['\\d{4}-\\d{4}'] });
    expect(report).to.equal({ total: 3, pages: [1, 2, 0], elsewhere: 0, attachments: NONE });
    const where = await readable(out);
    for (const gone of ['Marlowe', 'Quentin', '4471-9920']) expect(findings(where, gone), gone).to.equal([]);
    // The rest of the CID line and the page's other text stay, for poppler as before.
    const cidPage = where.poppler.split('\f')[1];
    expect(cidPage).to.contain('Invoice for');
    expect(cidPage).to.contain('Account');
    expect(cidPage).to.contain('closed');
    expect(cidPage).to.contain('Heading in a standard font');
  });

  it('the CID page turned 90, 180 and 270 degrees, and with a UserUnit of 2: poppler\'s word boxes placed on the page as displayed', async () => {
    const secret = 'Quentin Marlowe';
    for (const rotate of [90, 180, 270]) {
      const pdf = makePdf([{ text: 'Head line', cidText: `Invoice for ${secret}\nAccount kept`, rotate }, { text: 'Scaled', cidText: `Pay ${secret} now`, userUnit: 2, size: [300, 400] }]);
      const { pdf: out, report } = await redact(pdf, { text: [secret] });
      expect(report, `rotate ${rotate}`).to.equal({ total: 2, pages: [1, 1], elsewhere: 0, attachments: NONE });
      const where = await readable(out);
      expect(findings(where, 'Marlowe'), `rotate ${rotate}`).to.equal([]);
      for (const kept of ['Invoice for', 'Account kept', 'Head line', 'Pay', 'now']) expect(where.poppler, `rotate ${rotate}: ${kept}`).to.contain(kept);
    }
  });

  it('an embedded DOCX whose match is split across two differently set runs cannot be cut in place: it is removed', async () => {
    const secret = 'Quentin Marlowe';
    const memo = await docxOf([['Memo about Quentin ', 'Marlowe', ' today']]);
    const pdf = makePdf([{ text: 'Cover page' }], { attachments: [{ name: 'memo.docx', mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes: memo }] });
    const { pdf: out, report } = await redact(pdf, { text: [secret] });
    expect(report).to.equal({ total: 0, pages: [0], elsewhere: 0, attachments: { redacted: 0, removed: 1 } });
    expect(await attachmentsOf(out)).to.equal([]);
  });

  it('a name drawn only by a stamp annotation\'s appearance: both readers extract it, so the stamp goes and the page counts it', async () => {
    const pdf = stampedPdf('Quentin Marlowe');
    expect(findings(await readable(pdf), 'Marlowe')).to.include(['pdftotext', 'mutool draw -F txt']);
    const { pdf: out, report } = await redact(pdf, { text: ['Quentin Marlowe'] });
    expect(report).to.equal({ total: 1, pages: [1], elsewhere: 0, attachments: NONE });
    const where = await readable(out);
    expect(findings(where, 'Marlowe')).to.equal([]);
    expect(where.poppler).to.contain('Page text stays');
    expect(where.qdf).to.not.contain('/Stamp');
  });

  it('embedded files (default attachments=redact): a text file, a PDF and a DOCX are redacted in place, a PNG that cannot be searched is removed', async () => {
    const secret = 'Quentin Marlowe';
    const pdf = makePdf([{ text: `Cover page for ${secret}` }, { text: 'Second page' }], { attachments: await attachmentsNaming(secret) });
    expect((await findingsWithAttachments(pdf, 'Marlowe')).length).to.be.above(3);
    const { pdf: out, report } = await redact(pdf, { text: [secret] });
    // Two matches in the text file, one in the PDF's page, one in the DOCX; the PNG removed.
    expect(report).to.equal({ total: 1, pages: [1, 0], elsewhere: 0, attachments: { redacted: 4, removed: 1 } });
    expect(await findingsWithAttachments(out, 'Marlowe')).to.equal([]);
    const left = await attachmentsOf(out);
    expect(left.map((a) => a.name)).to.equal(['inner.pdf', 'memo.docx', 'notes.txt']);
    const byName = Object.fromEntries(left.map((a) => [a.name, a.bytes]));
    expect(Buffer.from(byName['notes.txt']).toString('utf8')).to.equal('Call  on Monday.\nThen  again.\nKeep this line.\n');
    expect((await readable(byName['inner.pdf'])).poppler).to.contain('Inner line kept');
    const memo = await withFile(byName['memo.docx'], 'zip', async (file) => (await tool('unzip', ['-p', file, 'word/document.xml'])).out);
    expect(memo).to.contain('Memo line kept');
    expect(memo).to.contain('Memo about ');
  });

  it('attachments=remove: every embedded file goes, with its attachment annotation, counted in the report', async () => {
    const secret = 'Quentin Marlowe';
    const pdf = makePdf([{ text: `Cover page for ${secret}` }], { attachments: await attachmentsNaming(secret) });
    const { pdf: out, report } = await redact(pdf, { text: [secret], attachments: 'remove' });
    expect(report).to.equal({ total: 1, pages: [1], elsewhere: 0, attachments: { redacted: 0, removed: 4 } });
    expect(await attachmentsOf(out)).to.equal([]);
    expect(await findingsWithAttachments(out, 'Marlowe')).to.equal([]);
    const where = await readable(out);
    expect(where.qdf).to.not.contain('/FileAttachment');
    expect(where.qdf).to.not.contain('/EmbeddedFile');
    expect(where.qdf).to.not.contain('/EF');
  });

  it('invariant on many files: no redacted word can be extracted afterwards (generated pages and the sample corpus)', { timeout: 300_000 }, async () => {
    const files: Array<{ name: string; bytes: Uint8Array }> = [];
    for (let i = 0; i < 6; i++) files.push({ name: `generated ${i}`, bytes: makePdf(textPages(2 + i, `Section${i}`)) });
    const samples = path.join(corpus, 'sample-files');
    for (const dir of (await readdir(samples)).sort()) {
      // Password-protected files are refused before redaction; the attachment's file is not a page's text.
      if (!/^\d{3}-/.test(dir) || /password|attachment/.test(dir)) continue;
      for (const name of (await readdir(path.join(samples, dir))).filter((n) => n.endsWith('.pdf'))) {
        files.push({ name: `${dir}/${name}`, bytes: new Uint8Array(await readFile(path.join(samples, dir, name))) });
      }
    }
    let checked = 0;
    for (const file of files) {
      const text = (await readable(file.bytes)).poppler;
      // Two words of the first page as poppler reads them: ASCII letters, long enough to be distinctive.
      const candidates = [...new Set(text.split('\f')[0].match(/\b[A-Za-z]{6,}\b/g) ?? [])].filter((w) => !PDF_KEYWORDS.has(w));
      const chosen = [candidates[0], candidates[Math.floor(candidates.length / 2)]].filter(Boolean);
      if (chosen.length === 0) continue;
      const { output, error } = await runOperation('pdf.redact', [file.bytes], { text: JSON.stringify(chosen) });
      if (error) {
        // Refused for the file itself (damage MuPDF cannot read), never a failure of the service.
        expect(error.status, `${file.name}: ${error.code} ${error.message}`).to.be.within(400, 499);
        continue;
      }
      const where = await readable(output!.body);
      for (const word of chosen) expect(findings(where, word), `${file.name}: ${word}`).to.equal([]);
      checked += 1;
    }
    expect(checked).to.be.at.least(20);
  });
});

describe('redaction paid over HTTP on the local Base chain, and over MCP', () => {
  let t: TestService;
  const pdf = makePdf([{ text: 'Patient: Jane Doe\nDiagnosis follows' }, { text: 'Signed by Jane Doe' }]);
  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });

  it('every public description lists redact and sanitize: OpenAPI (with the report headers), the catalog, llms.txt, the MCP tools', async () => {
    const openapi = await (await fetch(`${t.url}/openapi.json`)).json() as { paths: Record<string, { post: { responses: Record<string, { headers?: Record<string, unknown> }> } }> };
    expect(Object.keys(openapi.paths['/v1/pdf/redact'].post.responses['200'].headers!)).to.include('Paydoc-Redactions');
    expect(Object.keys(openapi.paths['/v1/pdf/sanitize'].post.responses['200'].headers!)).to.include('Paydoc-Removed');
    const catalog = JSON.stringify(await (await fetch(`${t.url}/v1/discovery`)).json());
    const llms = await (await fetch(`${t.url}/llms.txt`)).text();
    for (const route of ['/v1/pdf/redact', '/v1/pdf/sanitize']) {
      expect(catalog, route).to.contain(route);
      expect(llms, route).to.contain(route);
    }
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const { tools } = await client.listTools();
      const redactTool = tools.find((tl) => tl.name === 'svc_pdf_redact');
      expect(JSON.stringify(redactTool?.outputSchema)).to.contain('"redactions"');
      expect(JSON.stringify(tools.find((tl) => tl.name === 'svc_pdf_sanitize')?.outputSchema)).to.contain('"removed"');
    } finally {
      await client.close();
    }
  });

  it('HTTP: charged 0.01 USD per page, the PDF as the body, the redactions in Paydoc-Redactions', async () => {
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const res = await payFetch(`${t.url}/v1/pdf/redact`, { method: 'POST', body: form([{ bytes: pdf, name: 'a.pdf' }], { text: '["Jane Doe"]' }) });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    expect(JSON.parse(res.headers.get('paydoc-redactions')!)).to.equal({ total: 2, pages: [1, 1], elsewhere: 0, attachments: NONE });
    const body = new Uint8Array(await res.arrayBuffer());
    expect(findings(await readable(body), 'Jane')).to.equal([]);
    const afterPay = await balancesOf(t.evm);
    expect(before.payer - afterPay.payer).to.equal(20000n);
    expect(afterPay.payTo - before.payTo).to.equal(20000n);
  });

  it('HTTP: a CID page and an embedded file, paid per page; the header counts the CID page and the attachment', async () => {
    const secret = 'Quentin Marlowe';
    const file = makePdf(cidPages(secret), { attachments: [(await attachmentsNaming(secret))[0]] });
    const payFetch = await t.payFetch('base');
    const before = await balancesOf(t.evm);
    const res = await payFetch(`${t.url}/v1/pdf/redact`, { method: 'POST', body: form([{ bytes: file, name: 'a.pdf' }], { text: JSON.stringify([secret]) }) });
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.headers.get('paydoc-redactions')!)).to.equal({ total: 2, pages: [1, 1, 0], elsewhere: 0, attachments: { redacted: 2, removed: 0 } });
    const body = new Uint8Array(await res.arrayBuffer());
    expect(await findingsWithAttachments(body, 'Marlowe')).to.equal([]);
    const afterPay = await balancesOf(t.evm);
    expect(before.payer - afterPay.payer).to.equal(30000n);
    expect(afterPay.payTo - before.payTo).to.equal(30000n);
  });

  it('MCP: the same JSON beside the file, in structuredContent and as text', async () => {
    const client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const args = { file: { data: Buffer.from(pdf).toString('base64') }, regex: '["J[a-z]+ Doe"]' };
      const unpaid = await client.callTool({ name: 'svc_pdf_redact', arguments: args }) as { isError?: boolean; structuredContent?: Record<string, unknown> };
      expect(unpaid.isError).to.equal(true);
      const quote = unpaid.structuredContent as unknown as PaymentRequired;
      expect(quote.accepts[0].amount).to.equal('20000');
      const before = await balancesOf(t.evm);
      const paid = await client.callTool({ name: 'svc_pdf_redact', arguments: args, _meta: { 'x402/payment': await signOnBase(quote, t.evm.payerKey) } }) as {
        isError?: boolean; structuredContent?: Record<string, unknown>;
        content: Array<{ type: string; text?: string; resource?: { blob?: string; mimeType?: string } }>;
      };
      expect(paid.isError).to.not.equal(true);
      expect(paid.structuredContent).to.equal({ redactions: { total: 2, pages: [1, 1], elsewhere: 0, attachments: NONE } });
      const resource = paid.content.find((c) => c.type === 'resource')!.resource!;
      expect(resource.mimeType).to.equal('application/pdf');
      expect(findings(await readable(Buffer.from(resource.blob!, 'base64')), 'Doe')).to.equal([]);
      expect(JSON.parse(paid.content.find((c) => c.type === 'text')!.text!)).to.equal({ redactions: { total: 2, pages: [1, 1], elsewhere: 0, attachments: NONE } });
      expect(before.payer - (await balancesOf(t.evm)).payer).to.equal(20000n);
    } finally {
      await client.close();
    }
  });
});
