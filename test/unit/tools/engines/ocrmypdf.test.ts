// The OCRmyPDF engine on a scan drawn here: the text layer pdftotext reads, the options that keep
// pages as they are, and its failures mapped to the catalog (an encrypted file, a file it cannot
// read, a language not installed, a deadline).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import path from 'node:path';
import sharp from 'sharp';
import { ServiceError } from '../../../../core/errors.js';
import { ocrmypdfArgs, runOcrmypdf, type OcrLanguage } from '../../../../tools/engines/ocrmypdf.js';
import { runTool } from '../../../../tools/process/run-tool.js';
import { inScratch, textOf } from './support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

/** A page of two words as a scanner gives it: a 200 dpi grey PNG wrapped as an image-only PDF. */
async function scannedPdf(dir: string, file: (name: string, bytes: Uint8Array | string) => Promise<string>): Promise<string> {
  const png = await sharp(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1600" height="400"><rect width="100%" height="100%" fill="#fff"/><text x="60" y="220" font-family="DejaVu Serif" font-size="96">Quarterly invoice</text></svg>'))
    .grayscale().withMetadata({ density: 200 }).png().toBuffer();
  await file('scan.png', png);
  const converted = await runTool('mutool', ['convert', '-o', 'scan.pdf', 'scan.png'], { cwd: dir, timeoutMs: 30_000 });
  expect(converted.exitCode).to.equal(0);
  return path.join(dir, 'scan.pdf');
}

describe('the OCRmyPDF engine', () => {
  it('keeps pages as they are: text pages skipped, no PDF/A rewrite, no optimisation, one job; languages joined with +', () => {
    const args = ocrmypdfArgs({ input: 'in.pdf', output: 'out.pdf', languages: ['eng', 'deu'] });
    expect(args).to.include(['--skip-text', '--output-type', 'pdf', '--optimize', '0', '--jobs', '1']);
    expect(args).to.not.include('--force-ocr');
    expect(args.slice(args.indexOf('--language'), args.indexOf('--language') + 2)).to.equal(['--language', 'eng+deu']);
    expect(args.slice(-2)).to.equal(['in.pdf', 'out.pdf']);
  });

  it('adds a text layer pdftotext reads to a scanned page', { timeout: 60_000 }, async () => {
    await inScratch(async (dir, file) => {
      const input = await scannedPdf(dir, file);
      expect((await textOf('pdftotext', [input, '-'])).trim()).to.equal('');
      await runOcrmypdf({ input, output: path.join(dir, 'out.pdf'), languages: ['eng'], cwd: dir, timeoutMs: 50_000 });
      expect(await textOf('pdftotext', [path.join(dir, 'out.pdf'), '-'])).to.match(/Quarterly\s+invoice/);
    });
  });

  it('an encrypted PDF is ENCRYPTED_PDF, a file it cannot read CORRUPT_INPUT, a language not installed UNAVAILABLE, its deadline JOB_TIMEOUT', { timeout: 60_000 }, async () => {
    await inScratch(async (dir, file) => {
      const input = await scannedPdf(dir, file);
      const run = (source: string, languages: string[] = ['eng'], timeoutMs = 50_000) =>
        runOcrmypdf({ input: source, output: path.join(dir, 'out.pdf'), languages: languages as OcrLanguage[], cwd: dir, timeoutMs });
      expect((await runTool('qpdf', ['--encrypt', '', 'owner', '256', '--', input, 'locked.pdf'], { cwd: dir, timeoutMs: 30_000 })).exitCode).to.equal(0);
      expect((await expect(run(path.join(dir, 'locked.pdf'))).to.reject(ServiceError)).code).to.equal('ENCRYPTED_PDF');
      expect((await expect(run(await file('junk.pdf', '%PDF-1.7\nnot really a PDF\n'))).to.reject(ServiceError)).code).to.equal('CORRUPT_INPUT');
      expect((await expect(run(input, ['xyz'])).to.reject(ServiceError)).code).to.equal('UNAVAILABLE');
      expect((await expect(run(input, ['eng'], 300)).to.reject(ServiceError)).code).to.equal('JOB_TIMEOUT');
    });
  });
});
