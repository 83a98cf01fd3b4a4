// tools/zip.ts: a ZIP built in memory that unzip reads back entry for entry, with already
// compressed entries stored, a fixed date, and the size limit met before any work.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { ServiceError } from '../../../core/errors.js';
import { buildZip, checkZipSize } from '../../../tools/zip.js';
import { tool, withFile, zipEntries } from '../../support/independent-tools.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const text = new TextEncoder().encode('the same line of text, again and again\n'.repeat(200));
const png = Uint8Array.from({ length: 4000 }, (_, i) => (i * 7919) % 251);

describe('ZIP archives', () => {
  it('unzip reads back every entry, byte for byte, in order', async () => {
    const zip = await buildZip([{ name: 'page-1.png', bytes: png }, { name: 'page-2.txt', bytes: text }], 1_000_000);
    const entries = await zipEntries(zip);
    expect(entries.map((e) => e.name)).to.equal(['page-1.png', 'page-2.txt']);
    expect(Buffer.from(entries[0].bytes).equals(Buffer.from(png))).to.be.true();
    expect(Buffer.from(entries[1].bytes).equals(Buffer.from(text))).to.be.true();
  });

  it('stores PNG, PDF, JPEG and WebP entries and deflates the rest, each dated 2000-01-01', async () => {
    const zip = await buildZip([{ name: 'a.png', bytes: png }, { name: 'b.PDF', bytes: png }, { name: 'c.txt', bytes: text }], 1_000_000);
    const listing = await withFile(zip, 'zip', (file) => tool('zipinfo', ['-l', file]));
    const line = (name: string) => listing.out.split('\n').find((l) => l.endsWith(` ${name}`)) ?? '';
    expect(line('a.png')).to.contain(' stor ');
    expect(line('b.PDF')).to.contain(' stor ');
    expect(line('c.txt')).to.match(/ def[NXFS] /);
    for (const name of ['a.png', 'b.PDF', 'c.txt']) expect(line(name)).to.contain('00-Jan-01');
    expect(zip.byteLength).to.be.below(png.byteLength * 2 + text.byteLength);
  });

  it('refuses a result over the limit before archiving, naming the entry that reached it', async () => {
    const entries = [{ name: 'page-1.png', bytes: png }, { name: 'page-2.png', bytes: png }, { name: 'page-3.png', bytes: png }];
    const err = expect(() => checkZipSize(entries, 9000)).to.throw(ServiceError);
    expect((err as ServiceError).code).to.equal('LIMIT_EXCEEDED');
    expect(err.message).to.equal('the ZIP would be larger than the limit of 9000 bytes (reached at page-3.png); send fewer pages or a lower resolution');
    await expect(buildZip(entries, 9000)).to.reject(ServiceError);
    expect(() => checkZipSize(entries, 20_000)).to.not.throw();
  });
});
