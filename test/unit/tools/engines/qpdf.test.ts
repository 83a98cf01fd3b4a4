// The qpdf engine: what its readings report, what its writes produce (read back with mutool), and
// how its exit codes and failures become the catalog's errors.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import path from 'node:path';
import { ServiceError } from '../../../../core/errors.js';
import {
  checkStreams, decryptPdf, encryptPdf, extractPageRange, isWrongPassword, mergeFiles, packLosslessly, pageCountForJob, printedPageCount,
  qpdfPageSpec, qpdfRepaired, qpdfSucceeded, rewritePdf, selectPages, showPageCount, surveyPdf,
} from '../../../../tools/engines/qpdf.js';
import { makePdf, textPages } from '../../../support/pdf-fixtures.js';
import { realFile } from '../../../support/real-files.js';
import { inScratch, textOf } from './support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const run = (cwd: string) => ({ cwd, timeoutMs: 30_000 });
/** The page texts as mutool reads them, one string per page. */
const pageTexts = async (file: string) => (await textOf('mutool', ['draw', '-q', '-F', 'txt', '-o', '-', file])).split('\f').map((t) => t.trim()).filter(Boolean);

describe('the qpdf engine', () => {
  it('writes page lists in qpdf\'s range syntax', () => {
    expect(qpdfPageSpec([1, 2, 3, 5, 7, 8])).to.equal('1-3,5,7-8');
    expect(qpdfPageSpec([3, 2, 1])).to.equal('3,2,1');
    expect(qpdfPageSpec([])).to.equal('');
  });

  it('surveys a file in one run: declared and walked pages, encryption, or the need for a password', async () => {
    await inScratch(async (dir, file) => {
      const plain = await file('plain.pdf', makePdf(textPages(3)));
      const survey = await surveyPdf(plain, run(dir));
      const { needsPassword, encrypted, declared, walked } = survey;
      expect({ needsPassword, encrypted, declared, walked }).to.equal({ needsPassword: false, encrypted: false, declared: 3, walked: 3 });
      const locked = path.join(dir, 'locked.pdf');
      await encryptPdf(plain, locked, 'pw', run(dir));
      const lockedSurvey = await surveyPdf(locked, run(dir));
      expect(lockedSurvey.needsPassword).to.be.true();
      expect(lockedSurvey.encrypted).to.be.true();
      // With the password, through the job file, the count is there; a wrong one is recognised as such.
      expect(printedPageCount(await showPageCount(locked, run(dir), 'pw'))).to.equal(3);
      expect(isWrongPassword(await showPageCount(locked, run(dir), 'nope'))).to.be.true();
    });
  });

  it('tells a repaired reading from a clean one, and finds a corrupt stream only with --check', async () => {
    await inScratch(async (dir, file) => {
      // A stream that claims Flate compression but holds plain text: the page tree is fine.
      const broken = await file('broken.pdf', Buffer.from(makePdf([{ text: 'x' }]).toString('latin1').replace('/Length', '/Filter /FlateDecode /Length'), 'latin1'));
      const count = await showPageCount(broken, run(dir));
      expect(qpdfSucceeded(count)).to.be.true();
      expect((await checkStreams(broken, run(dir))).exitCode).to.equal(2);
      // A file whose objects sit elsewhere than its cross-reference table says is read only by
      // reconstructing the table: exit 3.
      const whole = makePdf(textPages(2));
      const cut = await file('shifted.pdf', Buffer.concat([whole.subarray(0, 9), Buffer.from('% moves every object\n'), whole.subarray(9)]));
      const repaired = await showPageCount(cut, run(dir));
      expect(qpdfRepaired(repaired)).to.be.true();
      const rewritten = path.join(dir, 'rewritten.pdf');
      expect(qpdfSucceeded(await rewritePdf(cut, rewritten, run(dir)))).to.be.true();
      expect((await showPageCount(rewritten, run(dir))).exitCode).to.equal(0);
    });
  });

  it('a warning about how a name is spelled is not a repair; with a repair beside it, or with its account cut short, the reading is repaired', async () => {
    await inScratch(async (dir, file) => {
      const bad21 = await realFile('bad21.pdf');
      const spelled = await showPageCount(await file('bad21.pdf', bad21), run(dir));
      expect(spelled.exitCode).to.equal(3);
      expect(qpdfRepaired(spelled)).to.be.false();
      const shifted = await file('bad21-shifted.pdf', Buffer.concat([bad21.subarray(0, 9), Buffer.from('% moves every object\n'), bad21.subarray(9)]));
      expect(qpdfRepaired(await showPageCount(shifted, run(dir)))).to.be.true();
      // stderr is kept up to 64 KiB: without qpdf's closing line, what was cut off is not known to be harmless.
      expect(qpdfRepaired({ ...spelled, stderr: spelled.stderr.split('\n')[0]! })).to.be.true();
    });
  });

  it('selects, turns, cuts, merges and packs pages, which another reader then finds', async () => {
    await inScratch(async (dir, file) => {
      const source = await file('src.pdf', makePdf(textPages(4)));
      const selected = path.join(dir, 'selected.pdf');
      await selectPages(source, selected, { pages: [4, 1], rotate: 90 }, run(dir));
      const texts = await pageTexts(selected);
      expect(texts.map((t) => /markerpage\d/.exec(t)?.[0])).to.equal(['markerpage4', 'markerpage1']);
      expect(await textOf('mutool', ['pages', selected])).to.match(/<Rotate v="90"\s*\/>/);

      const range = path.join(dir, 'range.pdf');
      await extractPageRange(source, 2, 3, range, run(dir));
      expect((await pageTexts(range)).map((t) => /markerpage\d/.exec(t)?.[0])).to.equal(['markerpage2', 'markerpage3']);

      const merged = path.join(dir, 'merged.pdf');
      await mergeFiles([range, source], merged, 'lossless', run(dir));
      expect(await pageCountForJob(merged, run(dir))).to.equal(6);

      const packed = path.join(dir, 'packed.pdf');
      await packLosslessly(source, packed, run(dir));
      expect(await pageTexts(packed)).to.equal(await pageTexts(source));
    });
  });

  it('encrypts with AES-256 and decrypts; a wrong password is WRONG_PASSWORD, a damaged file CORRUPT_INPUT', async () => {
    await inScratch(async (dir, file) => {
      const source = await file('src.pdf', makePdf(textPages(1)));
      const locked = path.join(dir, 'locked.pdf');
      await encryptPdf(source, locked, 'pa ss', run(dir));
      expect(await textOf('qpdf', ['--show-encryption', '--password=pa ss', locked])).to.contain('R = 6');
      const err = await expect(decryptPdf(locked, path.join(dir, 'x.pdf'), 'wrong', run(dir))).to.reject(ServiceError);
      expect(err.code).to.equal('WRONG_PASSWORD');
      const unlocked = path.join(dir, 'unlocked.pdf');
      await decryptPdf(locked, unlocked, 'pa ss', run(dir));
      expect((await pageTexts(unlocked))[0]).to.contain('markerpage1');
      // No job file (which holds the password) is left behind.
      expect((await textOf('ls', ['-a', dir])).split('\n').filter((n) => n.startsWith('.qpdf-job'))).to.equal([]);

      const junk = await file('junk.pdf', '%PDF-1.4\nnothing here\n');
      const damaged = await expect(selectPages(junk, path.join(dir, 'y.pdf'), {}, run(dir))).to.reject(ServiceError);
      expect(damaged.code).to.equal('CORRUPT_INPUT');
      expect(await pageCountForJob(junk, run(dir))).to.equal(0);
    });
  });

  it('a run past its deadline is JOB_TIMEOUT', async () => {
    await inScratch(async (dir, file) => {
      const source = await file('src.pdf', makePdf(textPages(200)));
      const err = await expect(packLosslessly(source, path.join(dir, 'out.pdf'), { cwd: dir, timeoutMs: 1 })).to.reject(ServiceError);
      expect(err.code).to.equal('JOB_TIMEOUT');
    });
  });
});
