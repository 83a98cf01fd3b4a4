import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfProtect = defineOperation({
  id: 'pdf.protect', title: 'Password-protect a PDF',
  description: 'Encrypts with AES-256; the password is both the user and the owner password.',
  category: 'pdf-processing',
  // AES-256 (PDF 2.0) uses at most the first 127 UTF-8 bytes of a password. qpdf does not cut a
  // longer one when it encrypts, and then neither qpdf nor MuPDF opens the result with the whole
  // password or its first 127 bytes: refused before payment instead of selling a file nobody opens.
  fields: [{ name: 'password', type: 'string', required: true, minLength: 1, maxUtf8Bytes: 127, secret: true, password: true, description: 'The password, 1 to 127 bytes in UTF-8 (127 ASCII characters; fewer when some take 2 to 4 bytes): AES-256 uses at most 127 bytes of a password, so a longer one is refused (422), not cut. Every character counts: control characters (a NUL, a tab, a line break) are refused (422).', example: 'a-new-password' }],
  input: PDF_INPUT, price: { model: 'per-page', rate: 5000 },
  output: { mediaType: 'application/pdf', description: 'The AES-256 encrypted PDF.' },
  content: { local: true }, engines: ['qpdf'], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields }) => ({ password: fields.password }),
});
