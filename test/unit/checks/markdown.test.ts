// The pre-payment check for /v1/pdf/from-markdown (checks/markdown.ts): the bytes must be UTF-8 and
// hold something, and the layout estimate must fit the budget for the upload's size and deadline.
// Each refusal is the error a payer sees (code, status, message), before anything is charged.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { ServiceError } from '../../../core/errors.js';
import {
  decodeMarkdown, firstInvalidUtf8Offset, inspectMarkdown, layoutBudgetMs,
  LAYOUT_BASE_MS, LAYOUT_DEADLINE_SHARE, LAYOUT_MS_PER_KB,
} from '../../../checks/markdown.js';
import { estimatedLayoutMs } from '../../../checks/markdown-estimate.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const DEADLINE_MS = 120_000;
const bytesOf = (text: string) => new TextEncoder().encode(text);
const repeat = (unit: string, bytes: number) => unit.repeat(Math.max(1, Math.floor(bytes / Buffer.byteLength(unit))));
const PROSE = 'The quarterly figures were reviewed by the committee before the meeting closed, and the totals were checked twice. ';

function refusal(run: () => unknown): ServiceError {
  try {
    run();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('the Markdown check', () => {
  it('finds the first byte that does not start a well-formed UTF-8 character', () => {
    expect(firstInvalidUtf8Offset(bytesOf('plain, é, 漢, 😀'))).to.equal(-1);
    const at = (bytes: number[]) => firstInvalidUtf8Offset(Uint8Array.from([0x61, 0x62, ...bytes]));
    expect(at([0xc0, 0xaf])).to.equal(2); // an overlong slash
    expect(at([0xed, 0xa0, 0x80])).to.equal(2); // a surrogate
    expect(at([0xf4, 0x90, 0x80, 0x80])).to.equal(2); // past U+10FFFF
    expect(at([0xe2, 0x82])).to.equal(2); // cut short
    expect(at([0x80])).to.equal(2); // a continuation byte alone
  });

  it('decodes UTF-8 (a byte order mark dropped), and names the offset and line of a bad byte', () => {
    expect(decodeMarkdown(Uint8Array.from([0xef, 0xbb, 0xbf, ...bytesOf('# Title')]))).to.equal('# Title');
    const error = refusal(() => decodeMarkdown(Uint8Array.from([...bytesOf('# Title\n\nbody '), 0xff])));
    expect([error.code, error.status, error.extra.field]).to.equal(['CORRUPT_INPUT', 422, 'file']);
    expect(error.message).to.equal('the Markdown is not valid UTF-8: the byte 0xff at offset 14 (line 3) does not start a valid character');
  });

  it('refuses whitespace alone as empty', () => {
    const error = refusal(() => decodeMarkdown(bytesOf(' \n\t\r\n ')));
    expect([error.code, error.status]).to.equal(['NO_CONTENT', 422]);
    expect(error.message).to.equal('the Markdown is empty: it holds no characters other than whitespace');
  });

  it('gives LAYOUT_BASE_MS to any size, LAYOUT_MS_PER_KB past it, and never more than the share of the deadline', () => {
    expect(layoutBudgetMs(1, DEADLINE_MS)).to.equal(LAYOUT_BASE_MS);
    expect(layoutBudgetMs(16 * 1024, DEADLINE_MS)).to.equal(LAYOUT_BASE_MS);
    expect(layoutBudgetMs(100 * 1024, DEADLINE_MS)).to.equal(100 * LAYOUT_MS_PER_KB);
    expect(layoutBudgetMs(1024 * 1024, DEADLINE_MS)).to.equal(DEADLINE_MS * LAYOUT_DEADLINE_SHARE);
    expect(layoutBudgetMs(100 * 1024, 10_000)).to.equal(10_000 * LAYOUT_DEADLINE_SHARE);
  });

  it('accepts ordinary documents up to 1 MB of running text', () => {
    for (const markdown of ['# Notes\n\nShort.', repeat(`${PROSE}\n\n`, 100 * 1024), repeat(`${PROSE}\n\n`, 1024 * 1024 - 64)]) {
      expect(() => inspectMarkdown(bytesOf(markdown), DEADLINE_MS)).to.not.throw();
    }
  });

  it('refuses a document dense with short elements for its size, naming the per-KB rule', () => {
    const markdown = repeat('- a\n', 64 * 1024);
    expect(estimatedLayoutMs(markdown)).to.be.above(64 * LAYOUT_MS_PER_KB);
    const error = refusal(() => inspectMarkdown(bytesOf(markdown), DEADLINE_MS));
    expect([error.code, error.status, error.extra.field]).to.equal(['LIMIT_EXCEEDED', 413, 'file']);
    expect(error.message).to.startWith('the Markdown costs far more to typeset per byte than ordinary documents');
    expect(error.message).to.contain(`passes both 3.2 s and ${LAYOUT_MS_PER_KB} ms per KB`);
  });

  it('refuses what passes the share of the deadline, saying whether its beginning is dense', () => {
    // 1 MB of running text fits 60 s, not 5 s of a 10 s deadline: split it.
    const prose = refusal(() => inspectMarkdown(bytesOf(repeat(`${PROSE}\n\n`, 1024 * 1024 - 64)), 10_000));
    expect(prose.code).to.equal('LIMIT_EXCEEDED');
    expect(prose.message)
      .to.startWith('the Markdown is more than one job typesets: its estimated layout time passes 5 s, 50 % of the job\'s 10 s deadline');
    expect(prose.message).to.endWith('split it into smaller documents (/v1/pdf/merge joins the PDFs)');
    // Past the ceiling with a dense beginning: the per-byte advice too.
    const dense = refusal(() => inspectMarkdown(bytesOf(repeat('- a\n', 1024 * 1024 - 64)), DEADLINE_MS));
    expect(dense.message).to.startWith('the Markdown is more than one job typesets: its estimated layout time passes 60 s');
    expect(dense.message).to.contain('and its beginning costs far more to typeset per byte than ordinary documents');
  });
});
