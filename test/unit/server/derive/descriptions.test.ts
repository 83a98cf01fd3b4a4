// server/derive/descriptions.ts: whether an operation sends file content to the model provider,
// and its description, as each deployment's settings decide (a service test runs one setting).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { operationById } from '../../../../operations/index.js';
import { operationDescription, sendsContent } from '../../../../server/derive/descriptions.js';
import { publicView } from '../../../support/public-view.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const STAYS = ': the file\'s content stays on the server and is sent to no third party.';

describe('server/derive/descriptions', () => {
  it('a model operation sends content unless its local engine is chosen, and then says where the content stays', () => {
    const ocr = operationById('image.ocr');
    const provider = publicView({ modelBaseUrl: 'http://127.0.0.1:9/v1' });
    const tesseract = publicView({ ocrEngine: 'tesseract' });
    expect([sendsContent(ocr, provider), operationDescription(ocr, provider)]).to.equal([true, ocr.description]);
    // Without a provider configured it is unavailable, but still declared as sending content.
    expect(sendsContent(ocr, publicView())).to.be.true();
    expect([sendsContent(ocr, tesseract), operationDescription(ocr, tesseract)])
      .to.equal([false, `${ocr.description} On this service OCR runs on this server (tesseract)${STAYS}`]);
    expect(operationDescription(operationById('pdf.ocr'), tesseract)).to.equal(`${operationById('pdf.ocr').description} On this service OCR runs on this server (tesseract)${STAYS}`);
  });

  it('each local engine stands in only for the operations that name it', () => {
    const tables = operationById('pdf.tables');
    const local = publicView({ tablesEngine: 'local', ocrEngine: 'tesseract' });
    expect([sendsContent(tables, local), operationDescription(tables, local)]).to.equal([false,
      `${tables.description} On this service the tables are read on this server by its own layout engine, from the PDF's text layer (pages without one yield no tables)${STAYS}`]);
    expect(sendsContent(tables, publicView({ ocrEngine: 'tesseract' }))).to.be.true();
    // structured has no local engine: it sends content whatever is chosen.
    const structured = operationById('pdf.structured');
    expect([sendsContent(structured, local), operationDescription(structured, local)]).to.equal([true, structured.description]);
  });

  it('a local operation never sends content, and its description is its declaration\'s, scanned pages read or not', () => {
    for (const id of ['pdf.split', 'image.resize', 'pdf.markdown']) {
      const op = operationById(id);
      for (const view of [publicView(), publicView({ ocrEngine: 'tesseract', markdownOcr: 'tesseract', tablesEngine: 'local' })]) {
        expect([sendsContent(op, view), operationDescription(op, view)], id).to.equal([false, op.description]);
      }
    }
  });
});
