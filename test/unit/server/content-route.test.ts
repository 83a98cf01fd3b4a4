// server/content-route.ts: where an operation's file content goes, resolved against each setting
// a deployment can make (a service test starts one): the provider configured by key or by URL,
// a local engine in its place, scanned pages read or not, and the 503 before payment without one.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { operationById, operations } from '../../../operations/index.js';
import { localEngines, requireProvider, resolveContent } from '../../../server/content-route.js';
import { loadConfig, type Config } from '../../../server/config.js';
import { ServiceError } from '../../../core/errors.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const settings = (overrides: Partial<Config> = {}) => loadConfig({ markdownOcr: 'off', ...overrides }, {});
const summary = (id: string, config: Config) => {
  const { forProvider, sendsContent, available, localEngine, scans } = resolveContent(config, operationById(id));
  const local = localEngine !== undefined;
  return { forProvider, sendsContent, available, local, scans: scans && { read: scans.engine !== undefined } };
};

describe('server/content-route', () => {
  it('a model operation: unavailable with no provider; a key alone or a URL alone configures one; its local engine keeps the content here', () => {
    expect(summary('pdf.ocr', settings())).to.equal({ forProvider: true, sendsContent: true, available: false, local: false, scans: undefined });
    expect(summary('pdf.ocr', settings({ modelApiKey: 'sk-test' })).available).to.be.true();
    expect(summary('pdf.ocr', settings({ modelBaseUrl: 'http://127.0.0.1:9/v1' })).available).to.be.true();
    const keptHere = { forProvider: true, sendsContent: false, available: true, local: true, scans: undefined };
    expect(summary('pdf.ocr', settings({ ocrEngine: 'tesseract' }))).to.equal(keptHere);
    expect(summary('pdf.tables', settings({ ocrEngine: 'tesseract' })).sendsContent).to.be.true();
    expect(summary('pdf.tables', settings({ tablesEngine: 'local' }))).to.equal(keptHere);
  });

  it('a local operation runs everywhere and sends nothing; one that reads scans says whether it does here', () => {
    expect(summary('pdf.split', settings())).to.equal({ forProvider: false, sendsContent: false, available: true, local: false, scans: undefined });
    expect(summary('pdf.markdown', settings()).scans).to.equal({ read: false });
    expect(summary('pdf.markdown', settings({ markdownOcr: 'tesseract' })))
      .to.equal({ forProvider: false, sendsContent: false, available: true, local: false, scans: { read: true } });
  });

  it('without a provider a model operation is refused before payment, 503 naming its path and the setting; with one it passes', () => {
    const structured = operationById('pdf.structured');
    const everyLocalEngine = settings({ ocrEngine: 'tesseract', tablesEngine: 'local' });
    const err = expect(() => requireProvider(everyLocalEngine, structured)).to.throw(ServiceError) as ServiceError;
    expect([err.code, err.status, err.message, err.extra.retryAfterSeconds])
      .to.equal(['PROVIDER_DISABLED', 503, '/v1/pdf/structured is not enabled on this deployment: the model provider is not configured (MODEL_BASE_URL)', 3600]);
    expect(() => requireProvider(settings({ modelApiKey: 'sk-test' }), structured)).to.not.throw();
    expect(() => requireProvider(settings({ ocrEngine: 'tesseract' }), operationById('image.ocr'))).to.not.throw();
    expect(() => requireProvider(settings(), operationById('pdf.split'))).to.not.throw();
  });

  it('the boot check requires tesseract once, and only where a setting chooses it', () => {
    expect(localEngines(settings(), operations)).to.equal([]);
    expect(localEngines(settings({ tablesEngine: 'local' }), operations)).to.equal([]);
    expect(localEngines(settings({ ocrEngine: 'tesseract' }), operations)).to.equal(['tesseract']);
    expect(localEngines(settings({ ocrEngine: 'tesseract', markdownOcr: 'tesseract' }), operations)).to.equal(['tesseract']);
    expect(localEngines(settings({ markdownOcr: 'tesseract' }), [operationById('pdf.split')])).to.equal([]);
  });
});
