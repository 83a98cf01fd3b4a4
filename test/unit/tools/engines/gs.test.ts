// The Ghostscript engine: its settings per level, and pdfwrite's result read back with qpdf.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { GS_BALANCED_JPEG_PASS_THROUGH, GS_EXIT, GS_LEVEL, gsArgs, maxAtDpi, pdfwrite } from '../../../../tools/engines/gs.js';
import { makePdf, photographedPage } from '../../../support/pdf-fixtures.js';
import { inScratch, textOf } from './support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('the Ghostscript engine', () => {
  it('runs safely and in batch, with the level\'s settings, the output and the inputs last', () => {
    const args = gsArgs('max', 'out.pdf', ['a.pdf', 'b.pdf']);
    expect(args.slice(0, 4)).to.equal(['-q', '-dNOPAUSE', '-dBATCH', '-dSAFER']);
    expect(args).to.include(['-sDEVICE=pdfwrite', ...GS_LEVEL.max]);
    expect(args.slice(-3)).to.equal(['-sOutputFile=out.pdf', 'a.pdf', 'b.pdf']);
  });

  it('derives the steps below max and the JPEG pass-through variant from the levels, changing one setting each', () => {
    const at50 = maxAtDpi(50);
    expect(at50.name).to.equal('gs-50dpi');
    expect(at50.args).to.include(['-dColorImageResolution=50', '-dGrayImageResolution=50', '-dMonoImageResolution=150']);
    expect(at50.args.length).to.equal(GS_LEVEL.max.length);
    expect(GS_BALANCED_JPEG_PASS_THROUGH.args.filter((arg, i) => arg !== GS_LEVEL.balanced[i])).to.equal(['-dPassThroughJPEGImages=true']);
  });

  it('max brings a photographed page down in size and keeps the page', async () => {
    await inScratch(async (dir, file) => {
      const scan = await photographedPage(1200, 1600);
      const source = await file('scan.pdf', makePdf([{ jpeg: scan }]));
      const out = path.join(dir, 'out.pdf');
      const result = await pdfwrite('max', out, [source], GS_LEVEL.max, { cwd: dir, timeoutMs: 60_000 });
      expect(result.exitCode).to.equal(GS_EXIT.ok);
      expect((await stat(out)).size).to.be.below((await stat(source)).size / 2);
      expect((await textOf('qpdf', ['--show-npages', out])).trim()).to.equal('1');
    });
  });
});
