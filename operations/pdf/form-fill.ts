import { checkValues, parseValues, inspectForm } from '../../checks/forms.js';
import type { FillRequest } from '../../tools/engines/mupdf-js.js';
import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfFormFill = defineOperation({
  id: 'pdf.form-fill', title: 'Fill a PDF form',
  description: 'Sets form fields from a JSON object of field names (as /v1/pdf/form-fields lists them) to values, and draws each filled field\'s appearance so that every viewer shows it; with flatten, the values are drawn into the pages and no fields are left. Unknown names and values a field cannot take are refused with 422 before payment, naming them; XFA forms too.',
  category: 'pdf-processing',
  fields: [
    {
      name: 'values', type: 'string', required: true, minLength: 2, maxBytes: 1024 * 1024, secret: true,
      description: 'A JSON object: field name → a string (text fields; a radio group\'s or a choice\'s option), or true or false (checkboxes).',
      example: '{"name":"Ada Lovelace","agree":true,"country":"France"}',
    },
    { name: 'flatten', type: 'boolean', default: false, description: 'true: draw the filled form into the pages and remove its fields (as /v1/pdf/flatten).' },
  ],
  input: PDF_INPUT, price: { model: 'per-page', rate: 5000 },
  output: {
    mediaType: 'application/pdf', description: 'The PDF with the fields filled (or flattened).',
    unprocessable: 'Unsupported, corrupt or encrypted input; an XFA form (UNSUPPORTED_TYPE); or values naming fields the form lacks or values they cannot take (FIELD_INVALID, naming each).',
  },
  content: { local: true }, engines: [], timeoutMs: PDF_TIMEOUT_MS,
  plan: async ({ fields, files }): Promise<FillRequest> => {
    const values = parseValues(fields.values);
    checkValues(await inspectForm(files[0]), values);
    return { values, flatten: fields.flatten };
  },
});
