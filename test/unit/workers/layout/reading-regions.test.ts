// Reading order rules (workers/layout/reading-regions.ts) on layouts built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import {
  bandsOf, carriedOverOverrun, columnFill, continuedInNextColumn, crossesMiddle, headingAcrossColumns, headingsShortOfGutter,
  holdsColumnsAt, isShortFragment, linesApart, overrunColumnEdge, readingRegions, runningTextOnBothSides, sides, sitsOnBothSides,
  slicesAround, stripsWhere, tableBesideText, tableSetAcross, tablesSideBySide,
} from '../../../../workers/layout/testing.js';
import { MIN_GUTTER_PT, SHORT_FRAGMENT_SHARE } from '../../../../workers/layout/thresholds.js';
import { drawnTable, line, fragment, prose, texts } from './fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('layout: reading regions', () => {
  it('a short fragment is narrower than SHORT_FRAGMENT_SHARE of the region (isShortFragment)', () => {
    expect(SHORT_FRAGMENT_SHARE).to.equal(0.3);
    expect(isShortFragment(fragment('12.5', 100, 129, 0), 80)).to.be.false();
    expect(isShortFragment(fragment('12.5', 100, 129, 0), 500)).to.be.true();
  });

  it('a gutter is an empty strip at least MIN_GUTTER_PT wide, away from the edges, nearest the middle first (stripsWhere)', () => {
    const open = (ranges: [number, number][]) => (x: number) => ranges.some(([a, b]) => x >= a && x < b);
    expect(stripsWhere(100, open([[47, 53]]))).to.equal([{ from: 47, to: 53 }]);
    expect(stripsWhere(100, open([[48, 48 + MIN_GUTTER_PT - 1]]))).to.equal([]);
    expect(stripsWhere(100, open([[2, 12]]))).to.equal([]); // a margin, not a gutter
    expect(stripsWhere(100, open([[30, 40], [52, 60]]))).to.equal([{ from: 52, to: 60 }, { from: 30, to: 40 }]);
  });

  it('a cut has running text on both sides when each side\'s rows are mostly full lines (runningTextOnBothSides)', () => {
    const left = prose(8, 50, 290, 100), right = prose(8, 310, 550, 100);
    expect(runningTextOnBothSides(left, right, 500, false)).to.be.true();
    // The right side is a column of short cells, as a table's: no running text there.
    const cells = Array.from({ length: 8 }, (_, k) => line(100 + k * 14, [['a', 310, 330], ['b', 400, 420], ['c', 500, 520]])).flat();
    expect(runningTextOnBothSides(left, cells, 500, false)).to.be.false();
  });

  it('two columns of short lines keep baselines of their own, a table\'s columns share them (linesApart)', () => {
    const list = (x: number, top: number) => Array.from({ length: 6 }, (_, k) => fragment(`entry ${k}`, x, x + 60, top + k * 14));
    expect(linesApart(list(50, 100), list(310, 107))).to.be.true();
    expect(linesApart(list(50, 100), list(310, 100))).to.be.false();
  });

  it('a chart\'s values, scattered over its bars on both sides, are no two columns of short lines (linesApart: chartValuesOnBothSides)', () => {
    // Values over bars of different heights: each on a baseline of its own, on both sides of the chart's middle.
    const left = [fragment('75', 115, 131, 268), fragment('52', 159, 175, 299), fragment('50', 115, 131, 312),
      fragment('25', 115, 131, 355)];
    const right = [fragment('77', 336, 351, 255), fragment('76', 453, 469, 257), fragment('47', 394, 410, 307),
      fragment('13', 277, 293, 366)];
    expect(linesApart(left, right)).to.be.false();
    // A chart beside a column of words is set apart from it, as two lists are.
    const entries = right.map((f, k) => ({ ...f, text: `entry ${k}` }));
    expect(linesApart(left, entries)).to.be.true();
    expect(linesApart(left.map((f, k) => ({ ...f, text: `item ${k}` })), entries)).to.be.true();
  });

  it('a two-column page is read down the left column, then down the right, not across (readingRegions)', () => {
    const left = prose(10, 50, 290, 100, 14).map((f, k) => ({ ...f, text: `left ${k}` }));
    const right = prose(10, 310, 550, 100, 14).map((f, k) => ({ ...f, text: `right ${k}` }));
    const regions = readingRegions([...right, ...left], 600);
    expect(regions.map(texts)).to.equal([left.map((f) => f.text), right.map((f) => f.text)]);
  });

  it('lines of the left column overrunning the right column\'s edge are the left column\'s: the page is cut at that edge (overrunColumnEdge)', () => {
    // Contents in two narrow columns, baselines 4 pt apart: every fourth left line's dot leaders run
    // 25 pt past the right column's edge (310).
    const left = Array.from({ length: 12 }, (_, k) => fragment(k % 4 === 2 ? `entry ${k} ..........` : `entry ${k}`, 50, k % 4 === 2 ? 335 : 250, 100 + k * 14));
    const right = Array.from({ length: 12 }, (_, k) => fragment(`item ${k} ..........`, 310, 540, 104 + k * 14));
    const page = [...left, ...right];
    expect(readingRegions(page, 600).map(texts)).to.equal([texts(left), texts(right)]);
    expect(overrunColumnEdge(page, { x0: 50, x1: 540, y0: 100, y1: 272 }, true)).to.equal({ x: 308.5, carriedOn: false });
    // A line reaching past the right column's middle is set across both columns: no overrun.
    const across = [...page, fragment('a line set across the page', 50, 530, 300)];
    expect(overrunColumnEdge(across, { x0: 50, x1: 540, y0: 100, y1: 310 }, true)).to.be.undefined();
    // Nor is a heading in large type reaching over the edge: headings wrap in their column.
    const heading = [...page, fragment('A heading set across', 50, 335, 80, { size: 20 })];
    expect(overrunColumnEdge(heading, { x0: 50, x1: 540, y0: 80, y1: 272 }, true)).to.be.undefined();
    // Most lines running over the point (a letter's body beside an address block) are no overrun.
    const letter = [...Array.from({ length: 6 }, (_, k) => fragment(`address ${k}`, 310, 400, 100 + k * 14)), ...prose(10, 50, 335, 200)];
    expect(overrunColumnEdge(letter, { x0: 50, x1: 400, y0: 100, y1: 340 }, true)).to.be.undefined();
  });

  it('a table too wide for its column, carried on into the next, keeps its overrun: the next column\'s part is the starts one pitch right (carriedOverOverrun)', () => {
    // Seven columns from 57; the last two (336, 394) overrun the next column, whose part of the table
    // (rows of its own, 8 pt higher) starts 270 pt (the column pitch) right of the first five.
    const starts = [57, 83, 154, 216, 274, 336, 394];
    const row = (top: number, xs: number[], name: string) => xs.map((x, c) => fragment(`${name}${c}`, x, x + 16, top));
    const left = [0, 1, 2, 3].flatMap((k) => row(100 + k * 30, starts, `L${k}-`));
    const right = [0, 1, 2, 3].flatMap((k) => row(92 + k * 30, starts.slice(0, 5).map((x) => x + 270), `R${k}-`));
    const page = [...left, ...right];
    expect(readingRegions(page, 612).map((r) => texts(r).sort())).to.equal([texts(left).sort(), texts(right).sort()]);
    expect(carriedOverOverrun(page, 612)?.moved).to.equal(new Set(right));
    // Without the overrun, the part in the next column is found by the gutter before it; this look does not cut.
    const fitting = [...left.filter((f) => f.x0 < 300), ...right];
    expect(carriedOverOverrun(fitting, 612)).to.be.undefined();
  });

  it('a drawn table overrunning its column by a few points, the next column holding its carried-on part, is read before that part (tablesSideBySide)', () => {
    // A title and a caption over the left part (ruled from 49 to 303); the right part is ruled from 305, from the top.
    const title = fragment('Restrictions on Land Ownership by Foreigners', 48, 280, 58);
    const caption = fragment('Figure 9. Annual totals by year', 57, 221, 230);
    const leftPart = drawnTable(49, 303, 245, 781), rightPart = drawnTable(305, 559, 49, 777);
    const regions = readingRegions([rightPart, title, caption, leftPart], 595);
    expect(regions.flat()).to.equal([title, caption, leftPart, rightPart]);
    expect(tablesSideBySide([title, leftPart], [rightPart], 595)).to.be.true();
    // A table set across the page over a small one on the right is no pair of parts.
    expect(tablesSideBySide([drawnTable(49, 540, 245, 400)], [drawnTable(320, 559, 420, 500)], 595)).to.be.false();
  });

  it('a drawn table overrunning the next column by a whole cell, the part carried on there one column pitch right and as wide, is read before that part (tablesSideBySide)', () => {
    const title = fragment('Registration results', 48, 240, 58);
    const leftPart = drawnTable(48.5, 370.7, 79, 266), rightPart = drawnTable(304.7, 627, 49, 215);
    expect(readingRegions([rightPart, title, leftPart], 595).flat()).to.equal([title, leftPart, rightPart]);
    expect(tablesSideBySide([title, leftPart], [rightPart], 595)).to.be.true();
    // A narrower table on the right is another table.
    expect(tablesSideBySide([leftPart], [drawnTable(304.7, 560, 49, 215)], 595)).to.be.false();
  });

  it('a chart\'s rows of numbers beside running text count neither for nor against a column (columnFill)', () => {
    // Left column: three lines of text above a chart (ticks, values, years); right column: text and short equations.
    const chart = [
      fragment('200', 58, 72, 160), ...line(180, [['150', 58, 72], ['136', 131, 145]]), fragment('100', 58, 72, 200),
      ...line(220, [['50', 63, 72], ['28', 200, 210]]), fragment('0', 67, 72, 240), ...line(255, [['2019', 90, 110], ['2020', 150, 170], ['2021', 210, 230]]),
    ];
    const left = [...prose(3, 50, 290, 100, 14), ...chart];
    const right = [...prose(3, 310, 550, 100, 14), ...[0, 1, 2, 3, 4, 5].map((k) => fragment(`(${k + 7})`, 310, 330, 160 + k * 18))];
    expect(columnFill(left, 500)).to.equal(1);
    expect(runningTextOnBothSides(left, right, 500, false)).to.be.true();
  });

  it('a heading set across both columns ends the columns above it: they are read before it, those below after it (headingAcrossColumns)', () => {
    const named = (fs: ReturnType<typeof prose>, name: string) => fs.map((f, k) => ({ ...f, text: `${name} ${k}` }));
    const aboveLeft = named(prose(6, 50, 290, 100, 14), 'above left'), aboveRight = named(prose(6, 306, 550, 100, 14), 'above right');
    // 20 pt, clear of the middle (300) but reaching into the gutter (290 to 306): no strip of it is left wide enough.
    const heading = fragment('5. The dynamics of a heading across the columns', 50, 301, 200, { size: 20 });
    const belowLeft = named(prose(6, 50, 290, 240, 14), 'below left'), belowRight = named(prose(6, 306, 550, 240, 14), 'below right');
    const regions = readingRegions([...aboveLeft, ...aboveRight, heading, ...belowLeft, ...belowRight], 600);
    expect(regions.flatMap(texts)).to.equal(texts([...aboveLeft, ...aboveRight, heading, ...belowLeft, ...belowRight]));
    expect(headingAcrossColumns([heading], [...aboveLeft, ...aboveRight], 300)).to.be.true();
    // A heading inside the left column has the right column's lines beside it.
    expect(headingAcrossColumns([heading, aboveRight[0]!], [...aboveLeft, ...aboveRight], 300)).to.be.false();
  });

  it('a heading across both columns that ends short of the gutter ends the columns above it: the page is read in slices above, at and below it (headingsShortOfGutter, slicesAround)', () => {
    const named = (fs: ReturnType<typeof prose>, name: string) => fs.map((f, k) => ({ ...f, text: `${name} ${k}` }));
    const aboveLeft = named(prose(6, 50, 290, 100, 14), 'above left'), aboveRight = named(prose(6, 310, 550, 100, 14), 'above right');
    // 18 pt, on the left side alone: the gutter (290 to 310) runs from the top of the page to the bottom.
    const heading = fragment('BURNING BRIDGES GAME', 50, 230, 200, { size: 18 });
    const belowLeft = named(prose(6, 50, 290, 240, 14), 'below left'), belowRight = named(prose(6, 310, 550, 240, 14), 'below right');
    const page = [...aboveLeft, ...aboveRight, heading, ...belowLeft, ...belowRight];
    expect(readingRegions(page, 600).flatMap(texts)).to.equal(texts([...aboveLeft, ...aboveRight, heading, ...belowLeft, ...belowRight]));
    expect(headingsShortOfGutter(page, 300)).to.equal([{ x0: 50, x1: 230, y0: 200, y1: 218 }]);
    expect(slicesAround(page, headingsShortOfGutter(page, 300)).map((s) => s.length)).to.equal([12, 1, 12]);
    // A heading inside the left column has the right column's lines beside it: the columns are read one after the other.
    const rightRunsOn = named(prose(16, 310, 550, 100, 14), 'right');
    const inColumn = [...aboveLeft, heading, ...belowLeft, ...rightRunsOn];
    expect(headingsShortOfGutter(inColumn, 300)).to.equal([]);
    expect(readingRegions(inColumn, 600).flatMap(texts)).to.equal(texts([...aboveLeft, heading, ...belowLeft, ...rightRunsOn]));
    // A heading at the top of the left column, the right column starting beside it: no slices.
    expect(headingsShortOfGutter([heading, ...belowLeft, ...belowRight], 300)).to.equal([]);
  });

  it('the page\'s columns hold in a slice of a few lines between two headings across them: left lines, then right (readingRegions)', () => {
    const named = (fs: ReturnType<typeof prose>, name: string) => fs.map((f, k) => ({ ...f, text: `${name} ${k}` }));
    const aboveLeft = named(prose(8, 50, 290, 60, 14), 'above left'), aboveRight = named(prose(8, 310, 550, 60, 14), 'above right');
    const first = fragment('4.2 Definitions', 50, 180, 190, { size: 18 });
    const fewLeft = named(prose(2, 50, 290, 230, 14), 'few left'), fewRight = named(prose(3, 310, 550, 224, 14), 'few right');
    const second = fragment('Convergence', 50, 160, 290, { size: 18 });
    const belowLeft = named(prose(8, 50, 290, 330, 14), 'below left'), belowRight = named(prose(8, 310, 550, 330, 14), 'below right');
    const page = [...aboveLeft, ...aboveRight, first, ...fewLeft, ...fewRight, second, ...belowLeft, ...belowRight];
    expect(headingsShortOfGutter(page, 300)).to.have.length(2);
    // Each region is read top to bottom: the few lines of each column are regions of their own.
    const expected = [aboveLeft, aboveRight, [first], fewLeft, fewRight, [second], belowLeft, belowRight];
    expect(readingRegions(page, 600).map(texts)).to.equal(expected.map(texts));
  });

  it('a group of a few lines between headings across the page takes the page\'s columns: those of another group, or those all groups show together (keepPageColumns, holdsColumnsAt)', () => {
    const named = (fs: ReturnType<typeof prose>, name: string) => fs.map((f, k) => ({ ...f, text: `${name} ${k}` }));
    const first = fragment('What tools do you typically use in your course, and why?', 50, 520, 60, { size: 18 });
    const fewLeft = named(prose(2, 50, 290, 100, 14), 'few left'), fewRight = named(prose(3, 310, 550, 94, 14), 'few right');
    const second = fragment('What supporting materials do you utilize for this course?', 50, 500, 150, { size: 18 });
    const manyLeft = named(prose(8, 50, 290, 190, 14), 'many left'), manyRight = named(prose(8, 310, 550, 184, 14), 'many right');
    const page = [first, ...fewLeft, ...fewRight, second, ...manyLeft, ...manyRight];
    expect(readingRegions(page, 600).map(texts)).to.equal([[first], fewLeft, fewRight, [second], manyLeft, manyRight].map(texts));
    // Only groups of a few lines: the gutter they show together.
    const third = fragment('Where do your students find the readings for the course?', 50, 500, 190, { size: 18 });
    const moreLeft = named(prose(2, 50, 290, 230, 14), 'more left'), moreRight = named(prose(2, 310, 550, 224, 14), 'more right');
    const small = [first, ...fewLeft, ...fewRight, third, ...moreLeft, ...moreRight];
    expect(readingRegions(small, 600).map(texts)).to.equal([[first], fewLeft, fewRight, [third], moreLeft, moreRight].map(texts));
    // A row of a table's narrow cells holds no columns.
    expect(holdsColumnsAt(line(100, [['name', 50, 80], ['12', 320, 335]]), 300)).to.be.false();
    // Beside running text, a column of lines all starting at one x (labels of a table carried on) holds too (linesAtOneEdge).
    const labels = ['K+', 'Na+', 'Ca2+', 'Al3+', 'Check'].map((t, k) => fragment(t, 320, 345, 90 + 18.7 * k));
    const beside = [...prose(2, 50, 280, 100), ...line(130, [['Added', 50, 80], ['Relative size', 110, 270]])];
    expect(holdsColumnsAt([...beside, ...labels], 300)).to.be.true();
    expect(holdsColumnsAt([...line(130, [['Added', 50, 80], ['Relative', 110, 150]]), ...labels], 300)).to.be.false(); // no running text on either side
    expect(holdsColumnsAt([...fewLeft, ...fewRight], 300)).to.be.true();
  });

  it('a table\'s own gutters make no columns: its rows stay one region (readingRegions)', () => {
    const rows = Array.from({ length: 8 }, (_, k) => line(100 + k * 14, [[`name ${k}`, 50, 120], [`${k * 3}`, 300, 320], [`${k * 7}`, 500, 520]])).flat();
    expect(readingRegions(rows, 600)).to.have.length(1);
  });

  it('bands are runs of fragments whose heights chain together (bandsOf)', () => {
    const bands = bandsOf([fragment('a', 0, 10, 0), fragment('b', 0, 10, 9), fragment('c', 0, 10, 40)]);
    expect(bands.map(texts)).to.equal([['a', 'b'], ['c']]);
  });

  it('a band crossing the middle is read across; one with fragments on both sides opens columns (crossesMiddle, sitsOnBothSides)', () => {
    const heading = [fragment('A heading across the page', 100, 500, 0)];
    const twoColumns = line(0, [['left', 50, 290], ['right', 310, 550]]);
    expect(crossesMiddle(heading, 300)).to.be.true();
    expect(crossesMiddle(twoColumns, 300)).to.be.false();
    expect(sitsOnBothSides(twoColumns, 300)).to.be.true();
    expect(sitsOnBothSides([fragment('left only', 50, 290, 0)], 300)).to.be.false();
  });

  it('a drawn table crossing a cut is set across both columns when it reaches halfway into the right one (tableSetAcross)', () => {
    const text = prose(6, 310, 550, 100);
    expect(tableSetAcross([drawnTable(50, 330, 100, 160), ...text], 300, 550, 612)).to.be.false(); // overruns the left column a little
    expect(tableSetAcross([drawnTable(50, 450, 100, 160), ...text], 300, 550, 612)).to.be.true();
    expect(tableSetAcross([drawnTable(50, 330, 100, 160)], 300, 550, 612)).to.be.true(); // no text beside it
  });

  it('cells past the gutter on the baseline of a left-column table row that overruns its column read with that row (sides)', () => {
    const text = prose(4, 50, 280, 40);
    const row = line(100, [['Region', 50, 110], ['North', 200, 270], ['1,204', 285, 305]]);
    const rightText = prose(4, 320, 550, 40);
    const [left, right] = sides([...text, ...row, ...rightText], { x: 300, carriedOn: false }, 500);
    expect(texts(left)).to.include(['1,204']);
    expect(texts(right)).to.not.include(['1,204']);
  });

  it('a fragment at the right column\'s edge on the baseline of an overrunning left-column table row is that column\'s, and so is the rest of its line (sides: opensColumnLine)', () => {
    const text = prose(4, 50, 280, 40);
    const row = line(100, [['Region', 50, 110], ['North', 200, 270], ['1,204', 285, 305]]);
    const rightText = prose(4, 320, 550, 40);
    const rightRow = line(100, [['Less than 3 months', 320, 400], ['25', 430, 440]]);
    const [left, right] = sides([...text, ...row, ...rightText, ...rightRow], { x: 300, carriedOn: false }, 500);
    expect(texts(left)).to.include(['1,204']).and.not.include(['Less than 3 months', '25']);
    expect(texts(right)).to.include(['Less than 3 months', '25']);
    // A cell drawn over the right column's lines is spilled, even at that column's edge.
    const overprinted = line(100, [['Region', 50, 110], ['North ridge', 200, 290], ['Trend', 320, 345]]);
    const [withCell] = sides([...text, ...overprinted, ...prose(4, 320, 550, 96)], { x: 300, carriedOn: false }, 500);
    expect(texts(withCell)).to.include(['Trend']);
  });

  it('a drawn table beside the other column\'s lines is read after them, not among them (drawnTableBeside)', () => {
    // A table carried over a column break: its header at the foot of the left column, the rest of it drawn at the top of the right one.
    const left = [...prose(3, 50, 280, 100).map((f, k) => ({ ...f, text: `left ${k}` })), ...line(142, [['Added cation', 50, 100], ['Relative size', 110, 270]])];
    const table = drawnTable(320, 550, 90, 160);
    const heading = fragment('A heading across both columns', 50, 500, 200, { size: 20 });
    const below = [...prose(8, 50, 280, 240), ...prose(8, 320, 550, 240)];
    const regions = readingRegions([table, ...left, heading, ...below], 600);
    expect(texts(regions[0]!)).to.equal(texts(left));
    expect(regions[1]).to.equal([table]);
  });

  it('a table set in a column beside running text keeps its own row pitch: the strip between them is a gutter; a table whose last column holds long text opens its rows on one baseline across it (tableBesideText)', () => {
    const table = Array.from({ length: 8 }, (_, k) => line(100 + k * 18.7, [[`Region ${k}`, 50, 150], [`${k}`, 190, 196], [`${k + 2}`, 210, 216]])).flat();
    const text = prose(12, 320, 550, 90, 14.7);
    expect(tableBesideText(table, text, 500)).to.be.true();
    const regions = readingRegions([...text, ...table], 600);
    expect(regions.map(texts)).to.equal([texts(table), texts(text)]);
    const longCells = Array.from({ length: 8 }, (_, k) => fragment(`the long text of row ${k} in the last column of the table`, 320, 550, 100 + k * 18.7));
    expect(tableBesideText(table, longCells, 500)).to.be.false();
  });

  it('a table carried on into the next column keeps its cell starts moved by the column pitch, on baselines of its own (continuedInNextColumn)', () => {
    const half = (dx: number, dy: number) => Array.from({ length: 6 }, (_, k) => line(100 + dy + k * 14, [[`r${k}`, 50 + dx, 80 + dx], ['x', 100 + dx, 120 + dx], ['y', 150 + dx, 170 + dx]])).flat();
    expect(continuedInNextColumn(half(0, 0), half(280, 5), 600)).to.be.true();
    // The two halves of one wide table open each row on one baseline.
    expect(continuedInNextColumn(half(0, 0), half(280, 0), 600)).to.be.false();
  });
});
