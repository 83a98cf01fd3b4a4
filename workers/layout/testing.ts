// The layout engine's rules for its unit tests (test/unit/workers/layout/), and for them alone:
// each stage's index exports only what the next stage uses, and the tests reach every rule here.
export type * from './stext.js';
export * from './fragments.js';
export * from './rows.js';
export * from './row-predicates.js';
export * from './list-markers.js';
export * from './running-text.js';
export * from './rules.js';
export * from './table-cells.js';
export * from './underlined-tables.js';
export * from './reading-regions/box.js';
export * from './reading-regions/carried-on.js';
export * from './reading-regions/gutters.js';
export * from './reading-regions/slices.js';
export * from './reading-regions/index.js';
export * from './aligned-tables/find.js';
export * from './aligned-tables/build.js';
export * from './aligned-tables/column-breaks.js';
export * from './structure.js';
export * from './convert.js';
export * from './blocks.js';
export * from './chunks.js';
export { hocrFragments, snapSizes } from './scanned.js';
