// How much of a PDF's own text layer, or of a ground-truth page, an OCR result recovers: the
// accuracy figure for OCR.
import MarkdownIt from 'markdown-it';

// pdftotext joins words hyphenated at a line end; OCR keeps the hyphen and the break as printed.
function words(text: string): string[] {
  return text.replace(/(\p{L})[-\u00AD]\s*\n\s*(\p{L})/gu, '$1$2').normalize('NFKC').toLowerCase().replace(/[’‘]/g, "'").split(/[^\p{L}\p{N}']+/u)
    .map((w) => w.replace(/^'+|'+$/g, '')).filter((w) => w.length > 0);
}

/** Share of the reference words (with multiplicity) that the OCR text also has. */
export function wordRecall(reference: string, recognised: string): number {
  const counts = new Map<string, number>();
  for (const w of words(recognised)) counts.set(w, (counts.get(w) ?? 0) + 1);
  const expected = words(reference);
  let found = 0;
  for (const w of expected) {
    const left = counts.get(w) ?? 0;
    if (left > 0) {
      found++;
      counts.set(w, left - 1);
    }
  }
  return found / expected.length;
}

/** A ground-truth page's words as a reader sees them: its Markdown rendered, tags and images dropped. */
export function groundTruthText(markdown: string): string {
  const html = new MarkdownIt({ html: true }).render(markdown).replace(/<img\b[^>]*>/gi, '');
  return html.replace(/<[^>]+>/g, ' ').replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}
