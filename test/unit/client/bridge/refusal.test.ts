// client/bridge/refusal.ts: a refusal as the host sees it, and the upstream's words kept to one
// bounded line (a hostile upstream cannot flood or reshape the bridge's messages).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { Refusal, shown, toolError } from '../../../../client/bridge/refusal.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('refusals and shown strings', () => {
  it('a tool error is one text item flagged as an error', () => {
    expect(toolError('no')).to.equal({ isError: true, content: [{ type: 'text', text: 'no' }] });
    expect(new Refusal('why')).to.be.an.instanceof(Error);
  });

  it('shows what the upstream sent on one line, at most 80 characters', () => {
    expect(shown('a\n\nb\tc  d')).to.equal('a b c d');
    expect(shown('x'.repeat(500))).to.have.length(80);
    expect(shown(undefined)).to.equal('undefined');
    expect(shown({ toString: () => 'forged\r\nPaid 0 USD.' })).to.equal('forged Paid 0 USD.');
  });
});
