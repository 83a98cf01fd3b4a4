import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFile, readdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { parsePageList, parseRanges } from '../core/page-ranges.js';
import { inspectPdf } from '../checks/pdf.js';
import { ServiceError } from '../core/errors.js';
import { runTool } from '../tools/process/run-tool.js';
import { makePdf, photographedPage, textPages } from './pdf-fixtures.js';
import { jobRoot, runOperation } from './support/jobs.js';
import { pdfFacts, tool, withFile, zipEntries } from './support/independent-tools.js';
import { InspectionCache } from '../checks/cache.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const samples = path.resolve(projectRoot, '../shared/corpus/sample-files');
const sample = (p: string) => readFile(path.join(samples, p)).then((b) => new Uint8Array(b));
const ENCRYPTED = '005-libreoffice-writer-password/libreoffice-writer-password.pdf';

function thrown(fn: () => unknown): ServiceError {
  try { fn(); } catch (err) { return err as ServiceError; }
  throw new Error('expected a ServiceError');
}

describe('page ranges', () => {
  it('expands numbers, ranges and z in the listed order, tolerating spaces', () => {
    expect(parsePageList(' 3 , 1-2,z, 7 - z ', 8)).to.equal([3, 1, 2, 8, 7, 8]);
    expect(parseRanges('1-3,4-6,7-z', 10).map((r) => [r.first, r.last])).to.equal([[1, 3], [4, 6], [7, 10]]);
    expect(parseRanges('5', 10)[0].pages).to.equal([5]);
  });

  it('names the item that is wrong', () => {
    const beyond = thrown(() => parsePageList('1,12', 10, { field: 'pages' }));
    expect(beyond.code).to.equal('FIELD_INVALID');
    expect(beyond.status).to.equal(422);
    expect(beyond.extra.field).to.equal('pages');
    expect(beyond.message).to.contain('page 12 does not exist: the PDF has 10 pages');
    expect(thrown(() => parseRanges('5-3', 10)).message).to.contain('range 5-3 is reversed');
    expect(thrown(() => parsePageList('1,,2', 10)).message).to.contain('item 2 is empty');
    expect(thrown(() => parsePageList('1,', 10)).message).to.contain('item 2 is empty');
    expect(thrown(() => parsePageList('0', 10)).message).to.contain('page 0 does not exist');
    expect(thrown(() => parsePageList('two', 10)).message).to.contain('"two" is not a page number');
    expect(thrown(() => parsePageList('1-2-3', 10)).message).to.contain('"1-2-3"');
    expect(thrown(() => parsePageList('', 10)).message).to.contain('empty');
  });

  it('refuses more than 50 ranges with 413', () => {
    const ranges = Array.from({ length: 51 }, (_, i) => String(i + 1)).join(',');
    const err = thrown(() => parseRanges(ranges, 60));
    expect(err.code).to.equal('LIMIT_EXCEEDED');
    expect(err.status).to.equal(413);
    expect(err.extra.field).to.equal('ranges');
    expect(parseRanges(ranges.split(',').slice(0, 50).join(','), 60)).to.have.length(50);
  });
});

describe('inspectPdf', () => {
  let dir: string;
  before(async () => { dir = await mkdtemp(path.join(jobRoot(), 'pdf-inspect-')); });
  lab.after(async () => { await rm(dir, { recursive: true, force: true }); });

  const write = async (name: string, bytes: Uint8Array | Buffer) => { const f = path.join(dir, name); await writeFile(f, bytes); return f; };

  it('counts pages and names what a non-PDF looks like', async () => {
    expect(await inspectPdf(await write('a.pdf', makePdf(textPages(3))), { acceptsEncrypted: false })).to.equal({ pages: 3, encrypted: false, needsRewrite: false });
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#fff' } }).png().toBuffer();
    const err = await expect(inspectPdf(await write('b.pdf', png), { acceptsEncrypted: false })).to.reject(ServiceError);
    expect(err.code).to.equal('UNSUPPORTED_TYPE');
    expect(err.message).to.contain('PNG image');
  });

  it('refuses damaged files as CORRUPT_INPUT', async () => {
    const whole = makePdf(textPages(2));
    for (const bytes of [Buffer.from('%PDF-1.4\nthis is not a pdf at all\n'), whole.subarray(0, 200)]) {
      const err = await expect(inspectPdf(await write('c.pdf', bytes), { acceptsEncrypted: false })).to.reject(ServiceError);
      expect(err.code).to.equal('CORRUPT_INPUT');
      expect(err.status).to.equal(422);
    }
    // A corrupt content stream passes the page count; only the deep check (cheap on a small file) finds it.
    const broken = Buffer.from(makePdf([{ text: 'x' }]).toString('latin1').replace('/Length', '/Filter /FlateDecode /Length'), 'latin1');
    const err = await expect(inspectPdf(await write('d.pdf', broken), { acceptsEncrypted: false })).to.reject(ServiceError);
    expect(err.code).to.equal('CORRUPT_INPUT');
    expect(await inspectPdf(path.join(dir, 'd.pdf'), { acceptsEncrypted: false, deep: false })).to.equal({ pages: 1, encrypted: false, needsRewrite: true }); // qpdf repaired it to count it: the work reads its rewrite
    // A small file is checked alongside the survey, so more than 50 pages does not skip its check.
    const long = Buffer.from(makePdf(textPages(60)).toString('latin1').replace('/Length', '/Filter /FlateDecode /Length'), 'latin1');
    expect(long.byteLength).to.be.below(512 * 1024);
    const longErr = await expect(inspectPdf(await write('d60.pdf', long), { acceptsEncrypted: false })).to.reject(ServiceError);
    expect(longErr.code).to.equal('CORRUPT_INPUT');
    expect(longErr.message).to.contain('qpdf --check');
    // Between 512 KB and 2 MB the check runs beside the survey and counts for 50 pages or fewer.
    const scan = await photographedPage(1700, 2200);
    const heavy = Buffer.from(makePdf([{ jpeg: scan }, { jpeg: scan }, { text: 'x' }]).toString('latin1').replace(/\/Length (\d+) >>\nstream\nBT/, '/Filter /FlateDecode /Length $1 >>\nstream\nBT'), 'latin1');
    expect(heavy.byteLength).to.be.within(512 * 1024, 2 * 1024 * 1024);
    const heavyErr = await expect(inspectPdf(await write('d-heavy.pdf', heavy), { acceptsEncrypted: false })).to.reject(ServiceError);
    expect(heavyErr.message).to.contain('qpdf --check');
    // Over 512 KB and over 50 pages the check is stopped unheard: the paid job finds the damage instead.
    const longHeavy = Buffer.from(makePdf([{ jpeg: scan }, { jpeg: scan }, ...textPages(60)]).toString('latin1').replace(/\/Length (\d+) >>\nstream\nBT/, '/Filter /FlateDecode /Length $1 >>\nstream\nBT'), 'latin1');
    expect(longHeavy.byteLength).to.be.within(512 * 1024, 2 * 1024 * 1024);
    expect(await inspectPdf(await write('d-long-heavy.pdf', longHeavy), { acceptsEncrypted: false })).to.equal({ pages: 62, encrypted: false, needsRewrite: true });
    expect((await expect(inspectPdf(path.join(dir, 'd-long-heavy.pdf'), { acceptsEncrypted: false, deep: true })).to.reject(ServiceError)).code).to.equal('CORRUPT_INPUT');
  });

  it('refuses a password-protected PDF, except for unlock with the right password', async () => {
    const file = await write('e.pdf', await sample(ENCRYPTED));
    const refused = await expect(inspectPdf(file, { acceptsEncrypted: false })).to.reject(ServiceError);
    expect(refused.code).to.equal('ENCRYPTED_PDF');
    expect(refused.message).to.equal('the PDF is password-protected; remove the password with /v1/pdf/unlock first');
    const wrong = await expect(inspectPdf(file, { acceptsEncrypted: true, password: 'nope' })).to.reject(ServiceError);
    expect(wrong.code).to.equal('WRONG_PASSWORD');
    expect(await inspectPdf(file, { acceptsEncrypted: true, password: 'openpassword' })).to.equal({ pages: 1, encrypted: true, needsRewrite: false });
    const plain = await expect(inspectPdf(await write('f.pdf', makePdf(textPages(1))), { acceptsEncrypted: true, password: 'x' })).to.reject(ServiceError);
    expect(plain.code).to.equal('NO_CONTENT');
    expect(plain.message).to.contain('not password-protected');
    // A damaged stream inside an encrypted file is found with the password, after it is known to be right.
    const broken = Buffer.from(makePdf([{ text: 'x' }]).toString('latin1').replace('/Length', '/Filter /FlateDecode /Length'), 'latin1');
    const brokenFile = await write('g.pdf', broken);
    await runTool('qpdf', ['--encrypt', 'pw-1', 'pw-1', '256', '--', brokenFile, path.join(dir, 'g-locked.pdf')], { timeoutMs: 10_000 });
    const lockedBroken = path.join(dir, 'g-locked.pdf');
    expect((await expect(inspectPdf(lockedBroken, { acceptsEncrypted: true, password: 'nope' })).to.reject(ServiceError)).code).to.equal('WRONG_PASSWORD');
    expect((await expect(inspectPdf(lockedBroken, { acceptsEncrypted: true, password: 'pw-1' })).to.reject(ServiceError)).code).to.equal('CORRUPT_INPUT');
    // The password travelled in job files that are gone afterwards.
    expect((await readdir(dir)).filter((n) => n.startsWith('.qpdf-job'))).to.equal([]);
  });

  it('takes a PDF encrypted with an owner password only (it opens for anyone) and says it is encrypted', async () => {
    const plain = await write('g.pdf', makePdf(textPages(2)));
    const ownerOnly = path.join(dir, 'h.pdf');
    expect((await tool('qpdf', ['--encrypt', '', 'owner-secret', '256', '--', plain, ownerOnly])).code).to.equal(0);
    expect(await inspectPdf(ownerOnly, { acceptsEncrypted: false })).to.equal({ pages: 2, encrypted: true, needsRewrite: false });
  });
});

describe('inspection cache', () => {
  it('keys by the bytes and the password, forgets after its time, and drops the oldest beyond its size', async () => {
    const lookups: boolean[] = [];
    const cache = new InspectionCache({ maxEntries: 2, ttlMs: 50, onLookup: (hit) => lookups.push(hit) });
    const bytes = makePdf(textPages(1));
    const digest = cache.digest(bytes);
    expect(cache.digest(Buffer.from(bytes))).to.equal(digest);
    expect(cache.digest(bytes, 'secret')).to.not.equal(digest);
    expect(cache.digest(bytes, 'secret')).to.not.equal(cache.digest(bytes, 'other'));
    expect(new InspectionCache().digest(bytes)).to.not.equal(digest); // salted per cache
    cache.set(`pdf:${digest}`, { pages: 1 });
    expect(cache.get(`pdf:${digest}`)).to.equal({ pages: 1 });
    expect(cache.get(`pdf:${cache.digest(makePdf(textPages(2)))}`)).to.be.undefined();
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.size).to.equal(2);
    expect(cache.get(`pdf:${digest}`)).to.be.undefined();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(cache.get('a')).to.be.undefined();
    expect(lookups).to.equal([true, false, false, false]);
  });
});

describe('PDF operations on generated fixtures', () => {
  let photo: { bytes: Uint8Array; width: number; height: number };
  let textPdf: Uint8Array;
  let mixedPdf: Uint8Array;
  before(async () => {
    photo = await photographedPage();
    textPdf = makePdf(textPages(5), { outline: true, link: true });
    mixedPdf = makePdf([...textPages(2, 'Mixed'), { jpeg: photo, text: 'Caption under a photo with enough words to count as text' }], { outline: true, link: true });
  });

  it('compress never grows the file and keeps pages, text, outline and links at every level', async () => {
    const before = await pdfFacts(mixedPdf);
    expect(before.links).to.be.above(0);
    expect(before.outlineItems).to.be.above(0);
    for (const level of ['lossless', 'balanced', 'max']) {
      const { output, leftovers } = await runOperation('pdf.compress', [mixedPdf], { level });
      expect(leftovers).to.equal([]);
      expect(output!.mediaType).to.equal('application/pdf');
      expect(output!.body.byteLength).to.be.most(mixedPdf.byteLength);
      const facts = await pdfFacts(output!.body);
      expect(facts.check).to.equal(0);
      expect(facts.pages).to.equal(3);
      expect(facts.text).to.contain('markermixed2');
      expect(facts.outlineItems).to.equal(before.outlineItems);
      expect(facts.links).to.equal(before.links);
    }
    // Without navigation to lose, Ghostscript's re-encoding wins: the photo is downsampled.
    const photoPdf = makePdf([{ jpeg: photo }, { jpeg: photo, text: 'second' }]);
    const balanced = (await runOperation('pdf.compress', [photoPdf], { level: 'balanced' })).output!;
    const max = (await runOperation('pdf.compress', [photoPdf], { level: 'max' })).output!;
    expect(balanced.body.byteLength).to.be.below(photoPdf.byteLength * 0.9);
    expect(max.body.byteLength).to.be.at.most(balanced.body.byteLength);
    expect((await pdfFacts(max.body)).pages).to.equal(2);
  });

  it('balanced is no larger than ghostscript /ebook on a scan whose JPEGs are already tight', async () => {
    // Re-encoding a tight scan JPEG makes it bigger; /ebook copies it through. balanced tries both.
    const page = await photographedPage(1700, 2200);
    const scan = makePdf([{ jpeg: page }, { jpeg: page }]);
    const balanced = (await runOperation('pdf.compress', [scan], { level: 'balanced' })).output!;
    const ebook = await withFile(scan, 'pdf', async (file, dir) => {
      const out = path.join(dir, 'ebook.pdf');
      expect((await tool('gs', ['-q', '-dNOPAUSE', '-dBATCH', '-dSAFER', '-sDEVICE=pdfwrite', '-dPDFSETTINGS=/ebook', `-sOutputFile=${out}`, file])).code).to.equal(0);
      return readFile(out);
    });
    expect(balanced.body.byteLength).to.be.at.most(ebook.byteLength);
    const facts = await pdfFacts(balanced.body);
    expect(facts.check).to.equal(0);
    expect(facts.pages).to.equal(2);
  });

  it('merge keeps order and sums pages; merge-compress does both', async () => {
    const second = makePdf(textPages(2, 'Second'));
    const { output } = await runOperation('pdf.merge', [textPdf, second, mixedPdf], {});
    const facts = await pdfFacts(output!.body);
    expect(facts.check).to.equal(0);
    expect(facts.pages).to.equal(10);
    const order = ['markerpage1', 'markerpage5', 'markersecond1', 'markersecond2', 'markermixed1'].map((m) => facts.text.indexOf(m));
    expect(order).to.equal([...order].sort((a, b) => a - b));
    expect(order[0]).to.be.at.least(0);
    expect(facts.outlineItems).to.be.at.least(5);
    const mc = await runOperation('pdf.merge-compress', [textPdf, mixedPdf], { level: 'balanced' });
    const mcFacts = await pdfFacts(mc.output!.body);
    expect(mcFacts.check).to.equal(0);
    expect(mcFacts.pages).to.equal(8);
    expect(mcFacts.text).to.contain('markermixed2');
  });

  it('pages selects, reorders and rotates clockwise', async () => {
    const { output } = await runOperation('pdf.pages', [textPdf], { pages: '4,1-2', rotate: 90 });
    const facts = await pdfFacts(output!.body);
    expect(facts.check).to.equal(0);
    expect(facts.pages).to.equal(3);
    expect(facts.rotations).to.equal([90, 90, 90]);
    const idx = ['markerpage4', 'markerpage1', 'markerpage2'].map((m) => facts.text.indexOf(m));
    expect(idx[0]).to.be.at.least(0);
    expect(idx).to.equal([...idx].sort((a, b) => a - b));
    expect(facts.text).to.not.contain('markerpage3');
    const turned = await runOperation('pdf.pages', [makePdf([{ text: 'a', rotate: 90 }])], { rotate: 270 });
    expect((await pdfFacts(turned.output!.body)).rotations).to.equal([0]);
    const bad = await runOperation('pdf.pages', [textPdf], { pages: '2,9' });
    expect(bad.error!.code).to.equal('FIELD_INVALID');
    expect(bad.error!.message).to.contain('page 9 does not exist: the PDF has 5 pages');
  });

  it('split returns one PDF per range, named in range order', async () => {
    const { output } = await runOperation('pdf.split', [textPdf], { ranges: '1-2,3-z,2' });
    expect(output!.mediaType).to.equal('application/zip');
    const entries = await zipEntries(output!.body);
    expect(entries.map((e) => e.name)).to.equal(['part-01-p1-2.pdf', 'part-02-p3-5.pdf', 'part-03-p2-2.pdf']);
    const facts = await Promise.all(entries.map((e) => pdfFacts(e.bytes)));
    expect(facts.map((f) => f.pages)).to.equal([2, 3, 1]);
    expect(facts.every((f) => f.check === 0)).to.be.true();
    expect(facts[1].text).to.contain('markerpage5');
    expect(facts[2].text).to.contain('markerpage2');
  });

  it('protect encrypts with AES-256 under one password; unlock takes it off', async () => {
    const password = '-- tricky pass\nword "é"';
    const { output } = await runOperation('pdf.protect', [textPdf], { password });
    const enc = await pdfFacts(output!.body, 'not-it').catch(() => undefined);
    expect(enc?.pages ?? -1).to.equal(-1);
    const requires = await (async () => {
      const dir = await mkdtemp(path.join(jobRoot(), 'pdf-enc-'));
      try {
        const file = path.join(dir, 'p.pdf');
        await writeFile(file, output!.body);
        const show = await tool('qpdf', [`--password=${password}`, '--show-encryption', file]);
        const needs = await tool('qpdf', ['--requires-password', file]);
        const owner = /User password = (.*)/.exec(show.out);
        return { show: show.out, needs: needs.code, owner };
      } finally { await rm(dir, { recursive: true, force: true }); }
    })();
    expect(requires.needs).to.equal(0);
    expect(requires.show).to.contain('R = 6');
    expect(requires.show).to.contain('AESv3');
    // The same password must open it as owner too: unlock (which tries it) succeeds, wrong ones do not.
    const wrong = await runOperation('pdf.unlock', [output!.body], { password: 'wrong' });
    expect(wrong.error!.code).to.equal('WRONG_PASSWORD');
    const opened = await runOperation('pdf.unlock', [output!.body], { password });
    const facts = await pdfFacts(opened.output!.body);
    expect(facts.encrypted).to.be.false();
    expect(facts.check).to.equal(0);
    expect(facts.pages).to.equal(5);
    expect(facts.text).to.contain('markerpage3');
  });

  it('render returns page-NNNN.png in order at the requested dpi, and bounds pages and pixels', async () => {
    const pdf = makePdf([{ text: 'one' }, { text: 'two', size: [300, 200] }]);
    const { output } = await runOperation('pdf.render', [pdf], { dpi: 72 });
    const entries = await zipEntries(output!.body);
    expect(entries.map((e) => e.name)).to.equal(['page-0001.png', 'page-0002.png']);
    const sizes = await Promise.all(entries.map(async (e) => { const m = await sharp(e.bytes).metadata(); return [m.format, m.width, m.height]; }));
    expect(sizes).to.equal([['png', 595, 842], ['png', 300, 200]]);
    // A page without a MediaBox (blanked out, offsets kept) is drawn at mupdf's default, US Letter.
    const box = '/MediaBox [0 0 595 842]';
    const boxless = Buffer.from(makePdf([{ text: 'no box' }]).toString('latin1').replace(box, ' '.repeat(box.length)), 'latin1');
    const letter = await zipEntries((await runOperation('pdf.render', [boxless], { dpi: 72 })).output!.body);
    expect(await sharp(letter[0].bytes).metadata()).to.include({ width: 612, height: 792 });
    const many = await runOperation('pdf.render', [makePdf(textPages(51))], { dpi: 36 });
    expect(many.error!.code).to.equal('LIMIT_EXCEEDED');
    const huge = await runOperation('pdf.render', [makePdf([{ text: 'a' }, { text: 'b', size: [14400, 14400] }])], { dpi: 300 });
    expect(huge.error!.code).to.equal('LIMIT_EXCEEDED');
    expect(huge.error!.message).to.contain('page 2');
    // UserUnit scales the page and Rotate turns it, as mupdf draws them: 200 x 100 units of 2 pt, turned.
    const scaled = await zipEntries((await runOperation('pdf.render', [makePdf([{ text: 'big units', size: [200, 100], userUnit: 2, rotate: 90 }])], { dpi: 72 })).output!.body);
    expect(await sharp(scaled[0].bytes).metadata()).to.include({ width: 200, height: 400 });
    // 200 x 200 units of 100 pt are 10000 x 10000 pixels at 36 dpi: refused, not drawn.
    const userUnit = await runOperation('pdf.render', [makePdf([{ text: 'a', size: [200, 200], userUnit: 100 }])], { dpi: 36 });
    expect(userUnit.error!.code).to.equal('LIMIT_EXCEEDED');
    expect(userUnit.error!.message).to.contain('10000 x 10000 pixels');
    const tooBig = await runOperation('pdf.render', [pdf], { dpi: 300 }, { maxZipBytes: 10_000 });
    expect(tooBig.error!.code).to.equal('LIMIT_EXCEEDED');
    expect(tooBig.leftovers).to.equal([]);
  });

  it('images returns each embedded image as PNG, and 422 when there is none', async () => {
    const { output } = await runOperation('pdf.images', [mixedPdf], {});
    const entries = await zipEntries(output!.body);
    expect(entries.map((e) => e.name)).to.equal(['image-0001.png']);
    const meta = await sharp(entries[0].bytes).metadata();
    expect([meta.format, meta.width, meta.height]).to.equal(['png', photo.width, photo.height]);
    const none = await runOperation('pdf.images', [textPdf], {});
    expect(none.error!.code).to.equal('NO_CONTENT');
    expect(none.error!.status).to.equal(422);
  });

  it('images returns lossless images pixel for pixel and JPEG images re-encoded without their metadata', async () => {
    const width = 64;
    const height = 40;
    const pixels = new Uint8Array(width * height * 3).map((_, i) => (i * 37 + (i >> 7)) % 256);
    const tagged = await sharp(photo.bytes).withExif({ IFD0: { Artist: 'Someone Identifiable', Copyright: 'x' } }).jpeg().toBuffer();
    expect((await sharp(tagged).metadata()).exif).to.exist();
    const meta = await sharp(tagged).metadata();
    const pdf = makePdf([{ jpeg: { bytes: tagged, width: meta.width!, height: meta.height! }, rgb: { pixels, width, height } }]);
    const { output } = await runOperation('pdf.images', [pdf], {});
    const entries = await zipEntries(output!.body);
    expect(entries.map((e) => e.name)).to.equal(['image-0001.png', 'image-0002.png']);
    for (const entry of entries) {
      const m = await sharp(entry.bytes).metadata();
      expect(m.format).to.equal('png');
      expect(m.exif).to.not.exist();
    }
    const lossless = await sharp(entries[1].bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    expect([lossless.info.width, lossless.info.height, lossless.info.channels]).to.equal([width, height, 3]);
    expect(Buffer.compare(lossless.data, Buffer.from(pixels))).to.equal(0);
  });

  it('extract returns text and page count, and flags the photographed page as likely scanned', async () => {
    const text = await runOperation('pdf.extract', [textPdf], {});
    const body = JSON.parse(new TextDecoder().decode(text.output!.body));
    expect(body.pageCount).to.equal(5);
    expect(body.likelyScanned).to.be.false();
    expect(body.text.split('\f')).to.have.length(5);
    expect(body.text).to.contain('markerpage5');
    const scanned = JSON.parse(new TextDecoder().decode((await runOperation('pdf.extract', [makePdf([{ jpeg: photo }, { jpeg: photo }])], {})).output!.body));
    expect(scanned).to.equal({ text: '\f', pageCount: 2, likelyScanned: true });
    // A page with a photo and a real text layer is not a scan.
    const mixed = JSON.parse(new TextDecoder().decode((await runOperation('pdf.extract', [mixedPdf], {})).output!.body));
    expect(mixed.likelyScanned).to.be.false();
  });
});

describe('PDF operations on the sample corpus', () => {
  it('unlocks the encrypted sample with its user password', async () => {
    const refused = await runOperation('pdf.extract', [await sample(ENCRYPTED)], {});
    expect(refused.error!.code).to.equal('ENCRYPTED_PDF');
    const { output } = await runOperation('pdf.unlock', [await sample(ENCRYPTED)], { password: 'openpassword' });
    const facts = await pdfFacts(output!.body);
    expect(facts.encrypted).to.be.false();
    expect(facts.pages).to.equal(1);
    expect(facts.check).to.equal(0);
  });

  it('keeps the outline and links of a pdfLaTeX document through balanced compression', async () => {
    const input = await sample('006-pdflatex-outline/pdflatex-outline.pdf');
    const before = await pdfFacts(input);
    const { output } = await runOperation('pdf.compress', [input], { level: 'balanced' });
    const after = await pdfFacts(output!.body);
    expect(before.outlineItems).to.be.above(0);
    expect(before.links).to.be.above(0);
    expect(after.outlineItems).to.equal(before.outlineItems);
    expect(after.links).to.equal(before.links);
    expect(after.text.replace(/\s+/g, ' ')).to.equal(before.text.replace(/\s+/g, ' '));
  });
});

describe('merge keeps every input\'s outline', () => {
  interface Entry { depth: number; title: string; page: number | null; open: boolean; view?: unknown[]; uri?: string; kids: number }

  /** The outline as qpdf reads it, flattened in document order; destinations resolved to page numbers here, not by qpdf or mupdf. */
  async function outlineOf(bytes: Uint8Array): Promise<Entry[]> {
    return withFile(bytes, 'pdf', async (file) => {
      const r = await tool('qpdf', ['--json', '--json-key=outlines', '--json-key=pages', '--json-key=qpdf', file]);
      type Item = { dest: unknown; object: string; open: boolean; title: string; kids: Item[] };
      const json = JSON.parse(r.out) as { outlines: Item[]; pages: { object: string }[]; qpdf: [unknown, Record<string, { value: Record<string, unknown> }>] };
      const pageOf = new Map(json.pages.map((p, i) => [p.object, i + 1]));
      const value = (v: unknown): Record<string, unknown> | undefined => (typeof v === 'string' && / R$/.test(v) ? json.qpdf[1][`obj:${v}`]?.value : v as Record<string, unknown> | undefined);
      const entries: Entry[] = [];
      const walk = (items: Item[], depth: number) => {
        for (const item of items) {
          const dest = Array.isArray(item.dest) ? item.dest : (item.dest as { '/D'?: unknown[] } | null)?.['/D'];
          // Positions to 0.01 pt; an /XYZ zoom of 0 and null both mean "keep the reader's zoom".
          const view = dest?.slice(1).map((v, i) => (typeof v === 'number' ? (dest[1] === '/XYZ' && i === 3 && v === 0 ? null : Math.round(v * 100) / 100) : v));
          const action = value(value(item.object)?.['/A']);
          const uri = action?.['/S'] === '/URI' ? String(action['/URI']).replace(/^u:/, '') : undefined;
          entries.push({ depth, title: item.title, page: dest ? pageOf.get(dest[0] as string) ?? null : null, open: item.open, ...(view ? { view } : {}), ...(uri ? { uri } : {}), kids: item.kids.length });
          walk(item.kids, depth + 1);
        }
      };
      walk(json.outlines, 0);
      return entries;
    });
  }

  /** What the merged outline must be: each input's entries in input order, pages moved by the pages before it. Open/closed only matters with children. */
  async function expectedOutline(inputs: readonly Uint8Array[]): Promise<Entry[]> {
    const expected: Entry[] = [];
    let offset = 0;
    for (const bytes of inputs) {
      for (const e of await outlineOf(bytes)) expected.push({ ...e, page: e.page === null ? null : e.page + offset });
      offset += (await pdfFacts(bytes)).pages;
    }
    return expected;
  }
  const comparable = (entries: Entry[]) => entries.map((e) => ({ ...e, open: e.kids > 0 ? e.open : undefined }));

  /** Link annotations, counted in qpdf's JSON of all objects. */
  const linksOf = (bytes: Uint8Array) => withFile(bytes, 'pdf', async (file) => ((await tool('qpdf', ['--json', '--json-key=qpdf', file])).out.match(/"\/Subtype": "\/Link"/g) ?? []).length);

  it('merge and merge-compress (lossless) keep nesting, titles, open state, URIs and pages moved by the earlier inputs', async () => {
    const first = makePdf(textPages(2, 'Alpha'), { outline: true, link: true });
    const nested = await sample('014-outlines/mistitled_outlines_example.pdf'); // 4 pages, three levels, closed entries
    const named = await sample('006-pdflatex-outline/pdflatex-outline.pdf'); // named destinations
    const last = makePdf(textPages(3, 'Gamma'), { outline: true, link: true, outlineTitles: ['Überblick', 'Ελληνικά', '日本語'], outlineUri: 'https://example.com/more' });
    const inputs = [first, nested, named, last];
    const expected = await expectedOutline(inputs);
    expect(expected.length).to.equal(2 + 27 + 9 + 4);
    // The sources resolve every page destination, so a lost offset cannot hide behind a null.
    expect(expected.filter((e) => e.page === null).map((e) => e.title)).to.equal(['Website']);
    expect(expected.filter((e) => e.kids > 0 && !e.open).map((e) => e.title)).to.equal(['Seventh', 'Fifteenth']);
    let expectedLinks = 0;
    for (const bytes of inputs) expectedLinks += await linksOf(bytes);
    expect(expectedLinks).to.be.at.least(5);
    for (const [work, fields] of [['pdf.merge', {}], ['pdf.merge-compress', { level: 'lossless' }]] as const) {
      const { output, leftovers } = await runOperation(work, inputs, fields);
      expect(leftovers).to.equal([]);
      const facts = await pdfFacts(output!.body);
      expect(facts.check).to.equal(0);
      expect(facts.pages).to.equal(2 + 4 + 4 + 3);
      expect(facts.text).to.contain('markergamma3');
      const merged = await outlineOf(output!.body);
      expect(comparable(merged)).to.equal(comparable(expected));
      // Spot checks against the numbers themselves: 014's "Fifth" is on its page 3, "日本語" on the last input's page 3.
      expect(merged.find((e) => e.title === 'Fifth')!.page).to.equal(2 + 3);
      expect(merged.find((e) => e.title === '日本語')!.page).to.equal(2 + 4 + 4 + 3);
      expect(merged.at(-1)).to.include({ title: 'Website', uri: 'https://example.com/more', page: null });
      // Page links are untouched: every input's link annotations are still there.
      expect(await linksOf(output!.body)).to.equal(expectedLinks);
    }
  });

  it('takes outlines from owner-password-only inputs, skips a broken one and keeps qpdf\'s merge when the outline step cannot run', async () => {
    const first = makePdf(textPages(2, 'Alpha'), { outline: true });
    const ownerOnly = await withFile(makePdf(textPages(3, 'Owner'), { outline: true, outlineTitles: ['Eins', 'Zwei', 'Drei'] }), 'pdf', async (file, dir) => {
      const out = path.join(dir, 'owner.pdf');
      expect((await tool('qpdf', ['--encrypt', '', 'owner-secret', '256', '--', file, out])).code).to.equal(0);
      return new Uint8Array(await readFile(out));
    });
    // Chapter 2's /Next points back at Chapter 1: mupdf refuses the outline ("Cycle detected").
    const healthy = makePdf(textPages(3, 'Cycle'), { outline: true });
    const cyclic = Buffer.from(Buffer.from(healthy).toString('latin1').replace('/Prev 11 0 R /Next 13 0 R', '/Prev 11 0 R /Next 11 0 R'), 'latin1');
    expect(cyclic.equals(healthy)).to.be.false();
    const nested = await sample('014-outlines/mistitled_outlines_example.pdf');

    const { output } = await runOperation('pdf.merge', [first, ownerOnly, cyclic, nested], {});
    const facts = await pdfFacts(output!.body);
    expect([facts.check, facts.pages, facts.encrypted]).to.equal([0, 12, false]);
    const expected = [...await expectedOutline([first, ownerOnly]), ...(await outlineOf(nested)).map((e) => ({ ...e, page: e.page! + 8 }))];
    expect(expected.map((e) => e.title).slice(2, 5)).to.equal(['Eins', 'Zwei', 'Drei']);
    expect(comparable(await outlineOf(output!.body))).to.equal(comparable(expected));

    // A broken outline in the first input stops the outline step; the pages are still merged.
    const fallback = await runOperation('pdf.merge', [cyclic, nested], {});
    const fallbackFacts = await pdfFacts(fallback.output!.body);
    expect([fallbackFacts.check, fallbackFacts.pages]).to.equal([0, 7]);
    expect(fallback.leftovers).to.equal([]);
  });
});
