// /v1/pdf/unlock on a document encrypted by another producer (LibreOffice).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { sampleFile } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { pdfFacts } from '../../support/independent-tools.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const ENCRYPTED = '005-libreoffice-writer-password/libreoffice-writer-password.pdf';

describe('pdf.unlock on the sample corpus', () => {
  it('unlocks the encrypted sample with its user password', async () => {
    const refused = await runOperation('pdf.extract', [await sampleFile(ENCRYPTED)], {});
    expect(refused.error!.code).to.equal('ENCRYPTED_PDF');
    const { output } = await runOperation('pdf.unlock', [await sampleFile(ENCRYPTED)], { password: 'openpassword' });
    const facts = await pdfFacts(output!.body);
    expect(facts.encrypted).to.be.false();
    expect(facts.pages).to.equal(1);
    expect(facts.check).to.equal(0);
  });
});
