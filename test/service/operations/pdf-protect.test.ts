// /v1/pdf/protect and /v1/pdf/unlock: AES-256 on, and off again with the password.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { outlinedTextPdf } from '../../support/pdf-fixtures.js';
import { jobRoot, runOperation } from '../../support/jobs.js';
import { pdfFacts, tool } from '../../support/independent-tools.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

describe('pdf.protect and pdf.unlock on generated fixtures', () => {
  let textPdf: Uint8Array;
  before(async () => {
    textPdf = outlinedTextPdf();
  });

  it('protect encrypts with AES-256 under one password; unlock takes it off', async () => {
    // Quotes, spaces, a leading dash and non-ASCII; control characters are refused (pdf-passwords).
    const password = '-- tricky pass word "é" ✓';
    const { output } = await runOperation('pdf.protect', [textPdf], { password });
    const enc = await pdfFacts(output!.body, 'not-it').catch(() => undefined);
    expect(enc?.pages ?? -1).to.equal(-1);
    const requires = await (async () => {
      const dir = await mkdtemp(path.join(jobRoot(), 'pdf-enc-'));
      try {
        const file = path.join(dir, 'p.pdf');
        await writeFile(file, output!.body);
        const show = await tool('qpdf', [`--password=${password}`, '--show-encryption', file]);
        const needs = await tool('qpdf', ['--requires-password', file]);
        const owner = /User password = (.*)/.exec(show.out);
        return { show: show.out, needs: needs.code, owner };
      } finally { await rm(dir, { recursive: true, force: true }); }
    })();
    expect(requires.needs).to.equal(0);
    expect(requires.show).to.contain('R = 6');
    expect(requires.show).to.contain('AESv3');
    // The same password must open it as owner too: unlock (which tries it) succeeds, wrong ones do not.
    const wrong = await runOperation('pdf.unlock', [output!.body], { password: 'wrong' });
    expect(wrong.error!.code).to.equal('WRONG_PASSWORD');
    const opened = await runOperation('pdf.unlock', [output!.body], { password });
    const facts = await pdfFacts(opened.output!.body);
    expect(facts.encrypted).to.be.false();
    expect(facts.check).to.equal(0);
    expect(facts.pages).to.equal(5);
    expect(facts.text).to.contain('markerpage3');
  });
});
