import { inspectForm } from '../../checks/forms.js';
import { FORM_FIELD_TYPES, type FormReading } from '../../tools/engines/mupdf-js.js';
import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

const RECT = {
  type: 'array', items: { type: 'number' }, minItems: 4, maxItems: 4,
  description: '[x, y, width, height] in points from the top-left corner of the page as displayed (its rotation and CropBox applied).',
};

/** The answer's schema: one entry per field that has a widget on a page. */
export const FORM_FIELDS_SCHEMA = {
  type: 'object', required: ['fields'], additionalProperties: false,
  properties: {
    fields: {
      type: 'array',
      items: {
        type: 'object', required: ['name', 'type', 'value', 'options', 'page', 'rect', 'readOnly', 'maxLength', 'editable'], additionalProperties: false,
        properties: {
          name: { type: 'string', description: 'The fully qualified name (parents joined with dots): the key form-fill takes.' },
          type: { type: 'string', enum: FORM_FIELD_TYPES },
          value: {
            type: ['string', 'boolean', 'null'],
            description: 'text, choice: the value or null; checkbox: true or false; radio: the chosen option or null; signature: whether it is signed; button: null.',
          },
          options: { type: 'array', items: { type: 'string' }, description: 'choice and radio: the values it takes; checkbox: its on state; [] otherwise.' },
          labels: { type: 'array', items: { type: 'string' }, description: 'choice: the options as displayed, when they differ from the values.' },
          page: { type: 'integer', minimum: 1, description: 'The page of its first widget.' },
          rect: RECT,
          readOnly: { type: 'boolean' },
          maxLength: { type: ['integer', 'null'], description: 'text: the most characters it takes, or null.' },
          editable: { type: 'boolean', description: 'choice: whether it takes a value outside its options.' },
          widgets: {
            type: 'array', description: 'Every widget, when the field has more than one (a radio group: one per option).',
            items: {
              type: 'object', required: ['page', 'rect'], additionalProperties: false,
              properties: { page: { type: 'integer', minimum: 1 }, rect: RECT, option: { type: 'string' } },
            },
          },
        },
      },
    },
  },
};

export const pdfFormFields = defineOperation({
  id: 'pdf.form-fields', title: 'Read a PDF form\'s fields',
  description: 'Lists the form fields (AcroForm) with their type, value, options, page and position, the names that /v1/pdf/form-fill takes. XFA forms are refused with 422 before payment.',
  category: 'pdf-extraction', fields: [], input: PDF_INPUT, price: { model: 'per-page', rate: 5000 },
  output: {
    mediaType: 'application/json', description: 'JSON { fields: [ { name, type, value, options, page, rect } ] } ([] when the PDF has no form).',
    jsonSchema: FORM_FIELDS_SCHEMA, unprocessable: 'Unsupported, corrupt or encrypted input; or an XFA form (UNSUPPORTED_TYPE).',
  },
  content: { local: true }, engines: [], timeoutMs: PDF_TIMEOUT_MS,
  // The form is read before payment (to refuse XFA); the answer is that reading.
  plan: async ({ files }): Promise<{ fields: FormReading['fields'] }> => ({ fields: (await inspectForm(files[0])).fields }),
});
