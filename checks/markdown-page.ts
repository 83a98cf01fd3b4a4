// The page /v1/pdf/from-markdown typesets on, declared once: the print stylesheet
// (workers/pdf/markdown-html.ts) is built from these figures, and the layout estimate
// (markdown-estimate.ts) derives from the same figures how many characters fit on a line.

/** A run of more characters than this without a space gets break opportunities (workers/pdf/markdown-html.ts). */
export const RUN_LIMIT = 32;
/** Within such a run, a break opportunity every this many characters after the first. */
export const RUN_STEP = 16;
/** A text node the renderer lays out is cut at its next space or break opportunity past this many characters. */
export const BOX_LIMIT = 256;

/** The page, its type and its boxes, as the print stylesheet sets them. */
export const MARKDOWN_PAGE = {
  size: 'A4',
  widthMm: 210,
  marginMm: { top: 20, side: 18, bottom: 22 },
  /** DejaVu Sans, running text. */
  bodyFontPt: 10,
  /** DejaVu Sans Mono, code spans and blocks. */
  codeFontPt: 8.5,
  /** A code block's padding inside its rule. */
  codePaddingPt: { vertical: 5, horizontal: 7 },
  /** A table cell's padding inside its rules. */
  cellPaddingPt: { vertical: 2.5, horizontal: 5 },
  /** Code blocks and table cells are drawn in rules this wide. */
  ruleWidthPt: 0.5,
} as const;

const POINTS_PER_MM = 72 / 25.4;
// DejaVu Sans Mono advances every character 1233/2048 em; DejaVu Sans about 0.55 em on average in running text.
const MONO_ADVANCE_EM = 1233 / 2048;
const SANS_AVERAGE_ADVANCE_EM = 0.55;

const page = MARKDOWN_PAGE;
/** The width of the text, in whole points: the page less its side margins (493 pt on A4 less 18 mm each side). */
export const TEXT_WIDTH_PT = Math.floor((page.widthMm - 2 * page.marginMm.side) * POINTS_PER_MM);
/** A character of running text, in whole points, rounded up (5.5 pt on average at 10 pt: 6). */
export const ADVANCE_PT = Math.ceil(page.bodyFontPt * SANS_AVERAGE_ADVANCE_EM);
/** Characters of running text on a line. */
export const CHARS_PER_LINE = Math.floor(TEXT_WIDTH_PT / ADVANCE_PT);
/** Characters of a code block on a line: the text width less the block's padding and rules, in monospace advances. */
export const CODE_CHARS_PER_LINE = Math.floor(
  (TEXT_WIDTH_PT - 2 * (page.codePaddingPt.horizontal + page.ruleWidthPt)) / (page.codeFontPt * MONO_ADVANCE_EM));
/** What a table cell's text is narrower than its column: the padding on both sides and one rule (collapsed borders share theirs). */
export const CELL_INSET_PT = 2 * page.cellPaddingPt.horizontal + page.ruleWidthPt;
