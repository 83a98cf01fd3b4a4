// Drawn rules and ruled tables (workers/layout/rules.ts, underlined-tables.ts) from boxes built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { ruledTables, rulesOf, underlinedTables, underlinedTablesOfPage } from '../../../../workers/layout/testing.js';
import type { Rect, TableCells } from '../../../../workers/layout/types.js';
import { line, fragment } from './fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const cellTexts = (t: TableCells) => t.rows.map((r) => r.map((c) => c.spans.map((s) => s.text).join('')));
const hline = (y: number, x0: number, x1: number): Rect => [x0, y - 0.25, x1, y + 0.25];
const vline = (x: number, y0: number, y1: number): Rect => [x - 0.25, y0, x + 0.25, y1];

describe('layout: drawn rules and ruled tables', () => {
  it('thin boxes are rules, thick ones (filled areas) are not; segments of one line drawn cell by cell join, their joints kept (rulesOf)', () => {
    const rules = rulesOf([hline(100, 50, 150), hline(100, 151, 250), vline(50, 100, 200), [50, 300, 250, 340]]);
    expect(rules.horizontal).to.equal([{ at: 100, from: 50, to: 250, joints: [150.5] }]);
    expect(rules.vertical).to.equal([{ at: 50, from: 100, to: 200 }]);
  });

  it('a grid of rules with text in two or more boxes is a table, its cells the boxes (ruledTables)', () => {
    const boxes = [
      hline(100, 50, 250), hline(120, 50, 250), hline(140, 50, 250),
      vline(50, 100, 140), vline(150, 100, 140), vline(250, 100, 140),
    ];
    const text = [...line(105, [['Name', 55, 90], ['Count', 155, 190]]), ...line(125, [['Oak', 55, 80], ['12', 155, 165]]), fragment('After the table.', 50, 200, 160)];
    const { tables, rest } = ruledTables(text, rulesOf(boxes));
    expect(tables).to.have.length(1);
    expect(cellTexts(tables[0]!)).to.equal([['Name', 'Count'], ['Oak', '12']]);
    expect(rest.map((f) => f.text)).to.equal(['After the table.']);
  });

  it('a single framed box is no table (ruledTables)', () => {
    const frame = [hline(100, 50, 250), hline(140, 50, 250), vline(50, 100, 140), vline(250, 100, 140)];
    expect(ruledTables([fragment('A boxed note', 55, 150, 110)], rulesOf(frame)).tables).to.equal([]);
  });

  it('column rules running past the last row rule leave the table open at the bottom: a row cut by a break (ruledTables)', () => {
    const boxes = [hline(100, 50, 250), hline(120, 50, 250), vline(50, 100, 150), vline(150, 100, 150), vline(250, 100, 150)];
    const text = [...line(105, [['Name', 55, 90], ['Count', 155, 190]]), ...line(130, [['Oak', 55, 80], ['12', 155, 165]])];
    const { tables } = ruledTables(text, rulesOf(boxes));
    expect(tables[0]!.openBottom).to.be.true();
    expect(tables[0]!.openTop).to.be.false();
  });

  it('rows ruled only by a line under each, header above the first rule, are a table (underlinedTables)', () => {
    const rules = rulesOf([hline(112, 50, 250), hline(126, 50, 250), hline(140, 50, 250)]).horizontal;
    const text = [...line(101, [['Name', 55, 90], ['Count', 155, 190]]), ...line(115, [['Oak', 55, 80], ['12', 155, 165]]), ...line(129, [['Ash', 55, 80], ['7', 155, 160]])];
    const { tables, rest } = underlinedTables(text, rules);
    expect(tables).to.have.length(1);
    expect(cellTexts(tables[0]!)).to.equal([['Name', 'Count'], ['Oak', '12'], ['Ash', '7']]);
    expect(rest).to.equal([]);
  });

  it('a header cell spanning two columns over the first rule neither unmakes a table ruled under its rows nor joins the columns below it (underlinedTables: fragmentsCrossCellStarts, columnsWithEmpty read the body)', () => {
    const text = [
      ...line(68, [['No.', 50, 62], ['Registered in', 100, 190], ['Change', 210, 240]]),
      ...line(79, [['of', 50, 60], ['March 2020,', 100, 185], ['in seats', 210, 240]]),
      ...line(90, [['list', 50, 60], ['by district', 100, 185], ['total', 210, 235]]),
      ...line(101, [['Seats', 100, 125], ['Votes', 150, 175], ['Net', 210, 225]]),
      ...line(115, [['11', 50, 58], ['35', 100, 110], ['498', 150, 165], ['+3', 210, 220]]),
      ...line(129, [['12', 50, 58], ['32', 100, 110], ['435', 150, 165], ['-1', 210, 218]]),
    ];
    const rules = rulesOf([112, 126, 140].map((y) => hline(y, 48, 250))).horizontal;
    const { tables } = underlinedTables(text, rules);
    expect(tables).to.have.length(1);
    expect(cellTexts(tables[0]!).slice(-2)).to.equal([['11', '35', '498', '+3'], ['12', '32', '435', '-1']]);
  });

  it('a table ruled under its rows, too wide for its column and carried on over its own overrun, is read part by part (underlinedTablesOfPage: carriedOnRuleParts)', () => {
    // The left part runs 48-370, the part carried on into the next column 304-626: one column
    // pitch (256) right, its rows on baselines of their own, its first cells under the overrun.
    const left = [
      ...line(101, [['No.', 50, 62], ['Party', 150, 180], ['Diff', 320, 340]]),
      ...line(115, [['11', 50, 58], ['Khmer', 150, 180], ['-41', 320, 332]]),
      ...line(129, [['12', 50, 58], ['Beehive', 150, 185], ['+46', 320, 334]]),
    ];
    const right = [
      ...line(104, [['15', 306, 314], ['Cheat', 406, 430], ['+3', 576, 586]]),
      ...line(118, [['16', 306, 314], ['Khemara', 406, 440], ['+9', 576, 586]]),
      ...line(132, [['17', 306, 314], ['Sun', 406, 425], ['-1', 576, 584]]),
    ];
    const rules = rulesOf([112, 126, 140].map((y) => hline(y, 48, 370)).concat([115, 129, 143].map((y) => hline(y, 304, 626)))).horizontal;
    const { tables, rest } = underlinedTablesOfPage([...left, ...right], rules, 595);
    expect(tables.map(cellTexts)).to.equal([
      [['No.', 'Party', 'Diff'], ['11', 'Khmer', '-41'], ['12', 'Beehive', '+46']],
      [['15', 'Cheat', '+3'], ['16', 'Khemara', '+9'], ['17', 'Sun', '-1']],
    ]);
    expect(rest).to.equal([]);
  });

  it('rules drawn cell by cell show a column no row fills: it is a column of empty cells; a fragment across a joint (a spanning header) adds none (underlinedTables: columnsWithEmpty)', () => {
    const cellRule = (y: number) => [hline(y, 50, 120), hline(y, 120, 250)];
    const rules = rulesOf([100, 114, 128, 142].flatMap(cellRule)).horizontal;
    const text = [fragment('K+', 55, 70, 102), fragment('Na+', 55, 75, 116), fragment('Ca2+', 55, 80, 130)];
    expect(cellTexts(underlinedTables(text, rules).tables[0]!)).to.equal([['K+', ''], ['Na+', ''], ['Ca2+', '']]);
    const spanning = [fragment('Training Datasets', 55, 180, 102), fragment('Na+', 55, 75, 116), fragment('Ca2+', 55, 80, 130)];
    expect(cellTexts(underlinedTables(spanning, rules).tables[0]!)).to.equal([['Training Datasets'], ['Na+'], ['Ca2+']]);
  });

  it('an 8 pt table ruled under its rows, its cells five points apart, keeps one column per cell (underlinedTables: ruledColumnsOf)', () => {
    // Small type set with tight cell padding: the gaps between cells are narrower than a
    // borderless table's gutter (MIN_TABLE_GUTTER_PT), yet each is a cell gap the fragments were parted at.
    const small = { size: 8 };
    const cell = (t: string, k: number): [string, number, number] => [t, 48.5 + k * 29, 48.5 + k * 29 + (k === 0 ? 6 : 24)];
    const cells = (top: number, texts: string[]) => line(top, texts.map(cell).filter(([t]) => t), small);
    const text = [
      ...cells(55, ['Year', '3-Year', '5-Year', '7-Year']).map((f, k) => (k === 0 ? { ...f, x1: 72.5 } : f)),
      ...cells(69, ['1', '33.0%', '20.00%', '14.29%']),
      ...cells(83, ['2', '44.45%', '32.00%', '24.49%']),
      ...cells(97, ['3', '', '', '17.49%']),
    ];
    const rules = rulesOf([hline(66, 48, 160), hline(80, 48, 160), hline(94, 48, 160), hline(108, 48, 160)]).horizontal;
    const { tables } = underlinedTables(text, rules);
    expect(tables).to.have.length(1);
    expect(cellTexts(tables[0]!)).to.equal([
      ['Year', '3-Year', '5-Year', '7-Year'], ['1', '33.0%', '20.00%', '14.29%'], ['2', '44.45%', '32.00%', '24.49%'], ['3', '', '', '17.49%'],
    ]);
  });

  it('one column between two rules is a frame; three rules or more mark a boxed list off as a table (underlinedTables: isFrame, MIN_RULES_WITHOUT_HEADER)', () => {
    const text = [fragment('A note set above a rule', 55, 240, 101), fragment('and its text between two', 55, 240, 115), fragment('and a third line under them', 55, 240, 129)];
    const framed = rulesOf([hline(112, 50, 250), hline(126, 50, 250)]).horizontal;
    expect(underlinedTables(text.slice(0, 2), framed).tables).to.equal([]);
    const boxed = rulesOf([hline(112, 50, 250), hline(126, 50, 250), hline(140, 50, 250)]).horizontal;
    const { tables } = underlinedTables(text, boxed);
    expect(tables.map(cellTexts)).to.equal([[['A note set above a rule'], ['and its text between two'], ['and a third line under them']]]);
  });

  it('a single rule under a line is an underline, not a table (underlinedTables)', () => {
    const rules = rulesOf([hline(112, 50, 250)]).horizontal;
    expect(underlinedTables(line(101, [['Name', 55, 90], ['Count', 155, 190]]), rules).tables).to.equal([]);
  });
});
