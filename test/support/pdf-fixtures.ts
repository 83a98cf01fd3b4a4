// Tiny PDFs written byte by byte for the PDF tests: text pages in a standard font, optional
// outline and link, optional full-page JPEG images (a "photographed" page). No corpus copies.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';

export interface FixturePage {
  text?: string;
  /** A full-page JPEG; greyscale unless `color` says it has three components. */
  jpeg?: { bytes: Uint8Array; width: number; height: number; color?: boolean };
  /** A full-page RGB image stored with /FlateDecode (lossless), 8 bits per channel, after any JPEG. */
  rgb?: { pixels: Uint8Array; width: number; height: number };
  /** Page size in points; A4 by default. */
  size?: [number, number];
  rotate?: number;
  /** PDF's /UserUnit: the size of one unit of the page in points (1 by default). */
  userUnit?: number;
  /**
   * Lines drawn after `text` in a CID font (Type0, Identity-H, two-byte codes that are not the
   * characters' own) whose ToUnicode CMap poppler reads and MuPDF drops: see cidToUnicodeCMap.
   */
  cidText?: string;
}

/** A file embedded in the PDF (the EmbeddedFiles name tree), shown by a file attachment annotation on page 1 when `annotation`. */
export interface FixtureAttachment {
  name: string;
  mediaType: string;
  bytes: Uint8Array;
  annotation?: boolean;
}

export interface FixtureOptions {
  outline?: boolean;
  link?: boolean;
  /** Outline titles, one per page (default "Chapter N"); non-ASCII ones are written as UTF-16BE. */
  outlineTitles?: readonly string[];
  /** Adds a last outline entry, "Website", that opens this URI. */
  outlineUri?: string;
  attachments?: readonly FixtureAttachment[];
}

/** The code of a character in the CID font: its own code moved up, so that no reader can guess it. */
const cidCode = (c: string) => c.charCodeAt(0) + 0x100;
const hex4 = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');

/**
 * The CID font's ToUnicode CMap for `chars`. Its first bfchar entry maps a code to a glyph name
 * (/space), a form CMaps allow for character names: poppler skips the entry it does not take
 * ("Illegal entry in bfchar block") and reads the rest; MuPDF's parser stops at it ("expected
 * string") and drops the whole map, so MuPDF extracts every character as U+FFFD.
 */
export function cidToUnicodeCMap(chars: Iterable<string>): string {
  const entries = [...new Set(chars)].map((c) => `<${hex4(cidCode(c))}> <${hex4(c.charCodeAt(0))}>`);
  return ['/CIDInit /ProcSet findresource begin 12 dict begin begincmap',
    '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def /CMapName /Fixture-UCS def /CMapType 2 def',
    '1 begincodespacerange <0000> <FFFF> endcodespacerange',
    `${entries.length + 1} beginbfchar`, '<0001> /space', ...entries, 'endbfchar',
    'endcmap CMapName currentdict /CMap defineresource pop end end'].join('\n');
}

function pdfTextString(text: string): string {
  if (/^[\x20-\x7e]*$/.test(text)) return `(${escapePdfText(text)})`;
  const utf16 = Buffer.from(`\ufeff${text}`, 'utf16le').swap16();
  return `<${utf16.toString('hex')}>`;
}

function escapePdfText(text: string): string {
  return text.replace(/[\\()]/g, (c) => `\\${c}`);
}

export function makePdf(pages: readonly FixturePage[], options: FixtureOptions = {}): Buffer {
  const objects: (string | Buffer)[] = [];
  const add = (body: string | Buffer): number => { objects.push(body); return objects.length; };
  const catalog = add('');
  const pagesObj = add('');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const cidChars = pages.flatMap((p) => [...(p.cidText ?? '')]).filter((c) => c !== '\n');
  let cidFont = 0;
  if (cidChars.length > 0) {
    const cmap = cidToUnicodeCMap(cidChars);
    const toUnicode = add(`<< /Length ${cmap.length} >>\nstream\n${cmap}\nendstream`);
    const descriptor = add('<< /Type /FontDescriptor /FontName /FixtureCID /Flags 32 /FontBBox [0 -210 1000 930] /ItalicAngle 0 /Ascent 930 /Descent -210 /CapHeight 720 /StemV 80 >>');
    const widths = `[${[...new Set(cidChars)].map((c) => `${cidCode(c)} [600]`).join(' ')}]`;
    const descendant = add(`<< /Type /Font /Subtype /CIDFontType2 /BaseFont /FixtureCID /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor ${descriptor} 0 R /DW 600 /W ${widths} >>`);
    cidFont = add(`<< /Type /Font /Subtype /Type0 /BaseFont /FixtureCID /Encoding /Identity-H /DescendantFonts [${descendant} 0 R] /ToUnicode ${toUnicode} 0 R >>`);
  }
  const pageRefs: number[] = [];
  const specs = (options.attachments ?? []).map((file) => {
    const data = deflateSync(file.bytes);
    const stream = add(Buffer.concat([
      Buffer.from(`<< /Type /EmbeddedFile /Subtype /${file.mediaType.replace('/', '#2F')} /Params << /Size ${file.bytes.byteLength} >> /Filter /FlateDecode /Length ${data.byteLength} >>\nstream\n`),
      data, Buffer.from('\nendstream'),
    ]));
    return { file, spec: add(`<< /Type /Filespec /F ${pdfTextString(file.name)} /UF ${pdfTextString(file.name)} /EF << /F ${stream} 0 R >> >>`) };
  });
  const attachmentAnnots = specs.filter((s) => s.file.annotation).map((s, i) =>
    `<< /Type /Annot /Subtype /FileAttachment /Rect [${500 - i * 30} 780 ${520 - i * 30} 800] /FS ${s.spec} 0 R /Name /Paperclip /Contents (Attached file) >>`);
  for (const page of pages) {
    const [w, h] = page.size ?? [595, 842];
    let content = '';
    const xobjects: string[] = [];
    if (page.jpeg) {
      const image = add(Buffer.concat([
        Buffer.from(`<< /Type /XObject /Subtype /Image /Width ${page.jpeg.width} /Height ${page.jpeg.height} /ColorSpace ${page.jpeg.color ? '/DeviceRGB' : '/DeviceGray'} /BitsPerComponent 8 /Filter /DCTDecode /Length ${page.jpeg.bytes.byteLength} >>\nstream\n`),
        Buffer.from(page.jpeg.bytes), Buffer.from('\nendstream'),
      ]));
      xobjects.push(`/Im1 ${image} 0 R`);
      content += `q ${w} 0 0 ${h} 0 0 cm /Im1 Do Q\n`;
    }
    if (page.rgb) {
      const data = deflateSync(page.rgb.pixels);
      const image = add(Buffer.concat([
        Buffer.from(`<< /Type /XObject /Subtype /Image /Width ${page.rgb.width} /Height ${page.rgb.height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode /Length ${data.byteLength} >>\nstream\n`),
        data, Buffer.from('\nendstream'),
      ]));
      xobjects.push(`/Im2 ${image} 0 R`);
      content += `q ${w / 2} 0 0 ${h / 2} 0 0 cm /Im2 Do Q\n`;
    }
    if (page.text) {
      const lines = page.text.split('\n');
      content += `BT /F1 14 Tf 16 TL 56 ${h - 72} Td\n${lines.map((l) => `(${escapePdfText(l)}) Tj T*`).join('\n')}\nET\n`;
    }
    if (page.cidText) {
      const top = h - 72 - 16 * ((page.text?.split('\n').length ?? 0) + 1);
      const lines = page.cidText.split('\n').map((l) => `<${[...l].map((c) => hex4(cidCode(c))).join('')}> Tj T*`);
      content += `BT /F2 12 Tf 16 TL 56 ${top} Td\n${lines.join('\n')}\nET\n`;
    }
    const stream = add(`<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`);
    const annotList = [
      ...(options.link ? [`<< /Type /Annot /Subtype /Link /Border [0 0 0] /Rect [56 ${h - 90} 300 ${h - 56}] /A << /S /URI /URI (https://example.com/) >> >>`] : []),
      ...(pageRefs.length === 0 ? attachmentAnnots : []),
    ];
    const annots = annotList.length > 0 ? ` /Annots [${annotList.join(' ')}]` : '';
    const resources = `<< /Font << /F1 ${font} 0 R${cidFont ? ` /F2 ${cidFont} 0 R` : ''} >>${xobjects.length ? ` /XObject << ${xobjects.join(' ')} >>` : ''} >>`;
    pageRefs.push(add(`<< /Type /Page /Parent ${pagesObj} 0 R /MediaBox [0 0 ${w} ${h}] /Resources ${resources} /Contents ${stream} 0 R${page.rotate ? ` /Rotate ${page.rotate}` : ''}${page.userUnit ? ` /UserUnit ${page.userUnit}` : ''}${annots} >>`));
  }
  let outlineEntry = '';
  if (options.outline && pageRefs.length > 0) {
    const outlines = add('');
    const items = [...pageRefs, ...(options.outlineUri ? [0] : [])].map((ref, i) => add(`__ITEM_${i}__`));
    items.forEach((item, i) => {
      const links = [
        `/Parent ${outlines} 0 R`,
        i > 0 ? `/Prev ${items[i - 1]} 0 R` : '',
        i < items.length - 1 ? `/Next ${items[i + 1]} 0 R` : '',
      ].filter(Boolean).join(' ');
      objects[item - 1] = i < pageRefs.length
        ? `<< /Title ${pdfTextString(options.outlineTitles?.[i] ?? `Chapter ${i + 1}`)} ${links} /Dest [${pageRefs[i]} 0 R /XYZ 0 ${(pages[i].size ?? [595, 842])[1]} 0] >>`
        : `<< /Title (Website) ${links} /A << /S /URI /URI (${escapePdfText(options.outlineUri!)}) >> >>`;
    });
    objects[outlines - 1] = `<< /Type /Outlines /First ${items[0]} 0 R /Last ${items[items.length - 1]} 0 R /Count ${items.length} >>`;
    outlineEntry = ` /Outlines ${outlines} 0 R /PageMode /UseOutlines`;
  }
  const sorted = [...specs].sort((a, b) => (a.file.name < b.file.name ? -1 : 1));
  const names = specs.length > 0 ? ` /Names << /EmbeddedFiles << /Names [${sorted.map((s) => `${pdfTextString(s.file.name)} ${s.spec} 0 R`).join(' ')}] >> >>` : '';
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pagesObj} 0 R${outlineEntry}${names} >>`;
  objects[pagesObj - 1] = `<< /Type /Pages /Kids [${pageRefs.map((r) => `${r} 0 R`).join(' ')}] /Count ${pageRefs.length} >>`;

  const chunks: Buffer[] = [Buffer.from('%PDF-1.5\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = chunks[0].length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(offset);
    const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'), Buffer.from('\nendobj\n')]);
    chunks.push(chunk);
    offset += chunk.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`, ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  chunks.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R >>\nstartxref\n${offset}\n%%EOF\n`));
  return Buffer.concat(chunks);
}

export function textPages(count: number, prefix = 'Page'): FixturePage[] {
  return Array.from({ length: count }, (_, i) => ({ text: `${prefix} ${i + 1} marker${prefix.toLowerCase()}${i + 1}\nThe quick brown fox jumps over the lazy dog.` }));
}

/** A grey, noisy, slightly rotated JPEG of a page of text: what a phone photo of a letter looks like to a PDF. */
export async function photographedPage(width = 900, height = 1200): Promise<{ bytes: Uint8Array; width: number; height: number }> {
  const lines = Array.from({ length: 24 }, (_, i) => `<text x="70" y="${110 + i * 40}" font-family="DejaVu Sans" font-size="26" fill="#222">Line ${i + 1}: the invoice total is due within thirty days.</text>`).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#d8d4cc"/>${lines}</svg>`;
  const page = await sharp(Buffer.from(svg)).rotate(1.5, { background: '#8a8578' }).resize(width, height, { fit: 'fill' }).blur(0.8).flatten({ background: '#8a8578' }).toColourspace('b-w').extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  // Sensor noise from a fixed-seed generator, so the fixture is the same on every run.
  let seed = 12345;
  const data = page.data;
  for (let i = 0; i < data.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    data[i] = Math.max(0, Math.min(255, data[i] + ((seed >> 16) % 25) - 12));
  }
  const jpeg = await sharp(data, { raw: { width: page.info.width, height: page.info.height, channels: 1 } }).toColourspace('b-w').jpeg({ quality: 70 }).toBuffer();
  return { bytes: new Uint8Array(jpeg), width: page.info.width, height: page.info.height };
}

/** A one-page PDF with one filled text field (name = Alice) and no appearance for it; NeedAppearances as asked. */
export function formPdf(needAppearances: boolean): Buffer {
  const objects = [
    `<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R] ${needAppearances ? '/NeedAppearances true ' : ''}/DA (/Helv 12 Tf 0 g) /DR << /Font << /Helv 5 0 R >> >> >> >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Annots [4 0 R] /Resources << >> >>',
    '<< /Type /Annot /Subtype /Widget /FT /Tx /T (name) /V (Alice) /Rect [20 100 200 130] /P 3 0 R /DA (/Helv 12 Tf 0 g) /F 4 >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ];
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** The fields of acroFormPdf, as /v1/pdf/form-fields names them. */
export const ACRO_FORM_FIELDS = ['name', 'agree', 'color', 'country', 'signature', 'submit', 'notes'] as const;

/**
 * A two-page AcroForm. Page 1 is rotated 90° with a CropBox inside its MediaBox and holds a text
 * field (name, max 40 characters), a checkbox (agree, on state Yes), a radio group of two
 * buttons (color: red, blue), a combo box (country: France, Germany, Japan), an unsigned
 * signature field and a push button; page 2 holds a filled multiline text field (notes = "first
 * note") without an appearance and a FreeText annotation ("Reviewed"). `xfa` adds an XFA packet;
 * `needAppearances` asks viewers to draw the values.
 */
export function acroFormPdf(options: { xfa?: boolean; needAppearances?: boolean } = {}): Buffer {
  const stream = (content: string, dict = '') => `<< ${dict}/Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`;
  const widget = '/Type /Annot /Subtype /Widget /F 4 /P 3 0 R';
  const objects = [
    `<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R 5 0 R 6 0 R 9 0 R 10 0 R 11 0 R 16 0 R] /DA (/Helv 10 Tf 0 g) /DR << /Font << /Helv 12 0 R >> >>${options.needAppearances ? ' /NeedAppearances true' : ''}${options.xfa ? ' /XFA 18 0 R' : ''} >> >>`,
    '<< /Type /Pages /Kids [3 0 R 15 0 R] /Count 2 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /CropBox [10 20 602 782] /Rotate 90 /Annots [4 0 R 5 0 R 7 0 R 8 0 R 9 0 R 10 0 R 11 0 R] /Contents 13 0 R /Resources << /Font << /F1 12 0 R >> >> >>',
    `<< ${widget} /FT /Tx /T (name) /MaxLen 40 /Rect [100 600 300 620] /DA (/Helv 10 Tf 0 g) >>`,
    `<< ${widget} /FT /Btn /T (agree) /V /Off /AS /Off /Rect [100 560 114 574] /MK << /CA (4) >> /DA (/ZaDb 10 Tf 0 g) /AP << /N << /Yes 14 0 R /Off 17 0 R >> >> >>`,
    '<< /FT /Btn /Ff 49152 /T (color) /V /Off /Kids [7 0 R 8 0 R] >>',
    `<< ${widget} /Parent 6 0 R /Rect [100 520 114 534] /AS /Off /AP << /N << /red 14 0 R /Off 17 0 R >> >> >>`,
    `<< ${widget} /Parent 6 0 R /Rect [140 520 154 534] /AS /Off /AP << /N << /blue 14 0 R /Off 17 0 R >> >> >>`,
    `<< ${widget} /FT /Ch /Ff 131072 /T (country) /Opt [(France) (Germany) (Japan)] /Rect [100 480 300 500] /DA (/Helv 10 Tf 0 g) >>`,
    `<< ${widget} /FT /Sig /T (signature) /Rect [100 400 300 450] >>`,
    `<< ${widget} /FT /Btn /Ff 65536 /T (submit) /Rect [100 350 200 370] /MK << /CA (Send) >> >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    stream('BT /F1 12 Tf 100 700 Td (Application form) Tj ET'),
    stream('0 0 0 rg 2 2 10 10 re f', '/Type /XObject /Subtype /Form /BBox [0 0 14 14] '),
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Annots [16 0 R 19 0 R] /Resources << >> >>',
    '<< /Type /Annot /Subtype /Widget /F 4 /P 15 0 R /FT /Tx /T (notes) /Ff 4096 /V (first note) /Rect [50 700 300 760] /DA (/Helv 10 Tf 0 g) >>',
    stream('', '/Type /XObject /Subtype /Form /BBox [0 0 14 14] '),
    stream('<xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/"><template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"/></xdp:xdp>'),
    '<< /Type /Annot /Subtype /FreeText /F 4 /P 15 0 R /Rect [50 600 250 630] /DA (/Helv 12 Tf 0 g) /Contents (Reviewed) /AP << /N 20 0 R >> >>',
    stream('BT /Helv 12 Tf 5 10 Td (Reviewed) Tj ET', '/Type /XObject /Subtype /Form /BBox [0 0 200 30] /Resources << /Font << /Helv 12 0 R >> >> '),
  ];
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** Five pages of text with an outline and a link. */
export const outlinedTextPdf = (): Buffer => makePdf(textPages(5), { outline: true, link: true });

/** Two pages of text and a photographed page with a caption, with an outline and a link. */
export const mixedPagesPdf = (photo: { bytes: Uint8Array; width: number; height: number }): Buffer =>
  makePdf([...textPages(2, 'Mixed'), { jpeg: photo, text: 'Caption under a photo with enough words to count as text' }], { outline: true, link: true });

/** A file of the shared sample corpus (py-pdf/sample-files), beside the project in ../shared. */
export const sampleFile = (relative: string): Promise<Uint8Array> =>
  readFile(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../shared/corpus/sample-files', relative)).then((b) => new Uint8Array(b));
