// server/derive/resources.ts: what a 402 says of the thing bought, for HTTP routes and MCP tools.
// Every operation's Bazaar example is checked against its schema on both URL settings as x402's
// validateDiscoveryExtension checks it (Ajv for JSON Schema 2020-12 with its options, without its
// warnings on formats it does not know); the example's file and fields, the caching by setting,
// and the answer schemas.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { operationById, operations } from '../../../../operations/index.js';
import { httpResource, jsonAnswerSchema, mcpResource, outputMediaTypes } from '../../../../server/derive/resources.js';
import { LINK_RESULT_SCHEMA, PUSH_RESULT_SCHEMA } from '../../../../server/derive/delivery-schemas.js';
import { publicView } from '../../../support/public-view.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

interface Bazaar { info: { input: { body?: Record<string, unknown>; method?: string } }; schema: Record<string, unknown> }
const bazaarOf = (extensions: Record<string, unknown> | undefined) => extensions!.bazaar as Bazaar;
const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });

function validateDiscoveryExtension(extension: Bazaar): { valid: boolean; errors?: string } {
  const validate = ajv.compile(extension.schema);
  return validate(extension.info) ? { valid: true } : { valid: false, errors: ajv.errorsText(validate.errors) };
}

describe('server/derive/resources', () => {
  it('every operation\'s HTTP and MCP discovery extension passes x402\'s validator, with URL inputs on and off', () => {
    for (const view of [publicView(), publicView({ urlInputs: 'off' })]) {
      for (const op of operations) {
        for (const resource of [httpResource(op, view), mcpResource(op, view)]) {
          const result = validateDiscoveryExtension(bazaarOf(resource.extensions));
          expect(result, `${resource.key} (URL inputs ${view.config.urlInputs})`).to.equal({ valid: true });
        }
      }
    }
  });

  it('the example gives the file by URL when URL inputs are on, as base64 when off, with every required field', () => {
    const crop = operationById('image.crop');
    expect(bazaarOf(httpResource(crop, publicView()).extensions).info.input.body).to.equal({ file: { url: 'https://example.com/photo.png' }, width: 1, height: 1 });
    expect(bazaarOf(httpResource(crop, publicView({ urlInputs: 'off' })).extensions).info.input.body).to.equal({ file: { data: 'UGF5ZG9j' }, width: 1, height: 1 });
    expect(bazaarOf(httpResource(operationById('image.rotate'), publicView()).extensions).info.input.body).to.equal({ file: { url: 'https://example.com/photo.png' }, angle: 90 });
    expect(bazaarOf(httpResource(operationById('pdf.split'), publicView()).extensions).info.input.body).to.equal({ file: { url: 'https://example.com/document.pdf' }, ranges: '1-3,4-z' });
    const merge = bazaarOf(httpResource(operationById('pdf.merge'), publicView({ urlInputs: 'off' })).extensions).info.input;
    expect([merge.method, merge.body]).to.equal(['POST', { files: [{ data: 'UGF5ZG9j' }, { data: 'UGF5ZG9j' }] }]);
  });

  it('an HTTP resource names its route, description and first output type; it is built once per setting', () => {
    const view = publicView();
    const resize = operationById('image.resize');
    const first = httpResource(resize, view);
    expect([first.key, first.url, first.description, first.mimeType]).to.equal(['http image.resize', 'https://paydoc.example/v1/image/resize', resize.description, 'image/jpeg']);
    expect(httpResource(resize, publicView({ baseUrl: 'https://other.example' })).extensions).to.shallow.equal(first.extensions);
    expect(httpResource(resize, publicView({ urlInputs: 'off' })).extensions).to.not.shallow.equal(first.extensions);
    // A deployment describes each route once, not once per request.
    expect(httpResource(resize, view)).to.shallow.equal(first);
    expect(mcpResource(resize, view)).to.shallow.equal(mcpResource(resize, view));
    expect(mcpResource(resize, view)).to.not.shallow.equal(mcpResource(resize, publicView()));
  });

  it('an MCP resource is listed under /mcp with the tool\'s name, and says where a local engine keeps the content', () => {
    const ocr = operationById('image.ocr');
    const sent = mcpResource(ocr, publicView());
    const local = mcpResource(ocr, publicView({ ocrEngine: 'tesseract' }));
    expect([sent.key, sent.url, sent.mimeType]).to.equal(['mcp image.ocr', 'https://paydoc.example/mcp', 'application/json']);
    type ToolInfo = { toolName: string; description: string };
    const info = (resource: typeof sent) => bazaarOf(resource.extensions).info.input as unknown as ToolInfo;
    expect([info(sent).toolName, info(sent).description]).to.equal(['svc_image_ocr', ocr.description]);
    expect(info(local).description).to.equal(local.description);
    expect(local.description).to.endWith('On this service OCR runs on this server (tesseract): the file\'s content stays on the server and is sent to no third party.');
  });

  it('output types: every image format for an image result, the declared type otherwise; the JSON answers each way out', () => {
    expect(outputMediaTypes(operationById('image.flip'))).to.equal(['image/jpeg', 'image/png', 'image/webp', 'image/avif']);
    expect(outputMediaTypes(operationById('pdf.split'))).to.equal(['application/zip']);
    const split = operationById('pdf.split');
    expect(jsonAnswerSchema(split)).to.equal({ description: `${split.output.description} As JSON only with delivery=link or deliver_to.`, anyOf: [LINK_RESULT_SCHEMA, PUSH_RESULT_SCHEMA] });
    const extract = operationById('pdf.extract');
    const anyOf = [extract.output.jsonSchema, LINK_RESULT_SCHEMA, PUSH_RESULT_SCHEMA];
    expect(jsonAnswerSchema(extract)).to.equal({ description: extract.output.description, anyOf });
  });
});
