// The form operations' checks before payment: the form is read (MuPDF.js, in its own process)
// so that an XFA form is refused, and form-fill's values are checked against the fields they
// name. Every refusal is a 422 naming what is wrong; nothing is charged.
import path from 'node:path';
import { fail } from '../core/errors.js';
import type { InspectedFile } from '../operations/define.js';
import { readForm, type FieldValue, type FormField, type FormReading } from '../tools/engines/mupdf-js.js';
import { withScratch } from '../tools/process/scratch-directory.js';

/** Reading a form before payment: MuPDF opens the file and walks every page's widgets. */
export const FORM_READ_TIMEOUT_MS = 20_000;

export const FORM_BOUNDS = {
  /** Names in one `values` object. */
  values: 1000,
  /** Characters of one value. */
  valueChars: 10_000,
  /** Problems named in one refusal; the count of the rest follows. */
  named: 10,
} as const;

/** The form of the request's PDF; an XFA form is refused. */
export async function inspectForm(file: InspectedFile | undefined): Promise<FormReading> {
  if (file?.kind !== 'pdf') throw new Error('the form operations take one PDF');
  const form = await withScratch(path.dirname(file.path), (dir) => readForm(file.path, { cwd: dir, timeoutMs: FORM_READ_TIMEOUT_MS }));
  if (form.xfa) {
    fail('UNSUPPORTED_TYPE', 'the PDF holds an XFA form (an XML form its viewer builds and draws itself); XFA forms are not read, filled or '
    + 'flattened: save it as a PDF with AcroForm fields (Acrobat: print to PDF, or save as a static form) and send it again', { field: 'file' });
  }
  return form;
}

/** The `values` field: a JSON object of field names to strings (text, radio, choice) and booleans (checkboxes). */
export function parseValues(json: string): Record<string, FieldValue> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    fail('FIELD_INVALID', 'values must be a JSON object of field names to values; it is not valid JSON', { field: 'values' });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    fail('FIELD_INVALID', 'values must be a JSON object of field names to values, such as {"name": "Ada", "agree": true}', { field: 'values' });
  }
  const entries = Object.entries(parsed);
  if (entries.length === 0) fail('FIELD_INVALID', 'values names no field', { field: 'values' });
  if (entries.length > FORM_BOUNDS.values) fail('FIELD_INVALID', `values names ${entries.length} fields; at most ${FORM_BOUNDS.values} are taken`, { field: 'values' });
  for (const [name, value] of entries) {
    if (typeof value !== 'string' && typeof value !== 'boolean') {
      fail('FIELD_INVALID', `values: ${JSON.stringify(name)} must be a string, or true or false for a checkbox`, { field: 'values' });
    }
    if (typeof value === 'string' && value.length > FORM_BOUNDS.valueChars) {
      fail('FIELD_INVALID', `values: ${JSON.stringify(name)} is ${value.length} characters long; at most ${FORM_BOUNDS.valueChars} are taken`, { field: 'values' });
    }
  }
  return parsed as Record<string, FieldValue>;
}

const quoted = (options: readonly string[]) => options.map((o) => JSON.stringify(o)).join(', ');

/** Why the field cannot take the value; undefined when it can. */
function problemWith(field: FormField, value: FieldValue): string | undefined {
  const name = JSON.stringify(field.name);
  switch (field.type) {
    case 'text':
      if (typeof value !== 'string') return `${name} is a text field: its value is a string`;
      if (field.maxLength !== null && [...value].length > field.maxLength) return `${name} takes at most ${field.maxLength} characters`;
      return undefined;
    case 'checkbox':
      return typeof value === 'boolean' ? undefined : `${name} is a checkbox: its value is true or false`;
    case 'radio':
      return typeof value === 'string' && field.options.includes(value) ? undefined : `${name} is a radio group: its value is one of ${quoted(field.options)}`;
    case 'choice':
      if (typeof value !== 'string') return `${name} is a choice: its value is one of ${quoted(field.options)}`;
      return field.editable || field.options.includes(value) || (field.labels ?? []).includes(value)
        ? undefined : `${name} is a choice: its value is one of ${quoted(field.options)}`;
    case 'signature':
      return `${name} is a signature field: it is signed, not filled`;
    case 'button':
      return `${name} is a push button: it holds no value`;
  }
}

/** Refuses, naming them, the names the form does not hold and the values their fields cannot take. */
export function checkValues(form: FormReading, values: Record<string, FieldValue>): void {
  const fields = new Map(form.fields.map((field) => [field.name, field]));
  const problems: string[] = [];
  const unknown = Object.keys(values).filter((name) => !fields.has(name));
  if (unknown.length > 0) {
    const named = unknown.slice(0, FORM_BOUNDS.named).map((n) => JSON.stringify(n)).join(', ');
    const more = unknown.length > FORM_BOUNDS.named ? ` and ${unknown.length - FORM_BOUNDS.named} more` : '';
    problems.push(`the form has no field named ${named}${more} (its fields: /v1/pdf/form-fields)`);
  }
  const bad = Object.entries(values).flatMap(([name, value]) => {
    const field = fields.get(name);
    const problem = field && problemWith(field, value);
    return problem ? [problem] : [];
  });
  problems.push(...bad.slice(0, FORM_BOUNDS.named));
  if (bad.length > FORM_BOUNDS.named) problems.push(`${bad.length - FORM_BOUNDS.named} more values their fields cannot take`);
  if (problems.length > 0) fail('FIELD_INVALID', `values: ${problems.join('; ')}`, { field: 'values' });
}
