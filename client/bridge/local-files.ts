// File arguments given as local paths: `{ "path": "…" }` read from one folder (the files root) and
// sent as the service takes files, `{ "data": base64 }`. The path is judged twice, by its name before
// anything is opened and by the real path of what was opened, so a symlink cannot lead outside.
import { constants, type Stats } from 'node:fs';
import { open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MCP_MAX_DECODED_BYTES } from '../../core/protocol.js';
import { Refusal } from './refusal.js';

/** Whether `file` is `folder` or lies below it (both absolute). */
export function isWithin(folder: string, file: string): boolean {
  const relative = path.relative(folder, file);
  return relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

/** The one folder `{ path }` arguments may be read from: its name as configured, and its real path. */
export class FilesRoot {
  private constructor(readonly name: string, readonly real: string) {}

  static async open(name: string): Promise<FilesRoot> {
    let real: string;
    try {
      real = await realpath(name);
    } catch {
      throw new Error(`PAYDOC_FILES_ROOT: no folder at ${name}`);
    }
    if (!(await stat(real)).isDirectory()) throw new Error(`PAYDOC_FILES_ROOT: ${name} is not a folder`);
    return new FilesRoot(name, real);
  }

  /** A name that points inside before anything is opened (under either spelling of the root). */
  namesInside(file: string): boolean {
    return isWithin(this.name, file) || isWithin(this.real, file);
  }

  /** A real path (symlinks resolved) inside. */
  holds(real: string | undefined): boolean {
    return real !== undefined && isWithin(this.real, real);
  }
}

/**
 * The real path of an opened file: what /proc says the descriptor is, else its name's real path if that
 * is still the same file.
 */
async function openedPath(handle: FileHandle, file: string, info: Stats): Promise<string | undefined> {
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    const real = await realpath(file).catch(() => undefined);
    const now = real === undefined ? undefined : await stat(real).catch(() => undefined);
    return now && now.dev === info.dev && now.ino === info.ino ? real : undefined;
  }
}

/**
 * A `{ path }` argument as the service takes it, `{ data }`; anything else unchanged. The path must
 * lead inside the files root: it is checked by name before it is opened, then by the real path of
 * what was opened (so a symlink, or one swapped in meanwhile, is judged by where it really leads),
 * and only that open file is read.
 */
export async function readLocalFile(value: unknown, where: string, root: FilesRoot): Promise<unknown> {
  if (typeof value !== 'object' || value === null || !('path' in value)) return value;
  const given = (value as { path: unknown }).path;
  if (typeof given !== 'string' || given === '') throw new Refusal(`${where}.path must be a file path`);
  const file = path.resolve(root.name, given.startsWith('~/') ? path.join(os.homedir(), given.slice(2)) : given);
  const outside = () => new Refusal(`${where}.path: ${given} is outside ${root.name}, the only folder this bridge reads files from `
    + '(its working directory, or PAYDOC_FILES_ROOT). Nothing was read or sent.');
  if (!root.namesInside(file)) throw outside();
  let handle: FileHandle;
  try {
    // Non-blocking: a FIFO put in place of a file must not hang the bridge.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new Refusal(`${where}.path: no file at ${file}`);
    throw new Refusal(`${where}.path: ${file} cannot be opened (${code ?? 'error'})`);
  }
  try {
    const info = await handle.stat();
    if (!root.holds(await openedPath(handle, file, info))) throw outside();
    if (!info.isFile()) throw new Refusal(`${where}.path: ${file} is not a regular file`);
    if (info.size > MCP_MAX_DECODED_BYTES) {
      throw new Refusal(`${where}.path: the file is ${info.size} bytes; a call takes at most ${MCP_MAX_DECODED_BYTES} bytes`);
    }
    return { data: (await handle.readFile()).toString('base64') };
  } finally {
    await handle.close();
  }
}

/**
 * The arguments with every `{ path }` replaced by the file's bytes; a refused path refuses the call
 * before anything is sent.
 */
export async function withLocalFiles(args: Record<string, unknown> = {}, root: FilesRoot): Promise<Record<string, unknown>> {
  const out = { ...args };
  if (out.file !== undefined) out.file = await readLocalFile(out.file, 'file', root);
  if (Array.isArray(out.files)) {
    const files: unknown[] = [];
    for (const [i, f] of out.files.entries()) files.push(await readLocalFile(f, `files[${i}]`, root));
    out.files = files;
  }
  return out;
}
