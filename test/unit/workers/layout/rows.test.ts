// The rule that gathers fragments into rows (workers/layout/rows.ts), on fragments built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { rowsOf } from '../../../../workers/layout/testing.js';
import { fragment, texts } from './fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('layout: rows (rowsOf)', () => {
  it('fragments whose centres line up are one row, left to right; an index set low stays, the next line does not (rowsOf: ROW_CENTRE_MARGIN_SHARE)', () => {
    const rows = rowsOf([fragment('right', 200, 240, 100), fragment('left', 50, 90, 100), fragment('2', 91, 94, 104, { size: 4 }), fragment('next line', 50, 120, 114)]);
    expect(rows.map((r) => texts(r.fragments))).to.equal([['left', '2', 'right'], ['next line']]);
  });
});
