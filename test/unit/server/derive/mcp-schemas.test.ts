// server/derive/mcp-schemas.ts: the MCP tools' input schemas (also the JSON body's), run through a
// JSON Schema validator on the arguments an agent sends: a file by URL or as base64 (not both), the
// required fields, the merges' files array within its bounds, the delivery arguments, nothing else.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { Ajv } from 'ajv';
import { operationById } from '../../../../operations/index.js';
import { DELIVERY_ARGUMENTS, mcpInputSchema, mediaTypesFor } from '../../../../server/derive/mcp-schemas.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const ajv = new Ajv({ strict: false, validateFormats: false });
const accepts = (id: string) => {
  const validate = ajv.compile(mcpInputSchema(operationById(id)));
  return (args: unknown) => validate(args);
};

describe('server/derive/mcp-schemas', () => {
  it('a single-file tool: the file by URL or as base64, its required fields, the delivery arguments, nothing else', () => {
    const crop = accepts('image.crop');
    const file = { data: 'UGF5ZG9j', mediaType: 'image/png' };
    expect(crop({ file, width: 10, height: 20 })).to.be.true();
    expect(crop({ file: { url: 'https://example.com/photo.png' }, width: 10, height: 20, delivery: 'link' })).to.be.true();
    expect(crop({ file, width: 10, height: 20, deliver_to: 'https://bucket.example/put?sig=1' })).to.be.true();
    expect(crop({ file, width: 10 }), 'height is required').to.be.false();
    expect(crop({ file, width: 0, height: 20 }), 'below the minimum').to.be.false();
    expect(crop({ file: { url: 'https://example.com/a.png', data: 'UGF5ZG9j' }, width: 1, height: 1 }), 'url and data').to.be.false();
    expect(crop({ file: { data: 'UGF5ZG9j', mediaType: 'application/pdf' }, width: 1, height: 1 }), 'a PDF media type').to.be.false();
    expect(crop({ file, width: 1, height: 1, delivery: 'email' }), 'an unknown delivery').to.be.false();
    expect(crop({ file, width: 1, height: 1, password: 'x' }), 'a field the tool does not have').to.be.false();
    expect(crop({ file: { url: `https://example.com/${'a'.repeat(8192)}` }, width: 1, height: 1 }), 'a URL past 8192 characters').to.be.false();
  });

  it('a merge takes a files array within its count, and no single file', () => {
    const merge = accepts('pdf.merge');
    const pdf = { data: 'JVBERi0=' };
    const { count } = operationById('pdf.merge').input;
    expect(merge({ files: Array(count.min).fill(pdf) })).to.be.true();
    expect(merge({ files: Array(count.max).fill({ url: 'https://example.com/a.pdf' }) })).to.be.true();
    expect(merge({ files: Array(count.min - 1).fill(pdf) })).to.be.false();
    expect(merge({ files: Array(count.max + 1).fill(pdf) })).to.be.false();
    expect(merge({ file: pdf })).to.be.false();
    expect(mcpInputSchema(operationById('pdf.merge')).required).to.equal(['files']);
    expect(mcpInputSchema(operationById('pdf.split')).required).to.equal(['file', 'ranges']);
  });

  it('the media types offered are the input kind\'s, and the delivery arguments are the same on every tool', () => {
    expect(mediaTypesFor(operationById('image.resize'))).to.equal(['image/jpeg', 'image/png', 'image/webp', 'image/avif']);
    expect(mediaTypesFor(operationById('pdf.from-markdown'))).to.equal(['text/markdown', 'text/plain']);
    for (const id of ['image.resize', 'pdf.merge', 'office.pdf']) {
      const { properties } = mcpInputSchema(operationById(id)) as { properties: Record<string, unknown> };
      expect(properties.delivery, id).to.equal(DELIVERY_ARGUMENTS.delivery);
      expect(properties.deliver_to, id).to.equal(DELIVERY_ARGUMENTS.deliver_to);
    }
  });
});
