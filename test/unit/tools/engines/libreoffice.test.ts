// The LibreOffice engine: its command line and the profile each run starts with, shown on a
// document that carries a macro bound to its opening (writing a file) and an image linked from a
// local HTTP server: converted, the file is not written and no request arrives. Both hazards are
// shown to be real: LibreOffice with a bare profile fetches the image, and opened with macros
// allowed it runs the macro. The deadline kills soffice and soffice.bin; a file its import filter
// refuses is CORRUPT_INPUT.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ServiceError } from '../../../../core/errors.js';
import { convertToPdf, profileSettingsXml, sofficeArgs } from '../../../../tools/engines/libreoffice.js';
import { runTool, RunFailure } from '../../../../tools/process/run-tool.js';
import { docx, hostileOdt, PAGE_WORDS } from '../../../support/office-fixtures.js';
import { inScratch, textOf } from './support.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const words = (text: string) => text.replace(/\s+/g, ' ');

describe('the LibreOffice engine', () => {
  it('runs headless on a fresh profile, reads the file with the filter of the format found, writes a PDF', () => {
    const args = sofficeArgs({ input: '/job/document.docx', format: 'docx' }, 'file:///job/profile', '/job/out');
    expect(args).to.include(['--headless', '--norestore', '--nolockcheck', '-env:UserInstallation=file:///job/profile', '--infilter=MS Word 2007 XML', '--convert-to', 'pdf']);
    expect(args.slice(-3)).to.equal(['--outdir', '/job/out', '/job/document.docx']);
    // Word 6.0/95 files load only with their own filter, not Word 97's.
    expect(sofficeArgs({ input: '/job/document.doc6', format: 'doc6' }, 'file:///job/profile', '/job/out')).to.include(['--infilter=MS WinWord 6.0']);
    expect(sofficeArgs({ input: '/job/document.doc', format: 'doc' }, 'file:///job/profile', '/job/out')).to.include(['--infilter=MS Word 97']);
  });

  it('seeds the profile: macros disabled at the very high level, links never updated, linked content blocked, a proxy that goes nowhere', () => {
    const xml = profileSettingsXml();
    const setting = (name: string) => new RegExp(`oor:name="${name}" oor:op="fuse"><value>([^<]*)</value>`).exec(xml)?.[1];
    expect(setting('MacroSecurityLevel')).to.equal('3');
    expect(setting('DisableMacrosExecution')).to.equal('true');
    expect(setting('BlockUntrustedRefererLinks')).to.equal('true');
    expect(xml).to.include('<item oor:path="/org.openoffice.Office.Writer/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>2</value>');
    expect(xml).to.include('<item oor:path="/org.openoffice.Office.Calc/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>1</value>');
    expect(setting('ooInetProxyType')).to.equal('1');
    expect(setting('ooInetHTTPSProxyName')).to.equal('127.0.0.1');
  });

  it('a file the import filter refuses is CORRUPT_INPUT; the deadline is JOB_TIMEOUT with no soffice left', { timeout: 60_000 }, async () => {
    await inScratch(async (dir, file) => {
      // A Word document read as an Excel 97 workbook: the forced filter fails and writes nothing.
      const input = await file('document.xls', await docx());
      const refused = await expect(convertToPdf({ input, format: 'xls', cwd: dir, timeoutMs: 50_000 })).to.reject(ServiceError);
      expect(refused.code).to.equal('CORRUPT_INPUT');
      const docxInput = await file('document.docx', await docx());
      const late = await expect(convertToPdf({ input: docxInput, format: 'docx', cwd: dir, timeoutMs: 500 })).to.reject(ServiceError);
      expect(late.code).to.equal('JOB_TIMEOUT');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const processes = await runTool('ps', ['-eo', 'args'], { timeoutMs: 10_000 });
      expect(Buffer.from(processes.stdout).toString('utf8')).to.not.include(dir);
    });
  });
});

describe('what a document may not do while it is converted', () => {
  let server: http.Server;
  const requests: string[] = [];
  let imageUrl: string;
  let scratch: string;

  before(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'paydoc-office-hostile-'));
    server = http.createServer((req, res) => { requests.push(`${req.method} ${req.url}`); res.writeHead(404).end(); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    imageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/linked.png`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(scratch, { recursive: true, force: true });
  });

  it('the macro bound to opening does not run and the linked image is not fetched; the text is converted', { timeout: 60_000 }, async () => {
    const marker = path.join(scratch, 'macro-ran');
    requests.length = 0;
    await inScratch(async (dir, file) => {
      const input = await file('document.odt', await hostileOdt(marker, imageUrl));
      const pdf = await convertToPdf({ input, format: 'odt', cwd: dir, timeoutMs: 50_000 });
      expect(words(await textOf('pdftotext', [pdf, '-']))).to.include(PAGE_WORDS[0]);
    });
    expect(existsSync(marker)).to.be.false();
    expect(requests).to.equal([]);
  });

  it('both are real: LibreOffice with a bare profile fetches the image, and runs the macro when it opens the document with macros allowed', { timeout: 60_000 }, async () => {
    const marker = path.join(scratch, 'macro-ran-control');
    const document = path.join(scratch, 'hostile.odt');
    await writeFile(document, await hostileOdt(marker, imageUrl));
    requests.length = 0;
    const bare = await runTool('soffice', ['--headless', '--norestore', `-env:UserInstallation=file://${scratch}/bare`, '--convert-to', 'pdf', '--outdir', scratch, document], { cwd: scratch, timeoutMs: 30_000 });
    expect(bare.exitCode).to.equal(0);
    expect(requests).to.include('GET /linked.png');
    // Opened (not converted) with the lowest macro security, the macro runs; the office stays open, so it is stopped.
    await mkdir(path.join(scratch, 'low', 'user'), { recursive: true });
    await writeFile(path.join(scratch, 'low', 'user', 'registrymodifications.xcu'), '<?xml version="1.0" encoding="UTF-8"?><oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"><item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>0</value></prop></item></oor:items>');
    const stop = new AbortController();
    const poll = setInterval(() => { if (existsSync(marker)) stop.abort(); }, 200);
    try {
      await runTool('soffice', ['--headless', '--norestore', `-env:UserInstallation=file://${scratch}/low`, document], { cwd: scratch, timeoutMs: 30_000, signal: stop.signal }).catch((err: unknown) => {
        if (!(err instanceof RunFailure)) throw err;
      });
    } finally {
      clearInterval(poll);
    }
    expect(existsSync(marker)).to.be.true();
  });
});
