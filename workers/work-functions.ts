// Which work function does each operation's job: the worker side of the operation table. The
// type ties each function to the parameters its operation's plan returns.
import type { WorkFunction } from '../core/job.js';
import type { PlanOf, OperationId } from '../operations/index.js';

type WorkTable = { [Id in OperationId]: () => Promise<WorkFunction<PlanOf<Id>>> };

export const workFunctions: WorkTable = {
  'image.compress': () => import('./image/transform.js').then((m) => m.transformImage),
  'image.resize': () => import('./image/transform.js').then((m) => m.transformImage),
  'image.crop': () => import('./image/transform.js').then((m) => m.transformImage),
  'image.rotate': () => import('./image/transform.js').then((m) => m.transformImage),
  'image.flip': () => import('./image/transform.js').then((m) => m.transformImage),
  'image.ocr': () => import('./model/ocr.js').then((m) => m.imageOcr),
  'pdf.compress': () => import('./pdf/compress.js').then((m) => m.compress),
  'pdf.merge': () => import('./pdf/assemble.js').then((m) => m.merge),
  'pdf.merge-compress': () => import('./pdf/compress.js').then((m) => m.mergeCompress),
  'pdf.pages': () => import('./pdf/assemble.js').then((m) => m.pages),
  'pdf.split': () => import('./pdf/assemble.js').then((m) => m.split),
  'pdf.protect': () => import('./pdf/security.js').then((m) => m.protect),
  'pdf.unlock': () => import('./pdf/security.js').then((m) => m.unlock),
  'pdf.redact': () => import('./pdf/mupdf.js').then((m) => m.redact),
  'pdf.sanitize': () => import('./pdf/mupdf.js').then((m) => m.sanitize),
  'pdf.render': () => import('./pdf/render.js').then((m) => m.render),
  'pdf.images': () => import('./pdf/images.js').then((m) => m.images),
  'pdf.extract': () => import('./pdf/extract.js').then((m) => m.extract),
  'pdf.markdown': () => import('./layout/index.js').then((m) => m.markdown),
  'pdf.blocks': () => import('./layout/index.js').then((m) => m.blocks),
  'pdf.from-markdown': () => import('./pdf/from-markdown.js').then((m) => m.fromMarkdown),
  'pdf.ocr': () => import('./model/ocr.js').then((m) => m.pdfOcr),
  'pdf.searchable': () => import('./pdf/searchable.js').then((m) => m.searchable),
  // TABLES_ENGINE=local: the layout engine of /v1/pdf/markdown reads them on this server; otherwise the model.
  'pdf.tables': async () => {
    const [model, layout] = await Promise.all([import('./model/tables.js'), import('./layout/tables.js')]);
    return (input) => (input.settings.tablesEngine === 'local' ? layout.localTables(input) : model.pdfTables(input));
  },
  'pdf.structured': () => import('./model/structured.js').then((m) => m.pdfStructured),
  'pdf.from-html': () => import('./pdf/from-html.js').then((m) => m.fromHtml),
  'pdf.from-url': () => import('./pdf/from-url.js').then((m) => m.fromUrl),
  'pdf.stamp': () => import('./pdf/mupdf.js').then((m) => m.stamp),
  'pdf.form-fields': () => import('./pdf/mupdf.js').then((m) => m.formFields),
  'pdf.form-fill': () => import('./pdf/mupdf.js').then((m) => m.formFill),
  'pdf.flatten': () => import('./pdf/mupdf.js').then((m) => m.flatten),
  'pdf.metadata': () => import('./pdf/mupdf.js').then((m) => m.metadata),
  'pdf.set-metadata': () => import('./pdf/mupdf.js').then((m) => m.setMetadata),
  'pdf.from-images': () => import('./pdf/from-images.js').then((m) => m.fromImages),
  'office.pdf': () => import('./office/pdf.js').then((m) => m.officeToPdf),
};

export function workFunctionFor(operation: string): () => Promise<WorkFunction<never>> {
  const load = (workFunctions as Record<string, () => Promise<WorkFunction<never>>>)[operation];
  if (!load) throw new Error(`no work function for ${operation}`);
  return load;
}
