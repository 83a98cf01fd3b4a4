// The tesseract engine on an image drawn here: the words it reads, its hOCR, and its failures
// (a language not installed is the deployment's UNAVAILABLE, a malformed setting too).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import sharp from 'sharp';
import type { Job } from '../../../../core/job.js';
import { ServiceError } from '../../../../core/errors.js';
import { ocrLanguages, tesseractHocr, tesseractText } from '../../../../tools/engines/tesseract.js';
import { TEST_SETTINGS } from '../../../support/jobs.js';
import { inScratch } from './support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const job = (jobDir: string, languages = 'eng'): Job => ({
  operation: 'image.ocr', files: [], params: {}, jobDir, deadline: Date.now() + 60_000, settings: { ...TEST_SETTINGS, ocrLanguages: languages },
});

const wordsImage = () => sharp(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="900" height="160"><rect width="100%" height="100%" fill="#fff"/><text x="30" y="100" font-family="DejaVu Sans" font-size="56">Quarterly invoice</text></svg>')).png().toBuffer();

describe('the tesseract engine', () => {
  it('checks the languages setting against tesseract\'s syntax', () => {
    expect(ocrLanguages(undefined)).to.equal('eng');
    expect(ocrLanguages(' eng+deu ')).to.equal('eng+deu');
    expect(() => ocrLanguages('eng; rm -rf /')).to.throw(ServiceError);
  });

  it('reads the words of an image, as text and as hOCR with boxes', async () => {
    await inScratch(async (dir) => {
      const png = await wordsImage();
      expect(await tesseractText(job(dir), png)).to.match(/Quarterly\s+invoice/);
      const hocr = await tesseractHocr(job(dir), png, { dpi: 300 });
      expect(hocr).to.contain('ocrx_word');
      expect(hocr).to.contain('bbox');
    });
  });

  it('a language that is not installed is UNAVAILABLE, an image it cannot read CORRUPT_INPUT', async () => {
    await inScratch(async (dir) => {
      const missing = await expect(tesseractText(job(dir, 'xyz'), await wordsImage())).to.reject(ServiceError);
      expect(missing.code).to.equal('UNAVAILABLE');
      const unreadable = await expect(tesseractText(job(dir), new TextEncoder().encode('not an image'))).to.reject(ServiceError);
      expect(unreadable.code).to.equal('CORRUPT_INPUT');
    });
  });
});
