// server/derive/agent-docs.ts: /.well-known/x402 and /llms.txt on deployments a service test does
// not start: channels offered or not, URL inputs off, the model operations on a local engine.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { operationById, operations } from '../../../../operations/index.js';
import { llmsTxt, wellKnownX402 } from '../../../../server/derive/agent-docs.js';
import { channelSentence } from '../../../../server/derive/view.js';
import { CHANNEL_TERMS, publicView } from '../../../support/public-view.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const line = (text: string, path: string) => text.split('\n').find((l) => l.includes(`(https://paydoc.example${path})`)) ?? '';

describe('server/derive/agent-docs', () => {
  it('/.well-known/x402 lists every paid route under this deployment\'s URL; the channels\' instructions only where offered', () => {
    const resources = operations.map((op) => `https://paydoc.example${op.path}`);
    expect(wellKnownX402(publicView())).to.equal({ version: 1, resources });
    const view = publicView({}, CHANNEL_TERMS);
    expect(wellKnownX402(view)).to.equal({ version: 1, resources, instructions: channelSentence(view) });
  });

  it('each operation\'s line gives its price per call, per page, or per page with the cap, and its tool', () => {
    const text = llmsTxt(publicView());
    expect(line(text, '/v1/image/resize')).to.equal(`- [${operationById('image.resize').title}](https://paydoc.example/v1/image/resize): 0.005 USD per call. MCP tool \`svc_image_resize\`.`);
    expect(line(text, '/v1/pdf/split')).to.equal(`- [${operationById('pdf.split').title}](https://paydoc.example/v1/pdf/split): 0.005 USD per page. MCP tool \`svc_pdf_split\`.`);
    expect(line(text, '/v1/pdf/render')).to.equal(`- [${operationById('pdf.render').title}](https://paydoc.example/v1/pdf/render): 0.01 USD per page (at most 0.5 USD). MCP tool \`svc_pdf_render\`.`);
    expect(text.split('\n').filter((l) => l.startsWith('- [') && l.includes('MCP tool'))).to.have.length(operations.length);
  });

  it('a model operation says whether the file leaves the server, as the settings decide', () => {
    expect(line(llmsTxt(publicView()), '/v1/image/ocr')).to.endWith('MCP tool `svc_image_ocr`. Sends the file\'s content to a third-party model provider.');
    const local = llmsTxt(publicView({ ocrEngine: 'tesseract', tablesEngine: 'local' }));
    for (const path of ['/v1/image/ocr', '/v1/pdf/ocr', '/v1/pdf/tables']) {
      expect(line(local, path), path).to.endWith(' Runs on this server: the file\'s content is sent to no third party.');
    }
    expect(line(local, '/v1/pdf/structured')).to.endWith(' Sends the file\'s content to a third-party model provider.');
  });

  it('URL inputs off: no file by URL and no deliver_to; the link\'s lifetime and the channels as configured', () => {
    const on = llmsTxt(publicView({ resultLinkTtlS: 300 }, CHANNEL_TERMS));
    expect(on).to.include(['{"file": {"url": "https://…"}', 'a `file_url` field in its place', '"deliver_to": "<https URL>"', 'GET the url once within 300 s']);
    expect(on).to.include(`- ${channelSentence(publicView({}, CHANNEL_TERMS))} Register x402's batch-settlement client scheme`);
    const off = llmsTxt(publicView({ urlInputs: 'off' }));
    expect(off).to.not.include(['"url": "https://', 'file_url', 'deliver_to', 'Payment channels']);
    expect(off).to.include('offering eip155:84532 and solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1.');
  });
});
