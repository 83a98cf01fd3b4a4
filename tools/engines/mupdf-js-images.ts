// Images to PDF pages in the MuPDF.js child (./mupdf-js-process.ts). MuPDF keeps a JPEG's own
// bytes as the image stream (DCTDecode, with the Decode array an Adobe CMYK JPEG needs), so a
// JPEG is never re-encoded; PDF readers ignore EXIF, so each image is drawn through the matrix
// that stands it upright, and its page is laid out at its upright size.
import { readFileSync } from 'node:fs';
import * as mupdf from 'mupdf';
import { MAX_PAGE_POINTS, type ImagePageSize, type ImagesRequest } from './mupdf-js.js';
import { concat, orientationMatrix, pdfNumber, scale, translate, type Matrix } from './stamp-text.js';

/** Paper sizes in points (72 to the inch): A4 is 210 x 297 mm, Letter 8.5 x 11 inches. */
const PAPER_POINTS: Record<Exclude<ImagePageSize, 'fit'>, [number, number]> = {
  a4: [(210 * 72) / 25.4, (297 * 72) / 25.4],
  letter: [612, 792],
};

const pointsOfMm = (mm: number): number => (mm * 72) / 25.4;

/** Where the image goes: the page's size and the image's box on it, in points (y up). */
interface ImageLayout {
  page: [number, number];
  box: { x: number; y: number; width: number; height: number };
}

/**
 * `fit`: the page is the image's size at its resolution plus the margins; a paper size: the image
 * is scaled (up or down) to fit inside the margins, aspect kept, and centred. The page is portrait.
 */
function layOut(upright: [number, number], dpi: number, pageSize: ImagePageSize, marginMm: number): ImageLayout {
  const margin = pointsOfMm(marginMm);
  const natural: [number, number] = [(upright[0] * 72) / dpi, (upright[1] * 72) / dpi];
  if (pageSize === 'fit') {
    const shrink = Math.min(1, (MAX_PAGE_POINTS - 2 * margin) / natural[0], (MAX_PAGE_POINTS - 2 * margin) / natural[1]);
    const [width, height] = [natural[0] * shrink, natural[1] * shrink];
    return { page: [width + 2 * margin, height + 2 * margin], box: { x: margin, y: margin, width, height } };
  }
  const page = PAPER_POINTS[pageSize];
  const factor = Math.min((page[0] - 2 * margin) / natural[0], (page[1] - 2 * margin) / natural[1]);
  const [width, height] = [natural[0] * factor, natural[1] * factor];
  return { page, box: { x: (page[0] - width) / 2, y: (page[1] - height) / 2, width, height } };
}

const matrixText = (m: Matrix): string => m.map(pdfNumber).join(' ');

/** Adds one page per image to the new document `doc`, in order. */
export function imagesDocument(doc: mupdf.PDFDocument, request: ImagesRequest): void {
  for (const { file, orientation, dpi } of request.images) {
    const image = new mupdf.Image(readFileSync(file));
    // The stored size; orientations 5 to 8 turn it a quarter.
    const upright: [number, number] = orientation >= 5 ? [image.getHeight(), image.getWidth()] : [image.getWidth(), image.getHeight()];
    const { page, box } = layOut(upright, dpi, request.pageSize, request.marginMm);
    const resources = doc.newDictionary();
    const xobjects = doc.newDictionary();
    xobjects.put('Image', doc.addImage(image));
    resources.put('XObject', xobjects);
    const drawn = concat(concat(orientationMatrix(orientation), scale(box.width, box.height)), translate(box.x, box.y));
    doc.insertPage(-1, doc.addPage([0, 0, page[0], page[1]], 0, resources, `q ${matrixText(drawn)} cm /Image Do Q\n`));
    image.destroy();
  }
}
