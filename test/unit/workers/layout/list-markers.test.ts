// The rule that joins a list marker to its text (workers/layout/list-markers.ts), on fragments built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { attachMarkers, rowsOf } from '../../../../workers/layout/testing.js';
import { fragment, texts } from './fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('layout: list markers (attachMarkers)', () => {
  it('a bullet alone before a narrow gap joins its text, before a wide gap it stays a cell (attachMarkers: MARKER_GAP_EM)', () => {
    const near = rowsOf([fragment('•', 50, 54, 100), fragment('first item', 62, 140, 100)]);
    const far = rowsOf([fragment('•', 50, 54, 100), fragment('far cell', 140, 200, 100)]);
    attachMarkers(near); attachMarkers(far);
    expect(near.map((r) => texts(r.fragments))).to.equal([['• first item']]);
    expect(far.map((r) => texts(r.fragments))).to.equal([['•', 'far cell']]);
  });
});
