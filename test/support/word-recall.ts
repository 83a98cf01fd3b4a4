// How much of a PDF's own text layer an OCR result recovers: the accuracy figure for OCR.

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
