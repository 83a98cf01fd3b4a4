// Blocks with their places and chunks (workers/layout/blocks.ts, chunks.ts), on blocks and boxes built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import {
  charCount, chunksOf, figuresOf, isCaption, type LaidOutBlock, markdownOfBlock, placeFigure, rowUnits, textOf,
} from '../../../../workers/layout/testing.js';
import type { Block, Cell } from '../../../../workers/layout/types.js';
import { FIGURE_MIN_SIDE_PT } from '../../../../workers/layout/thresholds.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const span = (text: string) => ({ text, bold: false, italic: false, mono: false });
const cell = (text: string, rowspan = 1): Cell => ({ spans: [span(text)], colspan: 1, rowspan, box: [0, 0, 10, 10], page: 1 });

/** A block as blocks.ts hands it to chunking: the layout block and its answer, placed on page 1. */
function laid(source: Block, kind = source.kind as string): LaidOutBlock {
  source.placed = [{ page: 1, box: [10, 20, 300, 40] }];
  const rows = source.kind === 'table' ? source.rows.map((r, k) => ({ page: 1, bbox: [10, 20 + k * 10, 300, 30 + k * 10] as [number, number, number, number], cells: r.map((c) => ({ text: c.spans[0]!.text, colspan: 1, rowspan: c.rowspan })) })) : undefined;
  return { source, out: { page: 1, bbox: [10, 20, 300, 40], kind: kind as 'paragraph', text: textOf(source), markdown: markdownOfBlock(source), ...(rows ? { rows } : {}) } };
}

describe('layout: blocks and chunks', () => {
  it('rows a cell spanning rows reaches into stay with its row; others are units alone (rowUnits)', () => {
    expect(rowUnits([[cell('a'), cell('b')], [cell('c', 2), cell('d')], [cell('e')], [cell('f'), cell('g')]])).to.equal([[0], [1, 2], [3]]);
  });

  it('characters are counted as code points: an emoji is one (charCount)', () => {
    expect(charCount('ab😀c')).to.equal(4);
    expect(charCount('')).to.equal(0);
  });

  it('a paragraph longer than the limit is cut at sentence ends, a sentence longer than the limit between words (chunksOf)', () => {
    const sentence = (k: number) => `Sentence ${k} is about forty characters long.`;
    const long = Array.from({ length: 30 }, (_, k) => `W${k}`).join(' ');
    const text = `${[1, 2, 3, 4, 5, 6].map(sentence).join(' ')} ${long}.`;
    const chunks = chunksOf([laid({ kind: 'paragraph', spans: [span(text)] })], 100);
    for (const c of chunks) expect(Math.max(charCount(c.text), charCount(c.markdown))).to.be.at.most(100);
    expect(chunks.slice(0, 3).map((c) => c.text)).to.equal([`${sentence(1)} ${sentence(2)}`, `${sentence(3)} ${sentence(4)}`, `${sentence(5)} ${sentence(6)}`]);
    expect(chunks.slice(3).map((c) => c.text).join(' ')).to.equal(`${long}.`);
    expect(chunks.every((c) => c.blocks.length === 1 && c.blocks[0] === 0 && c.pages[0] === 1)).to.be.true();
  });

  it('blocks fill a chunk up to the limit with a blank line between them; a table row over the limit is a chunk of its own, oversized (chunksOf)', () => {
    const rows: Cell[][] = [[cell('Name'), cell('Note')], [cell('a'), cell('short')], [cell('b'), cell('x'.repeat(150))], [cell('c'), cell('short too')]];
    const blocks = [laid({ kind: 'paragraph', spans: [span('One.')] }), laid({ kind: 'paragraph', spans: [span('Two.')] }), laid({ kind: 'table', rows })];
    const chunks = chunksOf(blocks, 100);
    expect(chunks[0]!.markdown.startsWith('One.\n\nTwo.\n\n| Name | Note |')).to.be.true();
    const oversized = chunks.filter((c) => c.oversized);
    expect(oversized.map((c) => c.text)).to.equal([`b\t${'x'.repeat(150)}`]);
    // The piece after the long row repeats the header row.
    expect(chunks[chunks.length - 1]!.text).to.equal('Name\tNote\nc\tshort too');
    for (const c of chunks.filter((t) => !t.oversized)) expect(charCount(c.markdown)).to.be.at.most(100);
  });

  it('a figure is at least FIGURE_MIN_SIDE_PT on each side, tiles are one figure, a page-sized image is a background (figuresOf)', () => {
    const small: [number, number, number, number] = [0, 0, FIGURE_MIN_SIDE_PT - 1, 100];
    const tiles: [number, number, number, number][] = [[100, 100, 200, 150], [100, 150, 200, 200]];
    expect(figuresOf([small, ...tiles, [0, 0, 600, 800]], 600, 800)).to.equal([[100, 100, 200, 200]]);
  });

  it('a figure goes before the first block under it in its column, else after the last one above it (placeFigure)', () => {
    const at = (y: number, x0 = 0, x1 = 200): LaidOutBlock => ({ out: { page: 1, bbox: [x0, y, x1, y + 10], kind: 'paragraph', text: String(y), markdown: String(y) }, source: { kind: 'paragraph', spans: [] } });
    const figure = (y: number, x0 = 0, x1 = 200): LaidOutBlock => ({ ...at(y, x0, x1), out: { ...at(y, x0, x1).out, kind: 'figure', text: 'figure' } });
    const blocks = [at(100), at(300), at(100, 300, 500)];
    placeFigure(blocks, figure(200));
    placeFigure(blocks, figure(400, 300, 500));
    expect(blocks.map((b) => b.out.text)).to.equal(['100', 'figure', '300', '100', 'figure']);
  });

  it('a paragraph that names a figure or table is a caption; a sentence starting with the word is not (isCaption)', () => {
    expect(['Figure 3: Yields by month', 'Fig. 2.1. Sites', 'Table IV — Costs', 'TABLE 2. Rain'].map(isCaption)).to.equal([true, true, true, true]);
    expect(['Figure 3 shows the yields.', 'Tables were set in the hall.'].map(isCaption)).to.equal([false, false]);
  });
});
