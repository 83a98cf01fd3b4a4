// Page lists and ranges as the pages and split fields take them (core/page-ranges.ts).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { parsePageList, parseRanges } from '../../../core/page-ranges.js';
import { ServiceError } from '../../../core/errors.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

function thrown(fn: () => unknown): ServiceError {
  try { fn(); } catch (err) { return err as ServiceError; }
  throw new Error('expected a ServiceError');
}

describe('page ranges', () => {
  it('expands numbers, ranges and z in the listed order, tolerating spaces', () => {
    expect(parsePageList(' 3 , 1-2,z, 7 - z ', 8)).to.equal([3, 1, 2, 8, 7, 8]);
    expect(parseRanges('1-3,4-6,7-z', 10).map((r) => [r.first, r.last])).to.equal([[1, 3], [4, 6], [7, 10]]);
    expect(parseRanges('5', 10)[0].pages).to.equal([5]);
  });

  it('names the item that is wrong', () => {
    const beyond = thrown(() => parsePageList('1,12', 10, { field: 'pages' }));
    expect(beyond.code).to.equal('FIELD_INVALID');
    expect(beyond.status).to.equal(422);
    expect(beyond.extra.field).to.equal('pages');
    expect(beyond.message).to.contain('page 12 does not exist: the PDF has 10 pages');
    expect(thrown(() => parseRanges('5-3', 10)).message).to.contain('range 5-3 is reversed');
    expect(thrown(() => parsePageList('1,,2', 10)).message).to.contain('item 2 is empty');
    expect(thrown(() => parsePageList('1,', 10)).message).to.contain('item 2 is empty');
    expect(thrown(() => parsePageList('0', 10)).message).to.contain('page 0 does not exist');
    expect(thrown(() => parsePageList('two', 10)).message).to.contain('"two" is not a page number');
    expect(thrown(() => parsePageList('1-2-3', 10)).message).to.contain('"1-2-3"');
    expect(thrown(() => parsePageList('', 10)).message).to.contain('empty');
  });

  it('refuses more than 50 ranges with 413', () => {
    const ranges = Array.from({ length: 51 }, (_, i) => String(i + 1)).join(',');
    const err = thrown(() => parseRanges(ranges, 60));
    expect(err.code).to.equal('LIMIT_EXCEEDED');
    expect(err.status).to.equal(413);
    expect(err.extra.field).to.equal('ranges');
    expect(parseRanges(ranges.split(',').slice(0, 50).join(','), 60)).to.have.length(50);
  });
});
