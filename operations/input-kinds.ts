// What each kind of input is called and shown as, wherever the service speaks of it: the refusal
// of a request without a file, the file field's description, the MCP file argument's media types,
// the OpenAPI tag, the discovery example's file name and the MCP tool icon.
import { IMAGE_FORMAT_NAMES, IMAGE_MEDIA_TYPES, PAGE_IMAGE_FORMAT_NAMES, PAGE_IMAGE_MEDIA_TYPES } from '../checks/image.js';
import { OFFICE_MEDIA_TYPES } from '../checks/office.js';
import type { InputKind } from './define.js';

export interface InputKindText {
  /** The file as a sentence names it: "a PDF". */
  file: string;
  /** Media types the MCP file argument may declare. */
  mediaTypes: readonly string[];
  /** The OpenAPI tag of the operations that take it. */
  tag: 'image' | 'pdf' | 'office';
  /** A file name for the discovery examples. */
  exampleFile: string;
  /** The MCP tool icon's glyph. */
  glyph: string;
}

export const INPUT_KINDS: Record<InputKind, InputKindText> = {
  image: { file: `a ${IMAGE_FORMAT_NAMES} image`, mediaTypes: Object.values(IMAGE_MEDIA_TYPES), tag: 'image', exampleFile: 'photo.png', glyph: 'IMG' },
  'page-image': {
    file: `a ${PAGE_IMAGE_FORMAT_NAMES} image`, mediaTypes: Object.values(PAGE_IMAGE_MEDIA_TYPES), tag: 'pdf', exampleFile: 'scan.jpg', glyph: 'IMG',
  },
  pdf: { file: 'a PDF', mediaTypes: ['application/pdf'], tag: 'pdf', exampleFile: 'document.pdf', glyph: 'PDF' },
  markdown: { file: 'UTF-8 Markdown', mediaTypes: ['text/markdown', 'text/plain'], tag: 'pdf', exampleFile: 'notes.md', glyph: 'MD' },
  web: { file: 'an HTML document, or a ZIP of a page (index.html at its root with its stylesheets, scripts, images and fonts)', mediaTypes: ['text/html', 'application/zip'], tag: 'pdf', exampleFile: 'page.html', glyph: 'WEB' },
  office: { file: 'an Office document (DOCX, XLSX, PPTX, ODT, ODS, ODP, RTF, DOC, XLS or PPT)', mediaTypes: OFFICE_MEDIA_TYPES, tag: 'office', exampleFile: 'report.docx', glyph: 'DOC' },
};

/** The OpenAPI tags, one per area. */
export const INPUT_TAGS = [
  { name: 'image', description: 'Image operations (JPEG, PNG, WebP, AVIF in): paid per call.' },
  { name: 'pdf', description: 'PDF operations: paid per call or per page.' },
  { name: 'office', description: 'Office documents (Word, Excel, PowerPoint, OpenDocument, RTF) to PDF: paid per call.' },
] as const;
