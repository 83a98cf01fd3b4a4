// Hostile PDFs whose readers disagree on what they hold, written byte by byte for the tests of
// the priced document: two documents in one file with no usable cross-reference table (qpdf's
// repair reads the first trailer, poppler, MuPDF and Ghostscript the last), and a PostScript
// program before a real PDF's header (Ghostscript would run it).

/** The objects of a document of `pages` text pages, numbered from `first`. */
function documentObjects(pages: number, label: string, first: number): Map<number, Buffer> {
  const objects = new Map<number, Buffer>();
  const kids = Array.from({ length: pages }, (_, i) => `${first + 2 + 2 * i} 0 R`).join(' ');
  objects.set(first, Buffer.from(`<< /Type /Catalog /Pages ${first + 1} 0 R >>`));
  objects.set(first + 1, Buffer.from(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`));
  for (let i = 0; i < pages; i++) {
    const content = `BT /F1 24 Tf 72 700 Td (${label} page ${i + 1}) Tj ET`;
    objects.set(first + 2 + 2 * i, Buffer.from(`<< /Type /Page /Parent ${first + 1} 0 R /MediaBox [0 0 612 792] /Contents ${first + 3 + 2 * i} 0 R /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>`));
    objects.set(first + 3 + 2 * i, Buffer.from(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`));
  }
  return objects;
}

/** A document whose pages read "<label> page N"; with `xref: false` its startxref points nowhere. */
export function labelledDocument(pages: number, label: string, options: { first?: number; offset?: number; xref?: boolean } = {}): Buffer {
  const { first = 1, offset = 0, xref = true } = options;
  const objects = documentObjects(pages, label, first);
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let length = parts[0].length;
  const offsets = new Map<number, number>();
  for (const [number, body] of objects) {
    offsets.set(number, offset + length);
    const part = Buffer.concat([Buffer.from(`${number} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(part);
    length += part.length;
  }
  const xrefAt = offset + length;
  let tail = '';
  if (xref) {
    tail += 'xref\n0 1\n0000000000 65535 f \n';
    for (const [number, at] of offsets) tail += `${number} 1\n${String(at).padStart(10, '0')} 00000 n \n`;
  }
  tail += `trailer\n<< /Size ${first + objects.size} /Root ${first} 0 R >>\nstartxref\n${xref ? xrefAt : 999999999}\n%%EOF\n`;
  parts.push(Buffer.from(tail));
  return Buffer.concat(parts);
}

/** Two documents of `firstPages` and `lastPages` pages in one file, neither with a usable cross-reference table. */
export function twoDocuments(firstPages: number, lastPages: number): Buffer {
  const first = labelledDocument(firstPages, 'FIRST', { first: 1, xref: false });
  const last = labelledDocument(lastPages, 'LAST', { first: 1000, offset: first.length, xref: false });
  return Buffer.concat([first, last]);
}

/** A PostScript program that draws "INJECTED" and quits, followed by a real one-page PDF. */
export function postscriptBeforePdf(): Buffer {
  const program = '%!PS\n/Helvetica findfont 40 scalefont setfont 72 400 moveto (INJECTED) show showpage quit\n';
  return Buffer.concat([Buffer.from(program), labelledDocument(1, 'REAL')]);
}
