import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfProtect = defineOperation({
  id: 'pdf.protect', title: 'Password-protect a PDF',
  description: 'Encrypts with AES-256; the password is both the user and the owner password.',
  category: 'pdf-processing',
  fields: [{ name: 'password', type: 'string', required: true, minLength: 1, maxLength: 256, secret: true, description: 'The password, 1 to 256 characters.', example: 'a-new-password' }],
  input: PDF_INPUT, price: { model: 'per-page', rate: 5000 },
  output: { mediaType: 'application/pdf', description: 'The AES-256 encrypted PDF.' },
  thirdParty: false, binaries: ['qpdf'], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields }) => ({ password: fields.password as string }),
});
