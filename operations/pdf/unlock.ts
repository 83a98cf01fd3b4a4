import { defineOperation } from '../define.js';
import { PDF_INPUT, PDF_TIMEOUT_MS } from '../shared.js';

export const pdfUnlock = defineOperation({
  id: 'pdf.unlock', title: 'Remove a PDF password',
  description: 'Decrypts a password-protected PDF with its current password. A PDF that is not encrypted, or a wrong password, is refused with 422 before payment.',
  category: 'pdf-processing',
  // Not limited to AES-256's 127 bytes as protect is: readers (qpdf among them) cut a password to
  // what the file's encryption uses, so a longer one whose beginning is right does open the file.
  fields: [{ name: 'password', type: 'string', required: true, minLength: 1, maxLength: 1024, secret: true, password: true, description: 'The current password, at most 1024 characters. As in any PDF reader, only the part the file\'s encryption uses counts: the first 32 bytes for RC4 and AES-128, the first 127 bytes in UTF-8 for AES-256. Every character counts: control characters (a NUL, a tab, a line break) are refused (422).', example: 'the-current-password' }],
  input: { ...PDF_INPUT, acceptsEncrypted: true }, price: { model: 'flat', rate: 20000, note: 'Flat: an encrypted PDF cannot be page-counted before payment.' },
  output: { mediaType: 'application/pdf', description: 'The decrypted PDF.' },
  content: { local: true }, engines: ['qpdf'], timeoutMs: PDF_TIMEOUT_MS,
  plan: ({ fields }) => ({ password: fields.password }),
});
