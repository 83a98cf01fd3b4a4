// Borderless table rules (workers/layout/aligned-tables.ts) on rows built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import {
  areLabelRows, buildTable, cellsAlignOverRows, cellsOfRows, columnsOf, findTables, isCellRow, isLineInTable, joinRowsAcrossColumnBreaks,
  listInColumns, logicalRows, proseInColumns, rowsOf, rowStepLimit, stepFromAbove,
} from '../../../../workers/layout/testing.js';
import { HEADER_STEP_EM, TABLE_PITCH_LINES, TABLE_PITCH_SLACK_PT, TABLE_STEP_EM } from '../../../../workers/layout/thresholds.js';
import type { Cell } from '../../../../workers/layout/types.js';
import { line, fragment, prose, rowOf, texts } from './fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const cellTexts = (rows: Cell[][]) => rows.map((r) => r.map((c) => c.spans.map((s) => s.text).join('')));

/** A table of `count` body rows under a header, three columns at x 50, 200, 350. */
function table(count: number, top = 100) {
  return [
    ...line(top, [['Region', 50, 110], ['Sites', 200, 240], ['Share', 350, 390]]),
    ...Array.from({ length: count }, (_, k) => line(top + 14 * (k + 1), [[`Area ${k + 1}`, 50, 100], [`${10 + k}`, 200, 215], [`${k}%`, 350, 365]])).flat(),
  ];
}

describe('layout: borderless tables', () => {
  it('two columns of prose are no table, nor fragments sharing lines without any column holding two cells; a table with a column of long text is (proseInColumns, cellsAlignOverRows)', () => {
    const prose2 = [
      line(100, [['Once the slides are created, you can further edit and', 50, 290], ['the way you present the program on campus and', 310, 550]]),
      line(114, [['customize them in Google Slides according to your needs.', 50, 290], ['what you want your audience to feel when they', 310, 550]]),
      line(128, [['A graphic that is clear and easy to read helps it', 50, 290], ['see your program\'s marketing around the campus.', 310, 550]]),
    ].flat();
    expect(findTables(rowsOf(prose2), 10)).to.equal([]);
    // A chart's values over its bars: each column holds one number.
    const scattered = [...line(100, [['150', 50, 65], ['200', 120, 135]]), ...line(114, [['172', 200, 215], ['168', 280, 295]])];
    expect(cellsAlignOverRows(rowsOf(scattered), columnsOf(rowsOf(scattered)))).to.be.false();
    expect(findTables(rowsOf(scattered), 10)).to.equal([]);
    // Names beside long descriptions: the name column is short cells, so a table.
    const described = [
      line(100, [['China', 50, 90], ['No individuals, domestic or foreign, can privately own land.', 200, 550]]),
      line(114, [['Egypt', 50, 90], ['Prohibition on ownership of agriculture lands in the Sinai.', 200, 550]]),
      line(128, [['Chile', 50, 90], ['Acquisition of public lands near the border needs a permit.', 200, 550]]),
    ].flat();
    const rows = rowsOf(described);
    expect(proseInColumns(rows, columnsOf(rows))).to.be.false();
    expect(findTables(rows, 10)).to.have.length(1);
  });

  it('a cell row has two or more fragments, not monospaced, not a bulleted line (isCellRow)', () => {
    expect(isCellRow(rowOf(line(0, [['Name', 0, 40], ['12', 100, 112]])))).to.be.true();
    expect(isCellRow(rowOf([fragment('one piece of prose', 0, 300, 0)]))).to.be.false();
    expect(isCellRow(rowOf(line(0, [['x = 1', 0, 40], ['# note', 100, 140]], { mono: true })))).to.be.false();
    expect(isCellRow(rowOf(line(0, [['• item', 0, 40], ['12', 100, 112]])))).to.be.false();
  });

  it('a single line stays in a table as wrapped cell text (indented) or a short row, not as running text (isLineInTable)', () => {
    expect(isLineInTable(rowOf([fragment('rest of a long cell text', 60, 400, 0)]), 50, 340, 10)).to.be.true();
    expect(isLineInTable(rowOf([fragment('Label', 50, 80, 0)]), 50, 340, 10)).to.be.true();
    expect(isLineInTable(rowOf([fragment('A paragraph after the table runs wide.', 50, 400, 0)]), 50, 340, 10)).to.be.false();
  });

  it('lines after the last cell row follow it while their step keeps the row pitch (rowStepLimit)', () => {
    expect(rowStepLimit(0, 10)).to.equal(10 * HEADER_STEP_EM);
    expect(rowStepLimit(14, 8)).to.equal(14 * TABLE_PITCH_LINES + TABLE_PITCH_SLACK_PT);
    expect(rowStepLimit(14, 12)).to.equal(12 * TABLE_STEP_EM);
  });

  it('label rows under one cell row all start at one x, under its first cell or left of it (areLabelRows)', () => {
    const head = rowOf(line(0, [['Name', 50, 90], ['', 200, 201]]));
    expect(areLabelRows(head, rowsOf([fragment('Address', 50, 100, 14), fragment('Phone', 50, 90, 28)]))).to.be.true();
    expect(areLabelRows(head, rowsOf([fragment('Address', 50, 100, 14), fragment('Phone', 70, 110, 28)]))).to.be.false();
  });

  it('columns are x ranges the fuller rows cover, split by empty gutters (columnsOf)', () => {
    expect(columnsOf(rowsOf(table(3))).map((c) => c.x0)).to.equal([50, 200, 350]);
  });

  it('rows whose fragments line up in columns are a table, with its header and body cells (findTables, buildTable)', () => {
    const rows = rowsOf([...prose(2, 50, 450, 50), ...table(3)]);
    const found = findTables(rows, 10);
    expect(found).to.have.length(1);
    expect([found[0]!.start, found[0]!.end]).to.equal([2, 5]);
    expect(cellTexts(buildTable(rows.slice(2, 6), found[0]!.columns))).to.equal([
      ['Region', 'Sites', 'Share'], ['Area 1', '10', '0%'], ['Area 2', '11', '1%'], ['Area 3', '12', '2%'],
    ]);
  });

  it('a header cell spanning columns over cells of its own makes two header rows, the cells beside it spanning both (cellsOfRows: twoLevelHeader)', () => {
    const columns = [{ x0: 50, x1: 90 }, { x0: 100, x1: 140 }, { x0: 150, x1: 190 }];
    const header = [rowOf(line(100, [['Name', 50, 80], ['Sales', 100, 190]])), rowOf(line(112, [['2023', 100, 130], ['2024', 150, 180]]))];
    const body = [rowOf(line(130, [['Oak', 49, 70], ['12', 100, 110], ['7', 150, 160]]))];
    const rows = cellsOfRows([header, body], columns);
    expect(cellTexts(rows)).to.equal([['Name', 'Sales'], ['2023', '2024'], ['Oak', '12', '7']]);
    expect(rows.map((r) => r.map((c) => [c.colspan, c.rowspan]))).to.equal([[[1, 2], [2, 1]], [[1, 1], [1, 1]], [[1, 1], [1, 1], [1, 1]]]);
  });

  it('a table row at the top of the next column, its cells starting where the last row\'s do, is moved under that row; a line of prose there stays (joinRowsAcrossColumnBreaks)', () => {
    const left = [...line(600, [['Name', 50, 80], ['Sites', 120, 150], ['Share', 200, 230]]), ...line(614, [['Ash', 50, 70], ['7', 120, 125], ['1%', 200, 210]])];
    const cut = line(100, [['Oak', 350, 370], ['12', 420, 430], ['7%', 500, 510]]);
    const after = fragment('running text after the table', 350, 550, 140);
    const [joined, rest] = joinRowsAcrossColumnBreaks([left, [...cut, after]], 10);
    const oak = joined!.find((f) => f.text === 'Oak')!;
    expect([oak.x0, oak.y0, oak.drawnAt]).to.equal([50, 628, [350, 100, 370, 110]]);
    expect(texts(joined!)).to.equal(['Name', 'Sites', 'Share', 'Ash', '7', '1%', 'Oak', '12', '7%']);
    expect(texts(rest!)).to.equal(['running text after the table']);
    const prosed = [left, [fragment('running text at the top of the next column', 350, 550, 100)]];
    expect(joinRowsAcrossColumnBreaks(prosed, 10)).to.equal(prosed);
  });

  it('a table row moved from the next column is placed a row pitch below, read from the steps into the table\'s rows higher up when its last row wraps over many lines (joinRowsAcrossColumnBreaks: movedRowStep)', () => {
    const wrapped = [620, 634, 648, 662, 676].flatMap((y) => line(y, [['cell', 50, 80], ['text', 120, 150], ['wraps', 200, 230]]));
    const left = [...line(600, [['Name', 50, 80], ['Sites', 120, 150], ['Share', 200, 230]]), ...wrapped, fragment('on', 200, 215, 690)];
    const [joined] = joinRowsAcrossColumnBreaks([left, line(100, [['Oak', 350, 370], ['12', 420, 430], ['7%', 500, 510]])], 10);
    // The last line's foot is at 700; the step into the first body row is 20 points, the wrapped lines' 14.
    expect(joined!.find((f) => f.text === 'Oak')!.y0).to.equal(710);
    expect(cellTexts(buildTable(rowsOf(joined!), columnsOf(rowsOf(joined!)))).map((r) => r[0])).to.equal(['Name', 'cell cell cell cell cell', 'Oak']);
  });

  it('a header whose corner cell is empty starts right of the rows under it: their wrapped first cells stay in the table (findTables)', () => {
    const rows = rowsOf([
      ...line(100, [['Small', 150, 180], ['Large', 250, 280]]),
      ...line(114, [['Total Applicable', 50, 130], ['669', 150, 170], ['5,796', 250, 275]]),
      ...line(128, [['Compliances', 50, 110]]),
      ...line(142, [['Compliances with', 50, 135], ['461', 150, 170], ['4,085', 250, 275]]),
      ...line(156, [['imprisonment', 50, 115]]),
    ]);
    expect(findTables(rows, 10).map((t) => [t.start, t.end])).to.equal([[0, 4]]);
  });

  it('the line step inside a cell is read from a line to the line above it in the same column, not from lines of cells set at other heights (logicalRows: stepFromAbove)', () => {
    // A header whose last cell ("Difference in the number of candidates") runs 4 pt off the sub-header beside it,
    // over rows whose first cells wrap to a second line, 14 pt down; rows are 18 pt or more apart.
    const rows = rowsOf([
      ...line(100, [['No.', 50, 70], ['Political', 80, 130], ['Official', 200, 260], ['Difference', 300, 350]]),
      ...line(114, [['party', 80, 110], ['result', 200, 240], ['in the', 300, 330]]),
      fragment('number of', 300, 345, 128), fragment('Number of', 200, 250, 132), fragment('candidates', 300, 350, 142), fragment('sangkat', 200, 240, 146),
      ...line(168, [['11', 50, 60], ['Khmer', 80, 115], ['30', 200, 210], ['-41', 300, 315]]), fragment('United Party', 80, 140, 182),
      ...line(200, [['12', 50, 60], ['Grassroots', 80, 130], ['32', 200, 210], ['+46', 300, 315]]), fragment('Democracy', 80, 135, 214),
    ]);
    expect(stepFromAbove(rows, 4)).to.equal(14); // "candidates" under "number of", not 10 under "Number of" beside it
    expect(logicalRows(rows, []).map((group) => group.length)).to.equal([6, 2, 2]);
  });

  it('label rows of a table carried into the next column are moved under it, a row step below; one short line under a header alone stays (joinRowsAcrossColumnBreaks: moveLabelRows)', () => {
    const header = [...line(500, [['Mitosis', 150, 190], ['Meiosis', 220, 260]]), ...line(514, [['(one cell)', 150, 200], ['(one cell)', 220, 270]])];
    const labels = [fragment('# chromosomes', 50, 120, 532), fragment('# DNA', 50, 80, 550), fragment('replications', 50, 110, 564)];
    const next = [fragment('purpose', 350, 390, 100),
      ...line(125, [['1.', 350, 358], ['Using your beads, strings and magnets', 362, 550]])];
    const [joined, rest] = joinRowsAcrossColumnBreaks([[...header, ...labels], next], 10);
    const purpose = joined!.find((f) => f.text === 'purpose')!;
    expect([purpose.x0, purpose.y0]).to.equal([50, 582]);
    expect(texts(rest!)).to.equal(['1.', 'Using your beads, strings and magnets']);
    const rows = rowsOf(joined!);
    const [found] = findTables(rows, 10);
    expect(cellTexts(buildTable(rows.slice(found!.start, found!.end + 1), found!.columns)).map((r) => r[0])).to.equal(['', '# chromosomes', '# DNA replications', 'purpose']);
    const note = [fragment('Source: survey', 350, 390, 100), ...prose(3, 350, 550, 125)];
    const [kept] = joinRowsAcrossColumnBreaks([header, note], 10);
    expect(texts(kept!)).to.equal(texts(header));
    // Under a header alone, two labels or more, at their own row step (18.7, wider than the header's 14).
    const cations = ['K+', 'Na+', 'Ca2+'].map((t, k) => fragment(t, 350, 370, 100 + 18.7 * k));
    const added = [...line(500, [['Added', 50, 80], ['Relative size of', 150, 230]]), ...line(514, [['cation', 50, 80], ['floccules', 150, 200]])];
    const [withLabels] = joinRowsAcrossColumnBreaks([added, cations], 10);
    const labelRows = rowsOf(withLabels!);
    const [table] = findTables(labelRows, 10);
    expect(cellTexts(buildTable(labelRows.slice(table!.start, table!.end + 1), table!.columns)).map((r) => r[0])).to.equal(['Added cation', 'K+', 'Na+', 'Ca2+']);
  });

  it('prose set with wide spaces is no table: its rows average TABLE_MAX_ROW_CHARS or more (findTables)', () => {
    const long = 'word '.repeat(90);
    const rows = rowsOf(Array.from({ length: 3 }, (_, k) => line(100 + k * 14, [[long, 50, 250], [long, 270, 450]])).flat());
    expect(findTables(rows, 10)).to.equal([]);
  });

  it('a list set in columns (every column\'s cells opening with a marker) is no table (listInColumns)', () => {
    const rows = rowsOf(Array.from({ length: 4 }, (_, k) => line(100 + k * 14, [[`${k + 1}. Chapter`, 50, 150], [`${k + 5}. Chapter`, 300, 400]])).flat());
    expect(listInColumns(rows, [{ x0: 50, x1: 150 }, { x0: 300, x1: 400 }])).to.be.true();
    expect(listInColumns(rowsOf(table(3)), [{ x0: 50, x1: 110 }, { x0: 200, x1: 240 }, { x0: 350, x1: 390 }])).to.be.false();
    expect(findTables(rows, 10)).to.equal([]);
  });
});
