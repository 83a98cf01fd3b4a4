// Every threshold of the layout engine, with the reason for its value, grouped by the rule that
// uses it (and the file where that rule lives). Lengths are in PDF points unless a name says
// otherwise: `_EM` multiplies a type size (the fragment's, the line's or the body text's, as the
// comment says), `_SHARE` is a fraction of a count or a width, `_LINES` multiplies a line step.
// The values were tuned on the Markdown benchmark's tuning styles (bench/markdown/pages.ts) and
// the corpus tests; its held-out styles are kept aside to show whether a value holds on layouts it
// was not fitted to. Changing one changes output: run bench/layout-compare.ts before and after.
// Not here, being no layout rules: how much OCR a call may spend (scanned.ts) and how many pages
// one mutool run reads (index.ts).

// ── Fragments: glyph runs cut into fragments at cell gaps (fragments.ts) ──────────────────────

/**
 * A gap between glyphs wider than this share of the larger type size parts two fragments, typed
 * space or not: wider than any justified word space, narrower than the padding of a table cell
 * or a column gutter.
 */
export const CELL_GAP_EM = 0.95;
/**
 * A gap of this share of an em with no typed space in it (or only a wide synthetic one) parts two
 * fragments: mupdf fills a positioning gap without a space glyph, which is how cell padding is set.
 */
export const UNSPACED_GAP_EM = 0.5;
/** A synthetic space wider than this share of an em may be a cell gap (a typed space is at most a third of an em). */
export const WIDE_SPACE_EM = 0.45;
/** ... when it is also this many times wider than the fragment's mean glyph so far (typed spaces are narrower than letters). */
export const WIDE_SPACE_OVER_GLYPHS = 1.1;
/**
 * A synthetic space wider than this share of an em parts two cells even between wide letters: a
 * header in capitals at 13 pt, its cells a 9 pt padding apart, hid its gaps from the glyph test.
 */
export const WIDE_SPACE_ALWAYS_EM = 0.6;
/** A glyph this far left of the one before (in ems) starts a new fragment: text set elsewhere on the line, not the next letter. */
export const BACKWARD_JUMP_EM = 1.5;
/** A glyph this far (in ems) above or below the fragment's box belongs to another line. */
export const OFF_LINE_EM = 0.5;
/** A vertical rule this close to a gap's ends still runs between the two glyphs (a column border drawn on the padding). */
export const RULE_IN_GAP_PT = 1;
/** A gap wider than this share of an em between glyphs reads as a word space even without a space glyph (kerned PDFs omit them). */
export const WORD_GAP_EM = 0.22;
/** A glyph narrower than this is an extra character of the ligature before it (mupdf gives them no width). */
export const ZERO_WIDTH_PT = 0.01;
/**
 * A fragment's type size is the most common among its glyphs, counted in steps of 1/this of a point:
 * sizes a rounding apart (10 and 10.02 pt) are one size, 9.5 and 10 are not.
 */
export const SIZE_STEPS_PER_PT = 2;
/** A fragment is bold, italic or monospaced when more than this share of its glyphs are. */
export const STYLED_SHARE = 0.6;

// ── Rows: fragments on one line (rows.ts) ─────────────────────────────────────────────────────

/**
 * A fragment joins a row when its vertical centre lies inside the row's band less this share of the
 * band's height at top and bottom: a superscript or a taller cell stays, the next line does not.
 */
export const ROW_CENTRE_MARGIN_SHARE = 0.15;
/** Fragments of one row may overlap by this much (kerning, rounding) and still be side by side. */
export const ROW_OVERLAP_PT = 1;

// ── List markers (list-markers.ts) ────────────────────────────────────────────────────────────

/**
 * A bullet or number alone before a gap of at most this many ems (its own size) belongs to the
 * text after it; further off, it is a table cell.
 */
export const MARKER_GAP_EM = 4;

// ── Running heads and feet (running-text.ts) ──────────────────────────────────────────────────

/** Running heads and feet sit in the top and bottom tenth of a page. */
export const RUNNING_ZONE_SHARE = 0.1;
/** ... set apart from the body by a gap of more than this many line heights (the row's own size). */
export const RUNNING_GAP_EM = 1.2;
/** A lone page number may sit further in (TeX leaves a deep bottom margin): in the page's outer fifth. */
export const PAGE_NUMBER_ZONE_SHARE = 0.2;
/** Running text is short: a title, a chapter, a page number; a longer row is content. */
export const RUNNING_MAX_CHARS = 80;
/**
 * On a one-page document nothing repeats: a row there goes only when it is set smaller than
 * this share of the body size, so a letter's first line or a body-size title stays.
 */
export const SMALLER_THAN_BODY_SHARE = 0.92;

// ── Body size and blocks: paragraphs, headings, lists, code (structure.ts) ────────────────────

/** The body size of a document with no text at all (no size to measure): a common text size. */
export const DEFAULT_BODY_SIZE = 10;
/** Two type sizes closer than this are one size (mupdf's sizes differ by rounding and scaling). */
export const SAME_SIZE_PT = 0.6;
/** A change of type size larger than this between two lines breaks a paragraph (and ends a table's label rows). */
export const SIZE_CHANGE_PT = 0.9;
/** Steps between body lines shorter than this many ems (body size) are not line steps: superscripts, split rows. */
export const LINE_STEP_MIN_EM = 0.8;
/**
 * The usual line step is this quantile of the body lines' steps: low enough to skip the
 * paragraph gaps among them, high enough to skip the odd tight pair.
 */
export const LINE_STEP_QUANTILE = 0.3;
/** The line step of a region with no two body lines in a row: the usual leading, 1.25 times the body size. */
export const DEFAULT_LINE_STEP_EM = 1.25;
/** A step of more than this many usual line steps between baselines breaks a paragraph (a blank line's worth, less some). */
export const PARAGRAPH_STEP_LINES = 1.3;
/** ... or of more than this many ems of the line above (large type has large steps of its own). */
export const PARAGRAPH_STEP_EM = 1.5;
/**
 * ... or a white gap between two lines of more than this many ems: a paragraph's spacing. The em
 * is the body size, or the lines' own size when both are set in one larger size (gapSizeOf): a
 * title of 20 to 24 pt wrapped over lines 1.15 apart leaves white gaps of 8 to 10 pt between
 * them, as wide as a paragraph gap of 10 pt body text, while two headings stacked one above the
 * other stand apart by their margins as well (more than this many of their own ems).
 */
export const PARAGRAPH_GAP_EM = 0.9;
/**
 * A line indented more than this many ems (body size) from the region's left edge, under a line
 * that ended at least PARAGRAPH_SHORT_LINE_EM short of it, opens a paragraph (a first-line indent).
 */
export const PARAGRAPH_INDENT_EM = 1.2;
export const PARAGRAPH_SHORT_LINE_EM = 4;
/** A line starting within this of the region's left edge is at the margin: the end of any list. */
export const AT_MARGIN_PT = 2;
/**
 * Type at least this many times the body size is large: a heading (and never a list item); a line
 * of it alone in a band of a two-column group, or alone on the left with white beside it, is a
 * heading across the columns (reading-regions.ts, headingAcrossColumns, headingsShortOfGutter); a
 * row of it is never running text (running-text.ts, isLargeRow).
 */
export const LARGE_TYPE_SHARE = 1.12;
/** A heading is shorter than this; a longer block in large type is a pull quote or a lead paragraph. */
export const HEADING_MAX_CHARS = 250;
/** A bold body-size heading is at most this many lines ... */
export const BOLD_HEADING_MAX_LINES = 2;
/** ... and this many characters (a bold lead-in sentence is longer). */
export const BOLD_HEADING_MAX_CHARS = 120;
/** Headings within this of each other's size share a level. */
export const SAME_HEADING_SIZE_PT = 0.8;
/** Markdown has six heading levels. */
export const DEEPEST_HEADING = 6;
/** Monospaced lines further apart than this many ems (body size) are two code blocks. */
export const CODE_GAP_EM = 1.6;
/** The advance of a monospaced glyph as a share of its size, when mupdf gives no widths to measure. */
export const MONO_ADVANCE_EM = 0.6;
/** List markers within this of each other's x are one nesting level (markers align, within rounding). */
export const NEST_STEP_PT = 3;
/** A line indented past its item's marker by more than this continues the item. */
export const ITEM_INDENT_PT = 2;

/**
 * A chart's text (structure.ts, isChartText): a run of at least this many lines holding only
 * numbers (an axis has three ticks or more) ...
 */
export const FIGURE_MIN_LABEL_ROWS = 3;
/**
 * ... of which at least this share are a single number alone on the line (an axis tick, a value
 * over one bar): a table of numbers has a cell in each column on every row, so none of its rows
 * is one number alone, unless it has one column (and then it is no table).
 */
export const FIGURE_LONE_LABEL_SHARE = 0.4;

// ── Reading order: bands, columns and gutters (reading-regions.ts) ────────────────────────────

/**
 * A short fragment: narrower than this share of the region's width. Table cells, labels and list
 * entries are short; a line of running text fills most of its column, so at least this share of
 * a two-column region. Short fragments may cross a gutter (cells spilling from a table too wide for
 * its column) without hiding it.
 */
export const SHORT_FRAGMENT_SHARE = 0.3;
/** A side of a cut narrower than this share of the region holds no column of text. */
export const MIN_SIDE_SHARE = 0.3;
/** A line of running text: a fragment across more than this share of its side's width (a table row is several cells). */
export const FULL_LINE_SHARE = 0.7;
/** Columns are looked for only in a region at least this share of the page wide (a column is not split again). */
export const MIN_COLUMNS_WIDTH_SHARE = 0.45;
/** Fewer fragments than this show no columns (unless drawn tables, one fragment each, are among them). */
export const MIN_COLUMN_FRAGMENTS = 6;
/** A gutter is an empty strip at least this wide: narrower gaps are word spaces and cell padding. */
export const MIN_GUTTER_PT = 6;
/** A gutter's middle lies between these shares of the region's width: strips near an edge are margins and indents. */
export const GUTTER_FROM_SHARE = 0.25;
export const GUTTER_TO_SHARE = 0.75;
/** The strips nearest the middle that are tried as gutters, at most. */
export const GUTTER_CANDIDATES = 3;
/** A side of running text has at least this many rows (fewer tell nothing). */
export const MIN_SIDE_ROWS = 3;
/** Below the whole page: one side's rows are mostly lines (at least this share) ... */
export const COLUMN_FILL_SHARE = 0.4;
/** ... and the other side's at least this share (a column may hold a table under its text). */
export const OTHER_COLUMN_FILL_SHARE = 0.2;
/** Across the whole page: at least this many full lines on one side, and one on the other. */
export const WHOLE_PAGE_PROSE_LINES = 3;
/**
 * A gutter may be crossed by continuing cells of a table spilling from the left column: this share
 * of the fragments, at least SPILL_CROSSING_MIN.
 */
export const SPILL_CROSSING_SHARE = 0.08;
export const SPILL_CROSSING_MIN = 2;
/** The fragments of one row share a baseline within this (rounding of glyph boxes). */
export const SAME_BASELINE_PT = 0.75;
/** A table row overruns its column when it ends, or a cell starts, this far past the column's text. */
export const OVERRUN_PT = 1;
/** Two parts of one drawn table carried on into the next column are as wide within this many points (their rules drawn alike). */
export const SAME_TABLE_WIDTH_PT = 2.5;
/** Cuts are nested at most this deep: enough for columns inside bands inside columns; a hostile page stays bounded. */
export const MAX_CUT_DEPTH = 4;
/**
 * A heading set across both columns but ending short of the gutter has white beside it in the
 * right column over its own height and this many of its ems above and below (a paragraph break
 * in a column beside a heading inside the other column is narrower).
 */
export const ACROSS_HEADING_CLEAR_EM = 0.5;
/** Two fragments are in one band when the lower starts at most this far below the band's bottom. */
export const BAND_GAP_PT = 0.5;
/** A band is two-sided when its fragments stay this far clear of the region's middle on either side. */
export const MIDDLE_CLEARANCE_PT = 3;
/**
 * Two columns of short lines (a list of contents) keep baselines of their own: at most this share
 * of the shorter side's lines lie within SHARED_BASELINE_PT of one on the other side, where a
 * table's cells open each row on one baseline across its columns.
 */
export const LINES_APART_SHARE = 0.2;
export const SHARED_BASELINE_PT = 1;
/**
 * A table set in a column beside a column of running text: at least this share of its side's
 * rows are rows of cells ...
 */
export const TABLE_SIDE_SHARE = 0.5;
/**
 * ... and at most this share of them lie on a baseline of the text (within SHARED_BASELINE_PT): a
 * table's own gutter has each row's cells on one baseline.
 */
export const TABLE_SIDE_SHARED_SHARE = 0.5;
/** A table carried on into the next column: each side has at least this many rows ... */
export const CARRIED_MIN_ROWS = 4;
/** ... the two columns start within this many line heights of each other (both filled from the top) ... */
export const CARRIED_TOP_LINES = 2;
/**
 * ... each side opens its rows (lines starting within COLUMN_START_PT of its first column) off the
 * other's baselines (within OWN_BASELINE_PT), at least this share of them ...
 */
export const CARRIED_OWN_ROWS_SHARE = 0.7;
export const COLUMN_START_PT = 2;
export const OWN_BASELINE_PT = 0.3;
/** ... and at least this share of the right side's cell starts are the left side's moved by one pitch ... */
export const CARRIED_MOVED_SHARE = 0.6;
/** ... a pitch between these shares of the page width (the column pitch of a two-column page). */
export const COLUMN_PITCH_MIN_SHARE = 0.35;
export const COLUMN_PITCH_MAX_SHARE = 0.55;
/** A table carried on whose last columns overrun the next column's part: at least this many of its rows run on past that part's edge. */
export const OVERRUN_MIN_ROWS = 2;
/**
 * A table ruled under its rows carried on into the next column over its own overrun: at least this
 * many of its rules are another's moved by the column pitch.
 */
export const CARRIED_RULES_MIN = 2;
/**
 * A right column's left edge that lines of the left column run over (contents lines whose dot
 * leaders, or words, overflow a narrow column): at least this many fragments start within
 * EDGE_ALIGN_PT of one point in the middle of the region ...
 */
export const EDGE_MIN_FRAGMENTS = 5;
export const EDGE_ALIGN_PT = 1;
/** ... which opens at least this share of the rows on its right (a column's lines start at its edge; a table's cells do not all) ... */
export const EDGE_OPENS_SHARE = 0.6;
/**
 * ... and at most this share of the rows left of it run over it (lines across the page, as in a
 * letter beside an address block, are no column's overflow).
 */
export const EDGE_CROSSING_SHARE = 0.25;

// ── Borderless tables from alignment (aligned-tables.ts) ──────────────────────────────────────

/** A region wider than this (in points) is not scanned for table gutters: no page is, a hostile one may claim to be. */
export const MAX_SCAN_WIDTH_PT = 5000;
/** A table's gutter may be crossed by this share of its rows (cells spanning columns). */
export const GUTTER_CROSSING_SHARE = 0.12;
/** A gutter between table columns is at least this wide; a narrower dip is inside a column. */
export const MIN_TABLE_GUTTER_PT = 4;
/** Single lines between cell rows stay in the table while the white gap above each is at most this many ems (body size). */
export const TABLE_LINE_GAP_EM = 1.2;
/** A single line indented more than this many ems (body size) past the table's left edge is wrapped cell text. */
export const WRAPPED_INDENT_EM = 0.8;
/** A single line wider than this share of the table so far is running text, not a short cell. */
export const TABLE_LONG_LINE_SHARE = 0.5;
/** Cell rows further apart than this many ems (body size) are two tables (or a table and a row of other text). */
export const TABLE_ROW_GAP_EM = 2.2;
/** After the last cell row, a line follows the table while its step is at most this many row pitches, plus TABLE_PITCH_SLACK_PT ... */
export const TABLE_PITCH_LINES = 1.15;
export const TABLE_PITCH_SLACK_PT = 1;
/** ... or this many ems of its own size (a table with tight rows) ... */
export const TABLE_STEP_EM = 1.9;
/** ... or, with only a header to go by, this many ems: a line and its padding. */
export const HEADER_STEP_EM = 2.5;
/** A line starting within this of a column's left edge starts in that column. */
export const COLUMN_EDGE_PT = 1.5;
/** A fragment may overrun a column edge by this many ems (body size) and still sit inside its column. */
export const FITS_COLUMN_EM = 0.3;
/** Rows averaging this many characters or more are prose set with wide spaces, not a table. */
export const TABLE_MAX_ROW_CHARS = 400;
/**
 * A borderless table has cells aligned over several rows: at least this many of its columns
 * open a cell on two rows or more (cellsAlignOverRows). A chart's labels, or a running head
 * beside a caption, share a line or two without any column holding two of them; a form whose
 * cells right of its labels are empty has only its label column filled, so one is enough.
 */
export const TABLE_ALIGNED_COLUMNS = 1;
/**
 * Two columns of prose are no table (proseInColumns): in every column at least PROSE_COLUMN_SHARE
 * of the fragments are lines of PROSE_LINE_MIN_WORDS words or more. A table's cells are mostly
 * names, numbers and marks in one column at least; a line of running text in a column holds
 * five words and more.
 */
export const PROSE_LINE_MIN_WORDS = 5;
export const PROSE_COLUMN_SHARE = 0.6;
/** A fragment opens a column's cell when it starts at most this far left of the column. */
export const CELL_START_PT = 2;
/** A fragment reaches into a further column when it ends this far past that column's start. */
export const CELL_REACH_PT = 1;
/** A fragment under a spanning header cell belongs to the lower header row when it starts this close below the spanning cell's bottom. */
export const UNDER_HEADER_PT = 0.5;
/** A visual row is a line of a table's text when its step is at least this many ems of its size (centred cells step less). */
export const TABLE_LINE_STEP_EM = 0.9;
/** Steps more than this many times the line step inside a cell, plus ROW_STEP_SLACK_PT, are steps between rows. */
export const ROW_STEP_LINES = 1.12;
export const ROW_STEP_SLACK_PT = 0.5;
/** Evenly spaced lines are looked at as one row whose cells wrap only from this many lines. */
export const WRAPPED_ROW_MIN_LINES = 3;
/** Multi-level headers are looked for in a table's first rows, at most this many. */
export const MAX_HEADER_ROWS = 4;
/** A row cut by a column break: the next column starts at least this share of the column's width to the right. */
export const NEXT_COLUMN_SHARE = 0.3;
/** A table row across a column break has at least this many fragments (a line of prose has one). */
export const CUT_ROW_MIN_FRAGMENTS = 3;
/**
 * A form table cut by a break (labels in its first column, the cells beside them left empty to
 * fill in) shows itself by this many label rows at its foot; a line after the break as narrow as
 * its labels is its last label.
 */
export const CUT_LABEL_MIN_ROWS = 2;
/** Cell starts match across a column break within this. */
export const CELL_ALIGN_PT = 2;
/** Wrapped lines of a moved row follow it while the white gap above each is at most this many ems of its size. */
export const WRAPPED_GAP_EM = 1.2;
/** Rows of a cut table are placed this many of the table's last row's heights below it, at least. */
export const MOVED_ROW_STEP_LINES = 1.3;
/**
 * ... or at the widest of the steps into the table's last this many rows (a step between two lines
 * of one wrapped row is narrower than a row's).
 */
export const MOVED_ROW_STEPS_SEEN = 3;
/** The last table row of a column is looked for at most this many rows up (a hostile page stays bounded). */
export const MAX_ROWS_UP = 40;
/**
 * A table's header alone at the foot of a column takes at least this many label rows from the top
 * of the next (one short line there is more likely a note).
 */
export const LABEL_ROWS_UNDER_HEADER = 2;

// ── Drawn rules and ruled tables (rules.ts, underlined-tables.ts) ─────────────────────────────

/** A drawn box at most this thick (and longer than that) is a rule: borders and underlines are thin. */
export const RULE_THICKNESS_PT = 3;
/** Rules whose ends or positions are this close touch: borders are drawn cell by cell, and joins are not exact. */
export const RULE_JOIN_PT = 2;
/** Collinear rule segments are on one line when their positions differ by at most this. */
export const COLLINEAR_PT = 1;
/** Column rules running past the first or last row rule by more than this leave the grid open: a row cut by a break. */
export const OPEN_GRID_PT = 3;
/** Grids with more rule pairs than this are not examined: no table has a million crossings, a hostile page may. */
export const MAX_RULE_PAIRS = 1_000_000;
/** A drawn table's own rules lie within this of its box; the rules outside may underline a table without a grid. */
export const OWN_RULE_PT = 2;
/** Rules shorter than this are underlined words or marks, not the width of a table. */
export const MIN_TABLE_RULE_PT = 36;
/** How far two rules' ends may differ and still be one table's width (border joins, rounding). */
export const SAME_RULE_END_PT = 2.5;
/** The widest gap cell padding plus line spacing leaves inside an underlined table: this many ems (the line's size). */
export const TIGHT_GAP_EM = 0.8;
/**
 * Without a header row above the first rule, a stack of underlines is a table only from this many
 * rules (a top border, the rule under the header, the rule at the foot), and a one-column stack
 * too (a list boxed by lines): a single rule under a line is an underline or a separator, and two
 * rules around a paragraph are more likely a frame.
 */
export const MIN_RULES_WITHOUT_HEADER = 3;
/**
 * A table ruled under its rows is known to be a table from its rules, and its fragments were parted
 * at cell gaps already (UNSPACED_GAP_EM): a strip this many ems wide (the rows' type size) between
 * them is a column gutter, however much narrower than a borderless table's (MIN_TABLE_GUTTER_PT)
 * small type's padding is. The strip is counted in whole points, which lose up to two of a gap's.
 */
export const RULED_GUTTER_EM = 0.3;
/** A header line sits on or above the first rule, within this. */
export const ON_RULE_PT = 1;
/** A fragment starts in a column when it starts at most this far left of it. */
export const IN_COLUMN_PT = 2;
/** Room for a word at a line end: the word's width plus this many ems of space ... */
export const WORD_SPACE_EM = 0.25;
/** ... short of the column's widest line by this much. */
export const LINE_END_SLACK_PT = 2;
/**
 * A fragment is no cell when it runs across the starts of this many other fragments by CROSSED_START_PT:
 * the rules reach into the next column.
 */
export const CROSSED_STARTS = 2;
export const CROSSED_START_PT = 2;

// ── Table titles (tables.ts) ───────────────────────────────────────────────────────────────

/** A paragraph above a table is its caption ("Table 3: Results") only when at most this long. */
export const TABLE_CAPTION_MAX_CHARS = 300;

// ── Blocks with their places: figures and captions (blocks.ts) ────────────────────────────────

/**
 * A paragraph that names a figure or table ("Figure 3: Yields") is its caption only when at most
 * this long: a caption runs to a few sentences.
 */
export const CAPTION_MAX_CHARS = 600;
/** A drawn image narrower or shorter than this (half an inch) is a bullet, a rule or an icon, not a figure. */
export const FIGURE_MIN_SIDE_PT = 36;
/** Images closer than this are one figure: a picture drawn in strips or tiles. */
export const FIGURE_JOIN_PT = 1;
/** An image covering this share of a page with a text layer is its background (a letterhead, a watermark), not a figure. */
export const FIGURE_BACKGROUND_SHARE = 0.6;

// ── Scanned pages: text layers too thin to read, and OCR lines (convert.ts, scanned.ts) ───────

/**
 * A page whose text layer is this thin (fewer visible characters, the same bound as extract's
 * likelyScanned) and which images cover at least IMAGE_COVER_SCANNED of is read as a scan: the
 * few characters are a stamp or a page number laid over the picture of the text.
 */
export const THIN_TEXT_CHARS = 16;
export const IMAGE_COVER_SCANNED = 0.5;
/** A text layer with more than this share of unmapped glyphs (U+FFFD, private use, controls) is unreadable: the page needs OCR. */
export const UNMAPPED_SHARE = 0.3;
/**
 * Sizes tesseract estimates within this ratio of one another are one type size: its estimate
 * jitters by a few percent from line to line (a 17 pt heading read as 16.6 pt here, 17.6 pt
 * there), while the steps of a document's type scale are 10 % and more.
 */
export const OCR_SAME_SIZE_RATIO = 1.08;
/** Words without a letter or digit that tesseract itself doubts (confidence below this) are specks and picture edges. */
export const OCR_NOISE_CONFIDENCE = 50;
/**
 * A gap between OCR words wider than this share of the type size splits a line into fragments, as
 * CELL_GAP_EM does for a text layer: tesseract often runs one line across a column gutter or
 * across the cells of a table, and the layout engine needs the fragments to find either.
 */
export const OCR_WIDE_GAP_EM = 0.95;
/** Cap height (and ascender height) as a share of the type size, about the same in common text faces. */
export const OCR_ASCENT_SHARE = 0.74;
