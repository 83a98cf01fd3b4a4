// Where file results go: one output folder (OUTPUT_DIR, else a new paydoc-results-… folder in the
// working directory), each file under a new name of safe characters, never over an existing file.
import { mkdir, mkdtemp, open, realpath } from 'node:fs/promises';
import path from 'node:path';

// A Map, not an object: a media type such as "constructor" must not find Object's own members.
const EXTENSIONS = new Map(Object.entries({
  'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'image/avif': 'avif', 'image/gif': 'gif', 'image/tiff': 'tiff',
  'application/pdf': 'pdf', 'application/zip': 'zip', 'text/markdown': 'md', 'text/plain': 'txt',
}));

export class OutputFolder {
  private folder: Promise<string> | undefined;
  private written = 0;

  /** `configured`: OUTPUT_DIR, made when missing; without it a new folder in `cwd` is made on first use. */
  constructor(private readonly configured: string | undefined, private readonly cwd = process.cwd()) {}

  /** The folder's real path, made on first use: every file written is checked to land directly in it. */
  ready(): Promise<string> {
    const { configured } = this;
    this.folder ??= (configured
      ? mkdir(configured, { recursive: true }).then(() => configured)
      : mkdtemp(path.join(this.cwd, 'paydoc-results-'))).then((dir) => realpath(dir));
    // A folder that cannot be made is reported on every call, not remembered as a failure.
    this.folder.catch(() => { this.folder = undefined; });
    return this.folder;
  }

  /** Writes one result file directly in the output folder, under a new name of safe characters only. */
  async write(tool: string, mediaType: string, bytes: Buffer): Promise<string> {
    const dir = await this.ready();
    // The tool's name comes from the upstream: only letters, digits, _ and - reach the file name.
    const base = tool.replace(/^svc_/, '').replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64) || 'result';
    const extension = EXTENSIONS.get(mediaType) ?? 'bin';
    for (;;) {
      const file = path.resolve(dir, `${base}-${++this.written}.${extension}`);
      if (path.dirname(file) !== dir) throw new Error(`refused to write ${file}, outside the output folder`);
      try {
        // 'wx': never an existing file, nor a symlink planted under the name.
        const handle = await open(file, 'wx');
        try {
          await handle.writeFile(bytes);
        } finally {
          await handle.close();
        }
        return file;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
  }
}
