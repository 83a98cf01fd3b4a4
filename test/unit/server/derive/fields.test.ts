// Field validation as every surface runs it: a form's text ("0.5", "true") and JSON values
// (0.5, true) reach the same typed value; anything else is a FIELD_INVALID naming the field, what
// it takes and what came. The JSON Schemas the descriptions publish say the same.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { defineOperation, MB } from '../../../../operations/define.js';
import { expectation, fieldJsonSchema, validateFields } from '../../../../server/derive/fields.js';
import { ServiceError } from '../../../../core/errors.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const op = defineOperation({
  id: 'pdf.example', title: 'Example', description: 'An operation declared for this test.', category: 'pdf-processing',
  fields: [
    { name: 'opacity', type: 'number', minimum: 0, maximum: 1, default: 1, description: 'How opaque.' },
    { name: 'landscape', type: 'boolean', default: false, description: 'Turn the page.' },
    { name: 'flag', type: 'boolean', description: 'An optional flag without a default.' },
    { name: 'color', type: 'string', pattern: { regex: '^#[0-9A-Fa-f]{6}$', means: 'a colour as #rrggbb' }, description: 'A colour.' },
  ],
  input: { kind: 'pdf', maxBytes: MB, count: { min: 1, max: 1 }, maxTotalBytes: MB },
  price: { model: 'flat', rate: 1000 }, output: { mediaType: 'application/pdf', description: 'A PDF.' },
  content: { local: true }, engines: [], timeoutMs: 1000,
  plan: ({ fields }) => fields,
});

function refusal(raw: Record<string, unknown>): string {
  try {
    validateFields(op, raw);
  } catch (error) {
    expect(error).to.be.an.instanceof(ServiceError);
    expect((error as ServiceError).code).to.equal('FIELD_INVALID');
    return (error as ServiceError).message;
  }
  throw new Error('validation passed');
}

describe('server/derive/fields: number and boolean fields', () => {
  it('a form\'s text and a JSON value give the same typed value; defaults apply, an optional field stays unset', () => {
    expect(validateFields(op, { opacity: '0.25', landscape: 'true' })).to.equal({ opacity: 0.25, landscape: true, flag: undefined, color: undefined });
    expect(validateFields(op, { opacity: 0.25, landscape: true, flag: false }))
      .to.equal({ opacity: 0.25, landscape: true, flag: false, color: undefined });
    expect(validateFields(op, { opacity: '0', landscape: 'false' })).to.equal({ opacity: 0, landscape: false, flag: undefined, color: undefined });
    expect(validateFields(op, {})).to.equal({ opacity: 1, landscape: false, flag: undefined, color: undefined });
    expect(validateFields(op, { opacity: '', landscape: '' })).to.equal({ opacity: 1, landscape: false, flag: undefined, color: undefined });
  });

  it('out of range, a number written otherwise, and a boolean written otherwise are refused with what the field takes', () => {
    expect(refusal({ opacity: '1.5' })).to.equal('"opacity" must be a number from 0 to 1; received 1.5');
    expect(refusal({ opacity: '1e-1' })).to.equal('"opacity" must be a number from 0 to 1; received "1e-1"');
    expect(refusal({ opacity: ' 0.5' })).to.equal('"opacity" must be a number from 0 to 1; received " 0.5"');
    expect(refusal({ landscape: 'yes' })).to.equal('"landscape" must be true or false; received "yes"');
    expect(refusal({ landscape: 1 })).to.equal('"landscape" must be true or false; received 1');
    expect(refusal({ flag: 'TRUE' })).to.equal('"flag" must be true or false; received "TRUE"');
  });

  it('the published schemas say the same', () => {
    expect(fieldJsonSchema(op.fields[0])).to.equal({ type: 'number', description: 'How opaque.', minimum: 0, maximum: 1, default: 1 });
    expect(fieldJsonSchema(op.fields[1])).to.equal({ type: 'boolean', description: 'Turn the page.', default: false });
    expect(expectation(op.fields[2])).to.equal('true or false');
  });
});

describe('server/derive/fields: string patterns', () => {
  it('a value matching the whole pattern passes; another is refused in the pattern\'s own words; the schema publishes it', () => {
    expect(validateFields(op, { color: '#00aaFF' }).color).to.equal('#00aaFF');
    expect(refusal({ color: 'red' })).to.equal('"color" must be a colour as #rrggbb; received "red"');
    expect(refusal({ color: '#00aaff0' })).to.equal('"color" must be a colour as #rrggbb; received "#00aaff0"');
    expect(fieldJsonSchema(op.fields[3])).to.include({ type: 'string', pattern: '^#[0-9A-Fa-f]{6}$' });
    expect(expectation(op.fields[3])).to.equal('a colour as #rrggbb');
  });
});
