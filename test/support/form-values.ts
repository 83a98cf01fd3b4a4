// Values that /v1/pdf/form-fill takes for a given file, as a buyer finds them: the file's form read
// by form-fields first, then its first field that can hold a value given one. Corpus runs use it so
// that form-fill fills the files that hold a form instead of being refused on every file.
import type { FormField } from '../../tools/engines/mupdf-js.js';
import { runOperation } from './jobs.js';

/** A name no corpus form has: the values sent for a file without a fillable field (a clean 422 before payment). */
export const UNKNOWN_FIELD_VALUES = '{"robustness":"x"}';

function valueFor(field: FormField): string | boolean | undefined {
  if (field.readOnly) return undefined;
  if (field.type === 'text') return field.maxLength === null || field.maxLength >= 6 ? 'Robust' : 'R';
  if (field.type === 'checkbox') return true;
  if (field.type === 'radio' || field.type === 'choice') return field.options[0];
  return undefined;
}

/** The `values` field for form-fill on this file: one field of its form set, or UNKNOWN_FIELD_VALUES. */
export async function fillValuesFor(pdf: Uint8Array): Promise<string> {
  const read = await runOperation('pdf.form-fields', [pdf], {}, { timeoutMs: 60_000 });
  if (!read.output) return UNKNOWN_FIELD_VALUES;
  const { fields } = JSON.parse(Buffer.from(read.output.body).toString('utf8')) as { fields: FormField[] };
  for (const field of fields) {
    const value = valueFor(field);
    if (value !== undefined) return JSON.stringify({ [field.name]: value });
  }
  return UNKNOWN_FIELD_VALUES;
}
