// /v1/office/pdf on Office documents nobody here wrote: the templates LibreOffice itself ships
// (letters, faxes, agendas, presentations, spreadsheets, authored by the LibreOffice project and
// installed with it), each as it is and saved again as its Microsoft format by LibreOffice. Every
// one converts, and the PDF has the pages a plain `soffice --convert-to pdf` of the same file gives.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runOperation } from '../../support/jobs.js';
import { pdfFacts, tool } from '../../support/independent-tools.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const TEMPLATES = '/usr/lib/libreoffice/share/template';
// Text, spreadsheet and presentation templates; drawings (.otg) are not a format the operation takes.
const KINDS: Record<string, string> = { '.ott': 'docx:MS Word 2007 XML', '.ots': 'xlsx:Calc MS Excel 2007 XML', '.otp': 'pptx:Impress MS PowerPoint 2007 XML' };
const PER_KIND = 3;

async function templates(): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(file);
      else if (KINDS[path.extname(entry.name)]) found.push(file);
    }
  };
  await walk(TEMPLATES);
  // A spread over the sorted list of each kind, the same on every machine with the same package.
  return Object.keys(KINDS).flatMap((ext) => {
    const ofKind = found.filter((f) => f.endsWith(ext)).sort();
    const step = Math.max(1, Math.floor(ofKind.length / PER_KIND));
    return ofKind.filter((_, i) => i % step === 0).slice(0, PER_KIND);
  });
}

describe('office.pdf on LibreOffice\'s own templates', () => {
  let dir: string;
  let files: string[];

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-office-templates-'));
    files = await templates();
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** What a plain soffice makes of the file: its PDF's page count, or its Microsoft-format copy. */
  async function soffice(file: string, target: string): Promise<string> {
    const out = path.join(dir, `out-${Math.random().toString(36).slice(2)}`);
    const { code, err } = await tool('soffice', ['--headless', '--norestore', `-env:UserInstallation=file://${out}/profile`, '--convert-to', target, '--outdir', out, file]);
    expect(code, err).to.equal(0);
    const made = (await readdir(out)).find((name) => name !== 'profile');
    expect(made, `soffice made nothing of ${path.basename(file)}`).to.exist();
    return path.join(out, made!);
  }

  it('templates of every kind, as shipped and saved as DOCX, XLSX and PPTX: converted, with the pages soffice gives', { timeout: 600_000 }, async () => {
    expect(files.length).to.equal(Object.keys(KINDS).length * PER_KIND);
    for (const template of files) {
      const copy = await soffice(template, KINDS[path.extname(template)]);
      for (const source of [template, copy]) {
        const bytes = new Uint8Array(await readFile(source));
        const outcome = await runOperation('office.pdf', [bytes], {}, { timeoutMs: 120_000 });
        const label = `${path.basename(template)} (${path.extname(source)})`;
        expect(outcome.error, `${label}: ${outcome.error?.message}`).to.not.exist();
        const served = await pdfFacts(outcome.output!.body);
        expect(served.check, label).to.equal(0);
        const plain = path.join(dir, 'plain.input' + path.extname(source));
        await writeFile(plain, bytes);
        const raw = await pdfFacts(new Uint8Array(await readFile(await soffice(plain, 'pdf'))));
        expect(served.pages, label).to.equal(raw.pages);
        expect(served.pages, label).to.be.above(0);
      }
    }
  });
});
