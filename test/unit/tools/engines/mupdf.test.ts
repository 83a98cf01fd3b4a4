// The MuPDF programs in tools/engines/mupdf/, each run through `mutool run` as the service runs
// them (from dist/, where the build copies them) on PDFs generated here, and their output read
// back, where it is a file, with qpdf or mutool's own commands rather than the program itself.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { appendOutlines, countNavigation, drawFormFields, firstUnreadablePage, MUPDF_PROGRAMS, mupdfProgramPath, readPageText, runMupdfProgram } from '../../../../tools/engines/mutool.js';
import { encryptPdf, mergeFiles } from '../../../../tools/engines/qpdf.js';
import { ServiceError } from '../../../../core/errors.js';
import { formPdf, makePdf, photographedPage, textPages } from '../../../support/pdf-fixtures.js';
import { realFile } from '../../../support/real-files.js';
import { inScratch, textOf } from './support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const run = (cwd: string) => ({ cwd, timeoutMs: 30_000 });
/** The characters of a structured-text file (one <char c="x"/> element each), in order. */
const charsOf = (xml: string) => [...xml.matchAll(/ c="([^"]*)"/g)].map((m) => m[1]).join('');

describe('the MuPDF programs', () => {
  it('are found beside the compiled mutool module, one file per program', () => {
    for (const program of MUPDF_PROGRAMS) {
      const file = mupdfProgramPath(program);
      expect(file.endsWith(path.join('dist', 'tools', 'engines', 'mupdf', `${program}.js`)), file).to.be.true();
      expect(existsSync(file)).to.be.true();
    }
    expect(existsSync(path.join(path.dirname(mupdfProgramPath('page-text')), 'field-values.js'))).to.be.true();
  });

  it('page-text.js writes the pages\' structured text and prints their links, drawn boxes and image cover', async () => {
    await inScratch(async (dir, file) => {
      const scan = await photographedPage(300, 400);
      const pdf = await file('in.pdf', makePdf([...textPages(2), { jpeg: scan }], { link: true }));
      const stext = path.join(dir, 'pages.stext');
      // Pages 2 and 3 of 3: the first is left out.
      const result = await readPageText(pdf, 2, 3, stext, run(dir));
      expect(result.exitCode).to.equal(0);
      const text = charsOf(await readFile(stext, 'utf8'));
      expect(text).to.contain('markerpage2');
      expect(text).to.not.contain('markerpage1');
      const pages = JSON.parse(Buffer.from(result.stdout).toString('utf8')) as [[number[], string][], number[][], number][];
      expect(pages).to.have.length(2);
      // The text page: its link, no image; the scanned page: one image over the whole page.
      expect(pages[0][0].map(([, uri]) => uri)).to.equal(['https://example.com/']);
      expect(pages[0][2]).to.equal(0);
      expect(pages[1][2]).to.equal(1);
    });
  });

  it('page-text.js says ENCRYPTED for a password-protected file, which is the client\'s ENCRYPTED_PDF', async () => {
    await inScratch(async (dir, file) => {
      const plain = await file('plain.pdf', makePdf(textPages(1)));
      const locked = path.join(dir, 'locked.pdf');
      await encryptPdf(plain, locked, 'secret', run(dir));
      const raw = await runMupdfProgram('page-text', [locked, '1', '1', path.join(dir, 'x.stext')], run(dir));
      expect(Buffer.from(raw.stdout).toString('utf8').trim()).to.equal('ENCRYPTED');
      const err = await expect(readPageText(locked, 1, 1, path.join(dir, 'x.stext'), run(dir))).to.reject(ServiceError);
      expect(err.code).to.equal('ENCRYPTED_PDF');
    });
  });

  it('page-text.js reads the values of a form that leaves drawing them to the viewer', async () => {
    await inScratch(async (dir, file) => {
      const pdf = await file('form.pdf', formPdf(true));
      const stext = path.join(dir, 'form.stext');
      expect((await readPageText(pdf, 1, 1, stext, run(dir))).exitCode).to.equal(0);
      expect(charsOf(await readFile(stext, 'utf8'))).to.contain('Alice');
    });
  });

  it('page-check.js names the first page MuPDF cannot read (qpdf\'s issue-1688b.pdf: Flate predictor parameters it refuses), none for readable files', async () => {
    await inScratch(async (dir, file) => {
      expect(await firstUnreadablePage(await file('issue-1688b.pdf', await realFile('issue-1688b.pdf')), 1, run(dir))).to.equal(1);
      expect(await firstUnreadablePage(await file('fine.pdf', makePdf(textPages(3))), 3, run(dir))).to.be.undefined();
      // Pages past those MuPDF finds (a page tree it cannot follow) are pages it cannot read.
      expect(await firstUnreadablePage(path.join(dir, 'fine.pdf'), 4, run(dir))).to.equal(4);
      // The same broken content as the third of three pages: the first two are read.
      const broken = Buffer.from(makePdf(textPages(3)).toString('latin1').replace(/(\/Length \d+ >>\nstream\nBT[^]*?){2}\/Length/, (m) => m.replace(/\/Length$/, '/Filter /FlateDecode /DecodeParms << /Predictor 10 /Colors 536870913 /Columns 1 >> /Length')), 'latin1');
      expect(await firstUnreadablePage(await file('third.pdf', broken), 3, run(dir))).to.equal(3);
    });
  });

  it('count-navigation.js counts outline entries and links', async () => {
    await inScratch(async (dir, file) => {
      expect(await countNavigation(await file('nav.pdf', makePdf(textPages(3), { outline: true, link: true })), run(dir))).to.equal({ outline: 3, links: 3 });
      expect(await countNavigation(await file('bare.pdf', makePdf(textPages(2))), run(dir))).to.equal({ outline: 0, links: 0 });
      // Not a PDF: no counts, rather than a guess.
      expect(await countNavigation(await file('junk.pdf', 'not a pdf'), run(dir))).to.be.undefined();
    });
  });

  it('merge-outline.js appends the later inputs\' outlines to qpdf\'s merge, their destinations moved by the pages before them', async () => {
    await inScratch(async (dir, file) => {
      const first = await file('a.pdf', makePdf(textPages(2), { outline: true }));
      const second = await file('b.pdf', makePdf(textPages(3, 'Second'), { outline: true, outlineTitles: ['Part 1', 'Part 2', 'Part 3'] }));
      const merged = path.join(dir, 'merged.pdf');
      await mergeFiles([first, second], merged, 'object-streams', run(dir));
      // qpdf keeps the first input's outline only.
      expect(await countNavigation(merged, run(dir))).to.equal({ outline: 2, links: 0 });
      const out = path.join(dir, 'outlined.pdf');
      // The second source's page count left unknown (-1): the program counts it itself.
      expect(await appendOutlines(merged, out, [{ file: first, pages: 2 }, { file: second, pages: undefined }], run(dir))).to.equal(3);
      const outline = await textOf('mutool', ['show', out, 'outline']);
      expect(outline).to.contain('"Chapter 1"\t#page=1');
      expect(outline).to.contain('"Part 1"\t#page=3');
      expect(outline).to.contain('"Part 3"\t#page=5');
      // The update is incremental: qpdf reads the result, with all five pages.
      expect((await textOf('qpdf', ['--show-npages', out])).trim()).to.equal('5');
    });
  });

  it('merge-outline.js appends nothing when the later inputs have no outline', async () => {
    await inScratch(async (dir, file) => {
      const first = await file('a.pdf', makePdf(textPages(1), { outline: true }));
      const second = await file('b.pdf', makePdf(textPages(1)));
      const merged = path.join(dir, 'merged.pdf');
      await mergeFiles([first, second], merged, 'object-streams', run(dir));
      expect(await appendOutlines(merged, path.join(dir, 'out.pdf'), [{ file: first, pages: 1 }, { file: second, pages: 1 }], run(dir))).to.equal(0);
      expect(existsSync(path.join(dir, 'out.pdf'))).to.be.false();
    });
  });

  it('draw-form-fields.js gives a NeedAppearances form\'s filled fields an appearance, and leaves other files alone', async () => {
    await inScratch(async (dir, file) => {
      const drawn = path.join(dir, 'drawn.pdf');
      expect(await drawFormFields(await file('form.pdf', formPdf(true)), drawn, run(dir))).to.be.true();
      // qpdf reads the saved widget: it now has a normal appearance stream that shows the value.
      const widget = await textOf('qpdf', ['--show-object=4', drawn]);
      const appearance = /\/AP << \/N (\d+) 0 R >>/.exec(widget);
      expect(appearance, widget).to.exist();
      expect(await textOf('qpdf', [`--show-object=${appearance![1]}`, '--filtered-stream-data', drawn])).to.contain('(Alice) Tj');
      expect(await textOf('qpdf', ['--show-object=4', path.join(dir, 'form.pdf')])).to.not.contain('/AP');

      const untouched = path.join(dir, 'untouched.pdf');
      expect(await drawFormFields(await file('plain-form.pdf', formPdf(false)), untouched, run(dir))).to.be.false();
      expect(existsSync(untouched)).to.be.false();
    });
  });
});
