// client/bridge/output.ts: result files written into one folder under fresh names, never over what
// is already there, and a folder that cannot be made reported each time it is asked for.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OutputFolder } from '../../../../client/bridge/output.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('the output folder', () => {
  let dir: string;

  before(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'paydoc-output-')));
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('names each file after the tool and a count, with the media type\'s extension, and only safe characters', async () => {
    const output = new OutputFolder(path.join(dir, 'named', 'deeper'));
    const first = await output.write('svc_image_resize', 'image/webp', Buffer.from('a'));
    expect(first).to.equal(path.join(dir, 'named', 'deeper', 'image_resize-1.webp'));
    expect(path.basename(await output.write('../../etc/passwd', 'application/pdf', Buffer.from('b')))).to.equal('_etc_passwd-2.pdf');
    expect(path.basename(await output.write('svc_', 'constructor', Buffer.from('c')))).to.equal('result-3.bin');
    expect(path.basename(await output.write('x'.repeat(100), 'text/markdown', Buffer.from('d')))).to.equal(`${'x'.repeat(64)}-4.md`);
    expect(await readFile(first, 'utf8')).to.equal('a');
  });

  it('passes over a name already taken, a planted symlink included, leaving what is there untouched', async () => {
    const folder = path.join(dir, 'taken');
    const output = new OutputFolder(folder);
    await output.ready();
    const target = path.join(dir, 'target.txt');
    await writeFile(target, 'keep');
    await symlink(target, path.join(folder, 'pdf_split-1.zip'));
    await writeFile(path.join(folder, 'pdf_split-2.zip'), 'earlier');
    const written = await output.write('svc_pdf_split', 'application/zip', Buffer.from('new'));
    expect(path.basename(written)).to.equal('pdf_split-3.zip');
    expect(await readFile(target, 'utf8')).to.equal('keep');
    expect(await readFile(path.join(folder, 'pdf_split-2.zip'), 'utf8')).to.equal('earlier');
  });

  it('without OUTPUT_DIR, makes one new paydoc-results- folder in the working directory, on first use only', async () => {
    const cwd = await mkdtemp(path.join(dir, 'cwd-'));
    const output = new OutputFolder(undefined, cwd);
    expect(await readdir(cwd)).to.equal([]);
    const made = await output.ready();
    expect(path.dirname(made)).to.equal(cwd);
    expect(path.basename(made)).to.match(/^paydoc-results-\w+$/);
    await output.write('svc_a', 'image/png', Buffer.from('x'));
    expect(await output.ready()).to.equal(made);
    expect(await readdir(cwd)).to.equal([path.basename(made)]);
  });

  it('reports a folder that cannot be made on every call, and makes it once it can be', async () => {
    const blocker = path.join(dir, 'blocker');
    await writeFile(blocker, 'a file where the folder goes');
    const output = new OutputFolder(path.join(blocker, 'out'));
    await expect(output.ready()).to.reject(/ENOTDIR/);
    await expect(output.write('svc_a', 'image/png', Buffer.from('x'))).to.reject(/ENOTDIR/);
    await rm(blocker);
    expect(path.basename(path.dirname(await output.write('svc_a', 'image/png', Buffer.from('x'))))).to.equal('out');
  });
});
