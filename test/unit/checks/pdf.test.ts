// The pre-payment PDF check (checks/pdf.ts): page count, damage, passwords, before any payment.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import { readdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkMupdfReadsPages, inspectPdf, normalisePdf } from '../../../checks/pdf.js';
import { ServiceError } from '../../../core/errors.js';
import { runTool } from '../../../tools/process/run-tool.js';
import { makePdf, photographedPage, textPages, sampleFile } from '../../support/pdf-fixtures.js';
import { jobRoot } from '../../support/jobs.js';
import { tool } from '../../support/independent-tools.js';
import { realFile } from '../../support/real-files.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

const ENCRYPTED = '005-libreoffice-writer-password/libreoffice-writer-password.pdf';

describe('inspectPdf', () => {
  let dir: string;
  before(async () => { dir = await mkdtemp(path.join(jobRoot(), 'pdf-inspect-')); });
  lab.after(async () => { await rm(dir, { recursive: true, force: true }); });

  const write = async (name: string, bytes: Uint8Array | Buffer) => {
    const f = path.join(dir, name);
    await writeFile(f, bytes);
    return f;
  };

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

  it('takes a PDF whose only qpdf warning is how a name is spelled (qpdf\'s bad21.pdf: a stray # in its trailer) as it is, and rewrites one that also needs a repair', async () => {
    const bad21 = await realFile('bad21.pdf');
    expect((await tool('qpdf', ['--show-npages', await write('bad21-raw.pdf', bad21)])).code).to.equal(3);
    expect(await inspectPdf(await write('bad21.pdf', bad21), { acceptsEncrypted: false })).to.equal({ pages: 1, encrypted: false, needsRewrite: false });
    // The same file with every object moved (its cross-reference table no longer fits): a repair,
    // so it is rewritten; qpdf's rewrite keeps the stray #, and that alone does not refuse it.
    const shifted = await write('bad21-shifted.pdf', Buffer.concat([bad21.subarray(0, 9), Buffer.from('% moves every object\n'), bad21.subarray(9)]));
    const inspected = await inspectPdf(shifted, { acceptsEncrypted: false });
    expect(inspected).to.equal({ pages: 1, encrypted: false, needsRewrite: true });
    const rewritten = await normalisePdf(shifted, inspected.pages);
    expect(Buffer.from(rewritten).includes('Som#ething')).to.be.true();
    expect((await tool('pdftotext', [shifted, '-'])).out).to.contain('Potato');
  });

  it('refuses, for an operation that reads pages with MuPDF, a page MuPDF cannot read that qpdf accepts (qpdf\'s issue-1688b.pdf), naming the page', async () => {
    const file = await write('issue-1688b.pdf', await realFile('issue-1688b.pdf'));
    expect(await inspectPdf(file, { acceptsEncrypted: false })).to.equal({ pages: 1, encrypted: false, needsRewrite: false });
    const err = await expect(checkMupdfReadsPages(file, 1, '/v1/pdf/render')).to.reject(ServiceError);
    expect(err.code).to.equal('CORRUPT_INPUT');
    expect(err.message).to.equal('page 1 of the PDF cannot be read by MuPDF, which /v1/pdf/render reads pages with: its content is damaged or uses parameters MuPDF does not support');
    await checkMupdfReadsPages(await write('fine.pdf', makePdf(textPages(3))), 3, '/v1/pdf/render');
    await checkMupdfReadsPages(await write('bad21-mupdf.pdf', await realFile('bad21.pdf')), 1, '/v1/pdf/render');
  });

  it('refuses a password-protected PDF, except for unlock with the right password', async () => {
    const file = await write('e.pdf', await sampleFile(ENCRYPTED));
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
