// client/bridge/local-files.ts: `{ path }` arguments read from one folder only, each refusal naming
// the argument and the reason before anything is read or sent; files that would hang or overflow a
// call (a FIFO, a sparse file past the MCP limit) are refused without being read.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FilesRoot, isWithin, readLocalFile, withLocalFiles } from '../../../../client/bridge/local-files.js';
import { MCP_MAX_DECODED_BYTES } from '../../../../core/protocol.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('local file arguments', () => {
  let dir: string;
  let inside: string;
  let root: FilesRoot;

  const refusal = async (value: unknown, where = 'file') => {
    try {
      await readLocalFile(value, where, root);
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error('read');
  };

  before(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'paydoc-files-')));
    inside = path.join(dir, 'inside');
    await mkdir(path.join(inside, 'sub'), { recursive: true });
    await writeFile(path.join(inside, 'sub', 'a.txt'), 'hello');
    await writeFile(path.join(dir, 'secret.txt'), 'secret');
    await symlink(path.join(dir, 'secret.txt'), path.join(inside, 'leak.txt'));
    await symlink(path.join(inside, 'sub', 'a.txt'), path.join(inside, 'alias.txt'));
    // Given by a name that is itself a symlink to the real folder.
    await symlink(inside, path.join(dir, 'link-to-inside'));
    root = await FilesRoot.open(path.join(dir, 'link-to-inside'));
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a folder is within itself and its descendants, not beside or above them', () => {
    expect(isWithin('/a/b', '/a/b')).to.be.true();
    expect(isWithin('/a/b', '/a/b/..c')).to.be.true();
    expect(isWithin('/a/b', '/a/bc')).to.be.false();
    expect(isWithin('/a/b', '/a')).to.be.false();
  });

  it('opens only a folder as the root, naming PAYDOC_FILES_ROOT', async () => {
    await expect(FilesRoot.open(path.join(dir, 'none'))).to.reject(`PAYDOC_FILES_ROOT: no folder at ${path.join(dir, 'none')}`);
    const file = path.join(dir, 'secret.txt');
    await expect(FilesRoot.open(file)).to.reject(`PAYDOC_FILES_ROOT: ${file} is not a folder`);
    expect(root.real).to.equal(inside);
  });

  it('reads a path relative to the root, under either spelling of it, and through a symlink that stays inside', async () => {
    const hello = { data: Buffer.from('hello').toString('base64') };
    expect(await readLocalFile({ path: 'sub/a.txt' }, 'file', root)).to.equal(hello);
    expect(await readLocalFile({ path: path.join(inside, 'sub', 'a.txt') }, 'file', root)).to.equal(hello);
    expect(await readLocalFile({ path: 'alias.txt' }, 'file', root)).to.equal(hello);
  });

  it('passes anything but { path } on unchanged', async () => {
    for (const value of [{ data: 'aGk=' }, { url: 'https://example.com/a.pdf' }, 'text', null, 7]) {
      expect(await readLocalFile(value, 'file', root)).to.equal(value);
    }
  });

  it('refuses, naming the argument, a path that is not a string, leads out, or is no file', async () => {
    expect(await refusal({ path: '' })).to.equal('file.path must be a file path');
    expect(await refusal({ path: 3 }, 'files[2]')).to.equal('files[2].path must be a file path');
    const outside = `is outside ${root.name}, the only folder this bridge reads files from (its working directory, or PAYDOC_FILES_ROOT). `
      + 'Nothing was read or sent.';
    expect(await refusal({ path: '../secret.txt' })).to.equal(`file.path: ../secret.txt ${outside}`);
    expect(await refusal({ path: 'leak.txt' })).to.equal(`file.path: leak.txt ${outside}`);
    expect(await refusal({ path: '/etc/hostname' })).to.equal(`file.path: /etc/hostname ${outside}`);
    // ~/ is the home folder, outside this root.
    expect(await refusal({ path: '~/x' })).to.equal(`file.path: ~/x ${outside}`);
    expect(await refusal({ path: 'none.txt' })).to.equal(`file.path: no file at ${path.join(root.name, 'none.txt')}`);
    expect(await refusal({ path: 'sub/a.txt/deeper' })).to.equal(`file.path: no file at ${path.join(root.name, 'sub/a.txt/deeper')}`);
    expect(await refusal({ path: 'sub' })).to.equal(`file.path: ${path.join(root.name, 'sub')} is not a regular file`);
  });

  it('refuses a FIFO without waiting for a writer, and a file past the MCP limit without reading it', async () => {
    execFileSync('mkfifo', [path.join(inside, 'pipe')]);
    expect(await refusal({ path: 'pipe' })).to.equal(`file.path: ${path.join(root.name, 'pipe')} is not a regular file`);
    const big = path.join(inside, 'big.bin');
    await writeFile(big, '');
    // Sparse: no disk is used, and a read of it would take seconds.
    await truncate(big, MCP_MAX_DECODED_BYTES + 1);
    expect(await refusal({ path: 'big.bin' })).to.equal(
      `file.path: the file is ${MCP_MAX_DECODED_BYTES + 1} bytes; a call takes at most ${MCP_MAX_DECODED_BYTES} bytes`);
    await truncate(big, 0);
  });

  it('replaces each { path } of file and files, keeping the other arguments, and refuses naming the item at fault', async () => {
    const args = { file: { path: 'sub/a.txt' }, files: [{ data: 'aGk=' }, { path: 'alias.txt' }], width: 5 };
    const hello = { data: Buffer.from('hello').toString('base64') };
    expect(await withLocalFiles(args, root)).to.equal({ file: hello, files: [{ data: 'aGk=' }, hello], width: 5 });
    expect(args.file).to.equal({ path: 'sub/a.txt' });
    const second = withLocalFiles({ files: [{ path: 'alias.txt' }, { path: 'leak.txt' }] }, root);
    await expect(second).to.reject(/^files\[1\]\.path: leak\.txt is outside/);
    expect(await withLocalFiles(undefined, root)).to.equal({});
  });
});
