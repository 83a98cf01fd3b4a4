// server/derive/catalog.ts: GET /v1/discovery on deployments a service test does not start:
// channels offered or not, URL inputs off, a local engine or a provider in place of none, and the
// pricing notes of flat, per-page, capped and summed operations.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { operationById, operations } from '../../../../operations/index.js';
import { catalog, catalogItem, scannedPagesInfo, thirdPartyInfo } from '../../../../server/derive/catalog.js';
import { MAX_TIMEOUT_SECONDS } from '../../../../server/payment/gate.js';
import { CHAINS, CHANNEL_TERMS, publicView } from '../../../support/public-view.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

type Item = { accepts: Record<string, unknown>[]; metadata: Record<string, unknown>; resource: string };
interface Service {
  inputs: { url: boolean }; deliveries: Record<string, string>; network: string; networks: string[]; channels?: { refund: string };
  mcp: { tools: string[] };
}
const item = (id: string, view = publicView()) => catalogItem(operationById(id), view) as Item;

describe('server/derive/catalog', () => {
  it('an item offers exact on each chain at the rate, paid to that chain\'s address, then the channel with its terms', () => {
    expect(item('pdf.render', publicView({}, CHANNEL_TERMS)).accepts).to.equal([
      { amount: '10000', asset: 'USDC', maxTimeoutSeconds: MAX_TIMEOUT_SECONDS, network: CHAINS[0].network, payTo: CHAINS[0].payTo, scheme: 'exact' },
      { amount: '10000', asset: 'USDC', maxTimeoutSeconds: MAX_TIMEOUT_SECONDS, network: CHAINS[1].network, payTo: CHAINS[1].payTo, scheme: 'exact' },
      {
        amount: '10000', asset: 'USDC', maxTimeoutSeconds: MAX_TIMEOUT_SECONDS, network: CHAINS[0].network, payTo: CHAINS[0].payTo, scheme: 'batch-settlement',
        extra: { receiverAuthorizer: CHANNEL_TERMS.receiverAuthorizer, withdrawDelay: CHANNEL_TERMS.withdrawDelay },
      },
    ]);
    expect(item('pdf.render').accepts.map((a) => a.scheme)).to.equal(['exact', 'exact']);
  });

  it('pricing notes: per page with the cap, summed over the files of a merge, a flat operation\'s own note, none for a plain flat one', () => {
    expect([item('pdf.render').metadata.priceUsd, item('pdf.render').metadata.pricingModel, item('pdf.render').metadata.pricingNote])
      .to.equal(['0.01', 'per-page', 'amount is per page; the charge is 0.01 USD times the page count; at most 0.5 USD']);
    expect(item('pdf.split').metadata.pricingNote).to.equal('amount is per page; the charge is 0.005 USD times the page count');
    expect(item('pdf.merge').metadata.pricingNote).to.equal('amount is per page; the charge is 0.005 USD times the page count summed over all files; Pages are summed over all inputs.');
    expect(item('pdf.unlock').metadata.pricingNote).to.equal(operationById('pdf.unlock').price.note);
    expect(item('image.resize').metadata).to.not.include('pricingNote');
  });

  it('a model operation says whether content leaves and whether it runs: no provider, a provider, a local engine', () => {
    const ocr = operationById('image.ocr');
    expect(thirdPartyInfo(ocr, publicView())).to.equal({
      sendsContent: true, provider: 'OpenAI-compatible model provider', available: false,
      unavailableReason: 'the model provider is not configured on this deployment (answers 503)',
    });
    expect(thirdPartyInfo(ocr, publicView({ modelApiKey: 'sk-test' }))).to.equal({ sendsContent: true, provider: 'OpenAI-compatible model provider', available: true });
    expect(thirdPartyInfo(ocr, publicView({ ocrEngine: 'tesseract', ocrLanguages: 'eng+deu' }))).to.equal({ sendsContent: false, engine: 'tesseract (local)', languages: ['eng', 'deu'], available: true });
    expect(thirdPartyInfo(operationById('pdf.split'), publicView())).to.be.undefined();
    expect(item('image.ocr', publicView({ ocrEngine: 'tesseract' })).metadata.thirdParty).to.equal({ sendsContent: false, engine: 'tesseract (local)', languages: ['eng'], available: true });
  });

  it('scanned pages: read by tesseract where it is chosen, a note otherwise, nothing for an operation that reads none', () => {
    const markdown = operationById('pdf.markdown');
    expect(scannedPagesInfo(markdown, publicView())).to.equal({ read: false, note: 'each page without a text layer is answered with a note that OCR is needed' });
    expect(scannedPagesInfo(markdown, publicView({ markdownOcr: 'tesseract' }))).to.equal({ read: true, sendsContent: false, engine: 'tesseract (local)', languages: ['eng'] });
    expect(scannedPagesInfo(operationById('pdf.split'), publicView({ markdownOcr: 'tesseract' }))).to.be.undefined();
  });

  it('the report header and the output\'s media types are named; every item is the table\'s, under this deployment\'s URL', () => {
    expect(item('pdf.redact').metadata.report).to.equal({ header: 'Paydoc-Redactions', description: operationById('pdf.redact').output.report!.description });
    expect(item('pdf.split').metadata.output).to.equal(`${operationById('pdf.split').output.description} (application/zip)`);
    expect(item('image.flip').metadata.output).to.equal(operationById('image.flip').output.description);
    const document = catalog(publicView({ baseUrl: 'https://docs.example' })) as { items: Item[]; service: Service };
    expect(document.items.map((i) => i.resource)).to.equal(operations.map((op) => `https://docs.example${op.path}`));
    expect(document.service.mcp.tools).to.equal(operations.map((op) => op.tool));
  });

  it('the service: URL inputs and pushes only where URLs are on, the link\'s lifetime, the channels only where offered', () => {
    const on = (catalog(publicView({ resultLinkTtlS: 120 }, CHANNEL_TERMS)) as { service: Service }).service;
    const off = (catalog(publicView({ urlInputs: 'off' })) as { service: Service }).service;
    expect([on.inputs.url, off.inputs.url]).to.equal([true, false]);
    expect(on.deliveries).to.equal({
      inline: 'the result in the answer (default)', link: 'delivery=link: a one-time download link, valid 120 s',
      push: 'deliver_to=<https URL>: the result is PUT there; charged only after a 2xx',
    });
    expect(off.deliveries).to.not.include('push');
    expect([on.network, on.networks]).to.equal([CHAINS[0].network, CHAINS.map((c) => c.network)]);
    expect(on.channels?.refund).to.equal('https://paydoc.example/v1/channels/refund');
    expect(off.channels).to.be.undefined();
  });
});
