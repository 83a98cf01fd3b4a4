// client/bridge/tools.ts: the service's tool declarations as the bridge offers them, on declarations
// built here in each shape a file argument takes (the system tests see only the service's shapes).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { bridgedTool, deliveredElsewhere } from '../../../../client/bridge/tools.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const DATA = { type: 'object', required: ['data'], properties: { data: { type: 'string' } } };
const URL_ARGUMENT = { type: 'object', required: ['url'], properties: { url: { type: 'string' } } };

describe('the tools as the bridge offers them', () => {
  it('adds { path } before each choice of a file argument, keeping its description and the other arguments', () => {
    const tool: Tool = {
      name: 'svc_image_resize',
      description: 'Resizes an image. Paid with x402 (0.005 USD per call): send the payment in _meta.',
      inputSchema: {
        type: 'object',
        properties: { file: { description: 'The image.', anyOf: [DATA, URL_ARGUMENT] }, width: { type: 'integer' } },
      },
    };
    const bridged = bridgedTool(tool);
    const file = bridged.inputSchema.properties!.file as { description: string; anyOf: Array<{ required: string[] }> };
    expect(file.description).to.equal('The image.');
    expect(file.anyOf.map((choice) => choice.required)).to.equal([['path'], ['data'], ['url']]);
    expect(bridged.inputSchema.properties!.width).to.equal({ type: 'integer' });
    expect(bridged.description!).to.startWith('Resizes an image. Price: 0.005 USD per call. Through this bridge: pass a local file as '
      + '{ "path": "…" }');
    // The upstream's declaration is not changed.
    expect((tool.inputSchema.properties!.file as { anyOf: unknown[] }).anyOf).to.have.length(2);
  });

  it('keeps a single-shaped file argument as one choice beside { path }, and bridges each item of files', () => {
    const bridged = bridgedTool({
      name: 'svc_pdf_merge',
      inputSchema: {
        type: 'object', properties: { files: { type: 'array', minItems: 2, items: DATA }, file: { ...DATA, description: 'One.' } },
      },
    });
    const files = bridged.inputSchema.properties!.files as { minItems: number; items: { anyOf: unknown[] } };
    expect(files.minItems).to.equal(2);
    expect(files.items.anyOf.slice(1)).to.equal([DATA]);
    expect((bridged.inputSchema.properties!.file as { anyOf: unknown[] }).anyOf.slice(1)).to.equal([DATA]);
    expect(bridged.description!).to.startWith(' Through this bridge');
  });

  it('leaves a tool without file arguments as it is, but for its description', () => {
    const tool: Tool = { name: 'svc_x', title: 'X', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } };
    const bridged = bridgedTool(tool);
    expect({ ...bridged, description: undefined }).to.equal({ ...tool, description: undefined });
  });

  it('knows a result delivered elsewhere: as a link, or pushed to deliver_to', () => {
    expect(deliveredElsewhere({ delivery: 'link' })).to.be.true();
    expect(deliveredElsewhere({ deliver_to: '' })).to.be.true();
    expect(deliveredElsewhere({ delivery: 'inline' })).to.be.false();
    expect(deliveredElsewhere({})).to.be.false();
  });
});
