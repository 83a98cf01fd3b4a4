// Tables without ruling lines, found from column alignment: runs of rows whose fragments line up in
// columns split by empty gutters (find.ts), built into cells (build.ts, with table-cells.ts), and
// table rows cut by a column break joined again (column-breaks.ts). Tables drawn with rules are
// found in rules.ts and underlined-tables.ts. What the next stages use:
export { findTables, type TableFound } from './find.js';
export { buildTable } from './build.js';
export { joinRowsAcrossColumnBreaks } from './column-breaks.js';
