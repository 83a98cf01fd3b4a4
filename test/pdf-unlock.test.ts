// /v1/pdf/unlock on a document encrypted by another producer (LibreOffice).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runOperation } from './support/jobs.js';
import { pdfFacts } from './support/independent-tools.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const samples = path.resolve(projectRoot, '../shared/corpus/sample-files');
const sample = (p: string) => readFile(path.join(samples, p)).then((b) => new Uint8Array(b));
const ENCRYPTED = '005-libreoffice-writer-password/libreoffice-writer-password.pdf';

describe('pdf.unlock on the sample corpus', () => {
  it('unlocks the encrypted sample with its user password', async () => {
    const refused = await runOperation('pdf.extract', [await sample(ENCRYPTED)], {});
    expect(refused.error!.code).to.equal('ENCRYPTED_PDF');
    const { output } = await runOperation('pdf.unlock', [await sample(ENCRYPTED)], { password: 'openpassword' });
    const facts = await pdfFacts(output!.body);
    expect(facts.encrypted).to.be.false();
    expect(facts.pages).to.equal(1);
    expect(facts.check).to.equal(0);
  });
});
