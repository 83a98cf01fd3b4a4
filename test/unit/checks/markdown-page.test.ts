// The page from-markdown typesets on (checks/markdown-page.ts): the figures the layout estimate
// derives from it, and that WeasyPrint, given the stylesheet built from the same declaration,
// lays out a page and a line of code as wide as the estimate counts them.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import {
  ADVANCE_PT, CELL_INSET_PT, CHARS_PER_LINE, CODE_CHARS_PER_LINE, MARKDOWN_PAGE, TEXT_WIDTH_PT,
} from '../../../checks/markdown-page.js';
import { PRINT_STYLESHEET, renderMarkdownHtml } from '../../../workers/pdf/markdown-html.js';
import { renderHtmlToPdf } from '../../../tools/engines/weasyprint.js';
import { inScratch, textOf } from '../tools/engines/support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('the Markdown page', () => {
  it('derives the widths the estimate was fitted with (bench/notes/markdown-layout-cost.md)', () => {
    expect(TEXT_WIDTH_PT).to.equal(493);
    expect(ADVANCE_PT).to.equal(6);
    expect(CHARS_PER_LINE).to.equal(82);
    expect(CODE_CHARS_PER_LINE).to.equal(93);
    expect(CELL_INSET_PT).to.equal(10.5);
  });

  it('is the page the stylesheet sets', () => {
    const { marginMm: margin, codePaddingPt: code, cellPaddingPt: cell, ruleWidthPt: rule } = MARKDOWN_PAGE;
    expect(PRINT_STYLESHEET).to.contain(`size: ${MARKDOWN_PAGE.size};`);
    expect(PRINT_STYLESHEET).to.contain(`margin: ${margin.top}mm ${margin.side}mm ${margin.bottom}mm ${margin.side}mm;`);
    expect(PRINT_STYLESHEET).to.contain(`font-size: ${MARKDOWN_PAGE.bodyFontPt}pt; line-height`);
    expect(PRINT_STYLESHEET).to.contain(`code, pre { font-family: "DejaVu Sans Mono"; font-size: ${MARKDOWN_PAGE.codeFontPt}pt; }`);
    expect(PRINT_STYLESHEET).to.contain(`border: ${rule}pt solid #d8d8d8; padding: ${code.vertical}pt ${code.horizontal}pt;`);
    expect(PRINT_STYLESHEET).to.contain(`th, td { border: ${rule}pt solid #999; padding: ${cell.vertical}pt ${cell.horizontal}pt;`);
  });

  it('typesets an A4 page whose code blocks hold CODE_CHARS_PER_LINE characters a line, and wrap the next', async () => {
    const fits = `${'abcdefghi '.repeat(9)}abc`;
    const over = `${'jklmnopqr '.repeat(9)}jklm`;
    expect([fits.length, over.length]).to.equal([CODE_CHARS_PER_LINE, CODE_CHARS_PER_LINE + 1]);
    await inScratch(async (dir, file) => {
      const pdf = await renderHtmlToPdf(renderMarkdownHtml(`\`\`\`\n${fits}\n${over}\n\`\`\`\n`), { workDir: dir, timeoutMs: 60_000 });
      const path = await file('page.pdf', pdf);
      expect(await textOf('pdfinfo', [path])).to.match(/Page size:\s+595\.\d+ x 841\.\d+ pts \(A4\)/);
      const text = await textOf('pdftotext', [path, '-']);
      const lines = text.split('\n').map((line) => line.trimEnd()).filter((line) => /^[a-r ]+$/.test(line));
      expect(lines).to.equal([fits, over.slice(0, -5), 'jklm']);
    });
  });
});
