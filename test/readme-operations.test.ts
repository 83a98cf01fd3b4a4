// The README's "Operations and prices" table is written by hand; the operations are declared in
// operations/. This reads both and compares them row by row: order, path, tool name, every field
// (required ones in bold), the notes beside fields (enumerations, bounds, defaults, byte limits),
// the file count of the merges, the price and its model, and the page limit. A note this test
// cannot read fails too, so the table cannot drift into claims that nothing checks.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { operations } from '../operations/index.js';
import type { FieldSpec, Operation } from '../operations/define.js';
import { IMAGE_ENCODING_FIELDS } from '../operations/image/image-plan.js';
import { MAX_SPLIT_RANGES } from '../core/page-ranges.js';
import { MAX_OCR_LANGUAGES, OCR_LANGUAGE_PACKS } from '../tools/engines/ocrmypdf.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');

interface Row { line: number; path: string; tool: string; fields: string; price: string }

/** The table under "## Operations and prices": its body rows, cells trimmed. */
function tableRows(): Row[] {
  const lines = readme.split('\n');
  const heading = lines.findIndex((l) => l.trim() === '## Operations and prices');
  if (heading < 0) throw new Error('README has no "## Operations and prices" section');
  const start = lines.findIndex((l, i) => i > heading && l.startsWith('|'));
  const rows: Row[] = [];
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const cells = lines[i].split('|').slice(1, -1).map((c) => c.trim());
    if (cells.length !== 4) throw new Error(`README line ${i + 1}: expected 4 cells, found ${cells.length}`);
    const code = (cell: string) => /^`([^`]+)`$/.exec(cell)?.[1] ?? `(not one code span: ${cell})`;
    rows.push({ line: i + 1, path: code(cells[0]), tool: code(cells[1]), fields: cells[2], price: cells[3] });
  }
  return rows;
}

interface ListedField { name: string; required: boolean; note?: string }

/** "**`width`**, `x`, `height` (at least one), shared" → names, boldness and each name's note. */
interface ListedFields {
  fields: ListedField[]; shared: boolean; files?: { min: number; max: number }; namedFile?: { name: string; formats: string[] };
}

function listedFields(cell: string): ListedFields {
  const out: ListedFields = { fields: [], shared: false };
  if (cell === '–') return out;
  // Split on commas outside parentheses.
  const items: string[] = [];
  let depth = 0, current = '';
  for (const ch of cell) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) { items.push(current.trim()); current = ''; } else current += ch;
  }
  items.push(current.trim());
  for (const item of items) {
    if (item === 'shared') { out.shared = true; continue; }
    const files = /^`file` × (\d+)–(\d+)$/.exec(item);
    if (files) { out.files = { min: Number(files[1]), max: Number(files[2]) }; continue; }
    // A second file under its own name: "`image` file (PNG, JPEG)".
    const named = /^`([a-z_]+)` file \((.+)\)$/.exec(item);
    if (named) { out.namedFile = { name: named[1], formats: named[2].split(', ') }; continue; }
    const field = /^(\*\*)?`([a-z_]+)`\1(?: \((.+)\))?$/.exec(item);
    if (!field) throw new Error(`cannot read the field item "${item}"`);
    out.fields.push({ name: field[2], required: field[1] === '**', ...(field[3] ? { note: field[3] } : {}) });
  }
  return out;
}

/** Checks one note beside a field against its declaration; returns what it could not read. */
function checkNote(op: Operation, field: FieldSpec, note: string, previous: ListedField | undefined): string | undefined {
  const where = `${op.path} "${field.name}" (${note})`;
  let m: RegExpExecArray | null;
  if (note === 'at least one') {
    // The field before it and this one: neither sent is refused, either one alone is accepted.
    expect(previous, `${where}: names no field before it`).to.exist();
    expect(op.checkFields, `${where}: the operation has no checkFields`).to.be.a.function();
    expect(previous!.required || field.required, `${where}: one of them is required anyway`).to.not.be.true();
    expect(() => op.checkFields!({}), where).to.throw();
    expect(() => op.checkFields!({ [previous!.name]: 1 }), where).to.not.throw();
    expect(() => op.checkFields!({ [field.name]: 1 }), where).to.not.throw();
    return undefined;
  }
  if ((m = /^(\d+)–(\d+), (\d+)$/.exec(note))) {
    expect(field.type, where).to.equal('integer');
    expect([Number(m[1]), Number(m[2]), Number(m[3])], `${where}: minimum, maximum, default`).to.equal(field.type === 'integer' ? [field.minimum, field.maximum, field.default] : []);
    return undefined;
  }
  if ((m = /^(\d+)–(\d+)$/.exec(note))) {
    expect(field.type, where).to.equal('integer');
    expect([Number(m[1]), Number(m[2]), undefined], `${where}: minimum, maximum, no default`).to.equal(field.type === 'integer' ? [field.minimum, field.maximum, field.default] : []);
    return undefined;
  }
  if ((m = /^≤ (\d+) characters$/.exec(note))) {
    expect<number | undefined>(Number(m[1]), `${where}: maxLength`).to.equal(field.type === 'string' ? field.maxLength : undefined);
    return undefined;
  }
  if ((m = /^(\d+)–(\d+) bytes in UTF-8$/.exec(note))) {
    expect([Number(m[1]), Number(m[2])], `${where}: minLength, maxUtf8Bytes`).to.equal(field.type === 'string' ? [field.minLength, field.maxUtf8Bytes] : []);
    return undefined;
  }
  if ((m = /^≤ (\d+) KB$/.exec(note))) {
    expect<number | undefined>(Number(m[1]) * 1024, `${where}: maxBytes`).to.equal(field.type === 'string' ? field.maxBytes : undefined);
    return undefined;
  }
  if ((m = /^JSON Schema, ≤ (\d+) KB$/.exec(note))) {
    expect<number | undefined>(Number(m[1]) * 1024, `${where}: maxBytes`).to.equal(field.type === 'string' ? field.maxBytes : undefined);
    return undefined;
  }
  if ((m = /^≤ (\d+)$/.exec(note)) && field.name === 'ranges') {
    // Not a field bound: the number of ranges the parser takes.
    expect(Number(m[1]), `${where}: MAX_SPLIT_RANGES`).to.equal(MAX_SPLIT_RANGES);
    return undefined;
  }
  if ((m = /^(.+); ≤ (\d+)$/.exec(note)) && field.name === 'languages') {
    // The installed language packs, in order, and how many one call may name.
    expect(m[1].split(', '), `${where}: the language packs`).to.equal(Object.keys(OCR_LANGUAGE_PACKS));
    expect(Number(m[2]), `${where}: MAX_OCR_LANGUAGES`).to.equal(MAX_OCR_LANGUAGES);
    return undefined;
  }
  const values = note.split(', ');
  const choices = 'enum' in field ? field.enum : undefined;
  if (choices && values.length > 1) {
    expect(values, `${where}: the enumeration, in order`).to.equal(choices.map(String));
    return undefined;
  }
  return where;
}

describe('the README operation table', () => {
  const rows = tableRows();

  it('lists every declared operation once, in the declarations\' order, with its path and tool name', () => {
    expect(rows.map((r) => r.path)).to.equal(operations.map((op) => op.path));
    expect(rows.map((r) => r.tool)).to.equal(operations.map((op) => op.tool));
    const inArea = (area: string) => operations.filter((op) => op.path.startsWith(`/v1/${area}/`)).length;
    expect(readme).to.include(`${operations.length} operations (${inArea('image')} image, ${inArea('pdf')} PDF, ${inArea('office')} Office)`);
  });

  it('names each operation\'s fields, required ones in bold, with notes that match the declarations', () => {
    const unread: string[] = [];
    for (const [i, op] of operations.entries()) {
      const row = rows[i];
      const where = `README line ${row.line} (${op.path})`;
      const listed = listedFields(row.fields);
      const names = [...listed.fields.map((f) => f.name), ...(listed.shared ? IMAGE_ENCODING_FIELDS.map((f) => f.name) : [])];
      expect(names, `${where}: fields`).to.equal(op.fields.map((f) => f.name));
      for (const [j, f] of listed.fields.entries()) {
        const field = op.fields.find((d) => d.name === f.name)!;
        expect(f.required, `${where}: "${f.name}" in bold exactly when required`).to.equal(field.required === true);
        if (f.note) {
          const notRead = checkNote(op, field, f.note, listed.fields[j - 1]);
          if (notRead) unread.push(notRead);
        }
      }
      if (listed.shared) {
        for (const f of IMAGE_ENCODING_FIELDS) expect(op.fields.find((d) => d.name === f.name), `${where}: shared field ${f.name}`).to.equal(f);
      }
      // Only the merges list the file part, with its count; from-url takes none (its url is listed);
      // every other operation takes one file.
      const unlisted = op.fields.some((f) => f.type === 'string' && f.buyerUrl) ? { min: 0, max: 0 } : { min: 1, max: 1 };
      expect(listed.files ?? unlisted, `${where}: file count`).to.equal(op.input.count);
      const named = op.input.namedFile;
      expect(listed.namedFile, `${where}: the named file`).to.equal(named ? { name: named.name, formats: named.formats.map((f) => f.toUpperCase()) } : undefined);
    }
    expect(unread, 'notes this test cannot read (teach checkNote, or reword the README)').to.equal([]);
  });

  it('gives each operation\'s price, its model and its page limit', () => {
    for (const [i, op] of operations.entries()) {
      const row = rows[i];
      const where = `README line ${row.line} (${op.path})`;
      const m = /^(\d+) (flat|\/ page)(?:, ≤ (\d+) pages)?$/.exec(row.price);
      expect(m, `${where}: cannot read the price "${row.price}"`).to.exist();
      expect(Number(m![1]), `${where}: rate`).to.equal(op.price.rate);
      expect(m![2] === 'flat' ? 'flat' : 'per-page', `${where}: model`).to.equal(op.price.model);
      expect(m![3] === undefined ? undefined : Number(m![3]), `${where}: page limit`).to.equal(op.input.maxPages);
    }
  });
});
