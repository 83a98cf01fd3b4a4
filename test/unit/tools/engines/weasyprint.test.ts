// The WeasyPrint engine: its script found beside the compiled module, HTML typeset as a PDF that
// Poppler reads, and no URL fetched.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import path from 'node:path';
import { rendererScript, renderHtmlToPdf } from '../../../../tools/engines/weasyprint.js';
import { inScratch, textOf } from './support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('the WeasyPrint engine', () => {
  it('runs its script from dist/, where the build copies it', () => {
    expect(rendererScript().endsWith(path.join('dist', 'tools', 'engines', 'weasyprint', 'render.py'))).to.be.true();
  });

  it('typesets HTML as a PDF, leaving out what it would have to fetch', async () => {
    await inScratch(async (dir, file) => {
      const html = '<html><body><h1>Invoice 42</h1><p>Due in thirty days.</p><img src="https://example.com/x.png" alt=""></body></html>';
      const pdf = await renderHtmlToPdf(html, { workDir: dir, timeoutMs: 60_000 });
      const text = await textOf('pdftotext', [await file('out.pdf', pdf), '-']);
      expect(text).to.contain('Invoice 42');
      expect(text).to.contain('Due in thirty days.');
    });
  });
});
