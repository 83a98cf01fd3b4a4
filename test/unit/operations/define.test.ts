// What the operation declarations give the rest of the code: plan fields typed from the declared
// fields (checked by the compiler, and here against what validation returns), and the content
// route of each operation resolved against the engine and provider settings.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { operations, operationById } from '../../../operations/index.js';
import type { FieldValuesOf } from '../../../operations/define.js';
import { imageResize } from '../../../operations/image/resize.js';
import { pdfPages } from '../../../operations/pdf/pages.js';
import { validateFields } from '../../../server/derive/fields.js';
import { localEngines, requireProvider, resolveContent, type ContentSettings } from '../../../server/content-route.js';
import { ServiceError } from '../../../core/errors.js';
import type { ImageFormat } from '../../../checks/image.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

// Compile-time: these lines stop compiling when the field types drift from the declarations.
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const resizeFields: Same<FieldValuesOf<typeof imageResize.fields>, {
  width: number | undefined; height: number | undefined; fit: 'contain' | 'cover' | 'fill';
  format: ImageFormat | undefined; quality: number; colors: number;
}> = true;
const pagesFields: Same<FieldValuesOf<typeof pdfPages.fields>, { pages: string | undefined; rotate: 90 | 180 | 270 | undefined }> = true;

describe('field values', () => {
  it('are what the types say: defaults applied, integers as numbers, absent optional fields undefined', () => {
    expect([resizeFields, pagesFields]).to.equal([true, true]);
    expect(validateFields(imageResize, { width: '48' })).to.equal({ width: 48, height: undefined, fit: 'contain', format: undefined, quality: 90, colors: 256 });
    expect(validateFields(pdfPages, { rotate: 90 })).to.equal({ pages: undefined, rotate: 90 });
  });

  it('hold a value for every field declared required or with a default, in every operation', () => {
    for (const op of operations) {
      for (const field of op.fields) {
        if (field.default === undefined) continue;
        // Sending the other fields' required values is the caller's part; only the defaults are looked at.
        const raw = Object.fromEntries(op.fields.filter((f) => f.required).map((f) => [f.name, f.type === 'integer' ? (f.minimum ?? 1) : f.type === 'string' ? (f.example ?? 'x') : true]));
        let values: Record<string, unknown>;
        try {
          values = validateFields(op, raw);
        } catch (err) {
          if (err instanceof ServiceError) continue; // a cross-field check wants more than the required fields
          throw err;
        }
        expect(values[field.name], `${op.id} ${field.name}`).to.equal(field.default);
      }
    }
  });
});

const NO_PROVIDER: ContentSettings = { ocrEngine: 'model', ocrLanguages: 'eng+deu', markdownOcr: 'off', tablesEngine: 'model', modelBaseUrl: '', modelApiKey: '' };

describe('content routes', () => {
  const routes = (config: ContentSettings) => Object.fromEntries(operations
    .filter((op) => 'provider' in op.content || op.id === 'pdf.markdown')
    .map((op) => {
      const { sendsContent, available, localEngine, scans } = resolveContent(config, op);
      return [op.id, { sendsContent, available, local: localEngine?.named(config).engine ?? scans?.engine?.named(config).engine }];
    }));

  it('without a provider, the model operations are unavailable and answer 503 before payment', () => {
    expect(routes(NO_PROVIDER)).to.equal({
      'image.ocr': { sendsContent: true, available: false, local: undefined },
      'pdf.markdown': { sendsContent: false, available: true, local: undefined },
      'pdf.ocr': { sendsContent: true, available: false, local: undefined },
      'pdf.tables': { sendsContent: true, available: false, local: undefined },
      'pdf.structured': { sendsContent: true, available: false, local: undefined },
    });
    const refusal = (() => {
      try {
        requireProvider(NO_PROVIDER, operationById('pdf.structured'));
      } catch (err) {
        return err as ServiceError;
      }
      return undefined;
    })();
    expect(refusal?.code).to.equal('PROVIDER_DISABLED');
    expect(() => requireProvider(NO_PROVIDER, operationById('pdf.compress'))).to.not.throw();
    expect(localEngines(NO_PROVIDER, operations)).to.equal([]);
  });

  it('a key alone or a base URL alone is a provider; every operation stays local where a local engine is chosen', () => {
    for (const provider of [{ modelApiKey: 'sk-x' }, { modelBaseUrl: 'http://127.0.0.1:1' }]) {
      expect(Object.values(routes({ ...NO_PROVIDER, ...provider })).every((r) => r.available)).to.be.true();
    }
    const local = { ...NO_PROVIDER, ocrEngine: 'tesseract', tablesEngine: 'local', markdownOcr: 'tesseract' } as const;
    expect(routes(local)).to.equal({
      'image.ocr': { sendsContent: false, available: true, local: 'tesseract (local)' },
      'pdf.markdown': { sendsContent: false, available: true, local: 'tesseract (local)' },
      'pdf.ocr': { sendsContent: false, available: true, local: 'tesseract (local)' },
      'pdf.tables': { sendsContent: false, available: true, local: 'paydoc layout engine (local: tables read from the PDF\'s text layer and drawn rules, as for /v1/pdf/markdown)' },
      'pdf.structured': { sendsContent: true, available: false, local: undefined },
    });
    expect(localEngines(local, operations)).to.equal(['tesseract']);
    expect(localEngines({ ...NO_PROVIDER, markdownOcr: 'tesseract' }, operations)).to.equal(['tesseract']);
    expect(localEngines({ ...NO_PROVIDER, tablesEngine: 'local' }, operations)).to.equal([]);
  });
});
