// Stamps in the MuPDF.js child (./mupdf-js-process.ts): text in the standard Helvetica, or an
// image XObject, written into the content of each chosen page, over it or under it, with an
// ExtGState for the opacity. The placement is computed on the page as displayed (its CropBox
// turned by /Rotate), through MuPDF's page transform, so "top-right" is where a reader shows it.
import { readFileSync } from 'node:fs';
import * as mupdf from 'mupdf';
import type { StampRequest } from './mupdf-js.js';
import {
  concat, HELVETICA_ASCENT, HELVETICA_DESCENT, invert, orientationMatrix, pageText, pdfNumber, placement, rgbOf,
  scale, STAMP_MARGIN_PT, translate, winAnsiHex, type Matrix, type StampBox,
} from './stamp-text.js';

/** A resource name the dictionary does not use yet: PaydocStamp, PaydocStamp2, … */
function freeName(dict: mupdf.PDFObject, base: string): string {
  let name = base;
  for (let i = 2; !dict.get(name).isNull(); i++) name = `${base}${i}`;
  return name;
}

/** The page's own dictionary of `kind` in its resources (Font, XObject, ExtGState), made when missing. */
function resourceDictionary(doc: mupdf.PDFDocument, page: mupdf.PDFObject, kind: string): mupdf.PDFObject {
  let resources = page.getInheritable('Resources');
  if (!resources.isDictionary()) {
    resources = doc.newDictionary();
    page.put('Resources', resources);
  }
  let dict = resources.get(kind);
  if (!dict.isDictionary()) {
    dict = doc.newDictionary();
    resources.put(kind, dict);
  }
  return dict;
}

/** Adds `object` to the page's resources of `kind` under a free name, and returns the name. */
function addResource(doc: mupdf.PDFDocument, page: mupdf.PDFObject, kind: string, object: mupdf.PDFObject): string {
  const dict = resourceDictionary(doc, page, kind);
  const name = freeName(dict, 'PaydocStamp');
  dict.put(name, object);
  return name;
}

const matrixText = (m: Matrix): string => m.map(pdfNumber).join(' ');

interface Shared {
  font?: mupdf.PDFObject;
  helvetica?: mupdf.Font;
  image?: { ref: mupdf.PDFObject; width: number; height: number };
  state: mupdf.PDFObject;
  /** The `q` that opens a page's own content when the stamp goes over it. */
  save: mupdf.PDFObject;
}

/** The stamp's box in its own space: the text's advance and Helvetica's ascent and descent, or the image at its size. */
function textBox(helvetica: mupdf.Font, text: string, size: number): StampBox {
  let advance = 0;
  for (const char of text) advance += helvetica.advanceGlyph(helvetica.encodeCharacter(char.codePointAt(0)!));
  return { x0: 0, y0: HELVETICA_DESCENT * size, x1: advance * size, y1: HELVETICA_ASCENT * size };
}

/**
 * The image's size on the page: `request.image.width` points wide, or its own size at its
 * resolution (96 dpi when it gives none), made smaller to fit inside the margins of the page.
 */
function imageSize(request: StampRequest, image: NonNullable<Shared['image']>, displayed: { width: number; height: number }): [number, number] {
  const aspect = image.height / image.width;
  let width = request.image!.width ?? image.width;
  let height = width * aspect;
  const room = [displayed.width - 2 * STAMP_MARGIN_PT, displayed.height - 2 * STAMP_MARGIN_PT];
  const fit = Math.min(1, room[0] / width, room[1] / height);
  if (request.image!.width === undefined && fit > 0) { width *= fit; height *= fit; }
  return [width, height];
}

/** The content that draws the stamp on one page, in the page's user space. */
function stampContent(doc: mupdf.PDFDocument, index: number, total: number, request: StampRequest, shared: Shared): string {
  const page = doc.loadPage(index);
  const object = page.getObject();
  try {
    const bounds = page.getBounds();
    const displayed = { width: bounds[2] - bounds[0], height: bounds[3] - bounds[1] };
    // Stamp space → displayed page (y down from its top-left corner) → the page's user space.
    const toUser = concat(translate(bounds[0], bounds[1]), invert(page.getTransform() as Matrix));
    const stateName = addResource(doc, object, 'ExtGState', shared.state);
    if (request.text !== undefined) {
      const text = pageText(request.text, index, total, request.numbering);
      const box = textBox(shared.helvetica!, text, request.fontSize);
      const matrix = concat(placement(box, displayed, request.position, request.rotation), toUser);
      const fontName = addResource(doc, object, 'Font', shared.font!);
      const [r, g, b] = rgbOf(request.color);
      return `q /${stateName} gs ${matrixText(matrix)} cm BT /${fontName} ${pdfNumber(request.fontSize)} Tf `
        + `${pdfNumber(r)} ${pdfNumber(g)} ${pdfNumber(b)} rg 0 0 Td ${winAnsiHex(text)} Tj ET Q\n`;
    }
    const image = shared.image!;
    const [width, height] = imageSize(request, image, displayed);
    const matrix = concat(placement({ x0: 0, y0: 0, x1: width, y1: height }, displayed, request.position, request.rotation), toUser);
    const imageName = addResource(doc, object, 'XObject', image.ref);
    const drawn = concat(orientationMatrix(request.image!.orientation), scale(width, height));
    return `q /${stateName} gs ${matrixText(matrix)} cm ${matrixText(drawn)} cm /${imageName} Do Q\n`;
  } finally {
    page.destroy();
  }
}

/** The page's content streams as a list (a single stream, an array of them, or none). */
function contentsOf(doc: mupdf.PDFDocument, page: mupdf.PDFObject): mupdf.PDFObject[] {
  const contents = page.get('Contents');
  if (contents.isArray()) return Array.from({ length: contents.length }, (_, i) => contents.get(i));
  return contents.isNull() ? [] : [contents];
}

/** Stamps the chosen pages of `doc` in place. */
export function stampDocument(doc: mupdf.PDFDocument, request: StampRequest): void {
  const state = doc.newDictionary();
  state.put('Type', doc.newName('ExtGState'));
  state.put('ca', doc.newReal(request.opacity));
  state.put('CA', doc.newReal(request.opacity));
  const shared: Shared = { state: doc.addObject(state), save: doc.addStream('q\n', doc.newDictionary()) };
  if (request.text !== undefined) {
    const font = doc.newDictionary();
    font.put('Type', doc.newName('Font'));
    font.put('Subtype', doc.newName('Type1'));
    font.put('BaseFont', doc.newName('Helvetica'));
    font.put('Encoding', doc.newName('WinAnsiEncoding'));
    shared.font = doc.addObject(font);
    // MuPDF's Helvetica is Nimbus Sans, which has Helvetica's widths.
    shared.helvetica = new mupdf.Font('Helvetica');
  } else {
    const image = new mupdf.Image(readFileSync(request.image!.file));
    // The header's size is of the upright image; the stored one is turned for orientations 5 to 8.
    const upright = request.image!.orientation >= 5 ? [image.getHeight(), image.getWidth()] : [image.getWidth(), image.getHeight()];
    // MuPDF's own idea of the resolution of a PNG without one is not 96 dpi: the work function reads the file's.
    const { dpi } = request.image!;
    shared.image = { ref: doc.addImage(image), width: (upright[0] * 72) / dpi, height: (upright[1] * 72) / dpi };
  }
  const total = doc.countPages();
  const chosen = request.pages ?? Array.from({ length: total }, (_, i) => i + 1);
  for (const number of chosen) {
    const index = number - 1;
    const content = stampContent(doc, index, total, request, shared);
    const page = doc.findPage(index);
    const own = contentsOf(doc, page);
    const stamp = request.layer === 'under' || own.length === 0 ? content : `Q\n${content}`;
    const stream = doc.addStream(stamp, doc.newDictionary());
    const list = doc.newArray();
    // Over: the page's own content in q … Q, so that no state it leaves changes the stamp. Under: the stamp first.
    const ordered = request.layer === 'under' ? [stream, ...own] : own.length === 0 ? [stream] : [shared.save, ...own, stream];
    for (const part of ordered) list.push(part);
    page.put('Contents', list);
  }
}
