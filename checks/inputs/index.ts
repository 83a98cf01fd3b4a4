// One inspector per input kind, chosen by the operation's declared kind: each refuses a file not
// of its kind, or one its operations cannot work on, before payment, and prepares the rest for
// the plan and the job. The kinds without pages or files on disk need only their check.
import type { InputKind } from '../../operations/define.js';
import { inspectImage, inspectPageImage } from '../image.js';
import { inspectMarkdown } from '../markdown.js';
import { inspectOffice } from '../office.js';
import { inspectWebPage } from '../web-page.js';
import type { InspectedAs, Inspector } from './inspector.js';
import { inspectPdfUpload } from './pdf.js';

export type { InspectContext, InspectedAs, Inspector, PreparedFile, UploadWriter } from './inspector.js';

export const INSPECTORS: { [Kind in InputKind]: Inspector<InspectedAs<Kind>> } = {
  image: async (bytes) => ({ inspected: { kind: 'image', bytes, header: await inspectImage(bytes) }, job: { bytes }, pages: 0 }),
  // Each page image is one page of the result, and priced as one.
  'page-image': async (bytes) => ({
    inspected: { kind: 'page-image', bytes, header: await inspectPageImage(bytes) }, job: { bytes }, pages: 1,
  }),
  pdf: inspectPdfUpload,
  markdown: async (bytes, { timeoutMs }) => {
    inspectMarkdown(bytes, timeoutMs);
    return { inspected: { kind: 'markdown', bytes }, job: { bytes }, pages: 0 };
  },
  web: async (bytes) => ({ inspected: { kind: 'web', bytes, form: await inspectWebPage(bytes) }, job: { bytes }, pages: 0 }),
  office: async (bytes, { declared }) => ({
    inspected: { kind: 'office', bytes, format: await inspectOffice(bytes, declared) }, job: { bytes }, pages: 0,
  }),
};
