// Builds a ZIP in memory from named entries, bounded in total size. PNG and PDF entries are
// already compressed, so they are stored rather than deflated again (faster, barely larger).
import { ZipArchive } from 'archiver';
import { fail } from '../core/errors.js';

export interface ZipEntry {
  name: string;
  bytes: Uint8Array;
}

const ALREADY_COMPRESSED = /\.(png|pdf|jpe?g|webp)$/i;
/** Local header, central directory record and data descriptor, generously. */
const PER_ENTRY_OVERHEAD = 200;

/** Checks the running total before anything is archived, so an oversized result fails early and cheaply. */
export function checkZipSize(entries: readonly { name: string; bytes: Uint8Array }[], maxBytes: number): void {
  let total = 22;
  for (const entry of entries) {
    total += entry.bytes.byteLength + 2 * Buffer.byteLength(entry.name) + PER_ENTRY_OVERHEAD;
    if (total > maxBytes) {
      fail('LIMIT_EXCEEDED', `the ZIP would be larger than the limit of ${maxBytes} bytes (reached at ${entry.name}); send fewer pages or a lower resolution`);
    }
  }
}

export async function buildZip(entries: readonly ZipEntry[], maxBytes: number): Promise<Uint8Array> {
  checkZipSize(entries, maxBytes);
  const archive = new ZipArchive({ zlib: { level: 6 } });
  const chunks: Buffer[] = [];
  let size = 0;
  const done = new Promise<void>((resolve, reject) => {
    archive.on('data', (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
    });
    archive.on('end', () => resolve());
    archive.on('error', reject);
    archive.on('warning', reject);
  });
  // A fixed date keeps the archive reproducible and reveals nothing about when the job ran.
  const date = new Date('2000-01-01T00:00:00Z');
  for (const entry of entries) {
    archive.append(Buffer.from(entry.bytes.buffer, entry.bytes.byteOffset, entry.bytes.byteLength), {
      name: entry.name, date, store: ALREADY_COMPRESSED.test(entry.name),
    });
  }
  await archive.finalize();
  await done;
  if (size > maxBytes) fail('LIMIT_EXCEEDED', `the ZIP is larger than the limit of ${maxBytes} bytes`);
  const out = Buffer.concat(chunks, size);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
