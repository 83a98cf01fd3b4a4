import { inspectForm } from '../../checks/forms.js';
import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfFlatten = defineOperation({
  id: 'pdf.flatten', title: 'Flatten form fields and annotations',
  description: 'Draws every form field and annotation (comments, stamps, highlights) into the page content as it is shown, then removes the form: the values stay visible and can no longer be edited. XFA forms are refused with 422 before payment.',
  category: 'pdf-processing', fields: [], input: PDF_INPUT, price: { model: 'per-page', rate: 5000 },
  output: {
    mediaType: 'application/pdf', description: 'The flattened PDF: no form fields left.',
    unprocessable: 'Unsupported, corrupt or encrypted input; or an XFA form (UNSUPPORTED_TYPE).',
  },
  content: { local: true }, engines: [], timeoutMs: PDF_TIMEOUT_MS,
  plan: async ({ files }) => { await inspectForm(files[0]); return {}; },
});
