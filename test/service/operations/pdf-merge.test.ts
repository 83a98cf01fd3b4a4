// /v1/pdf/merge and /v1/pdf/merge-compress: order, pages and every input's outline.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { makePdf, photographedPage, textPages, outlinedTextPdf, mixedPagesPdf, sampleFile } from '../../support/pdf-fixtures.js';
import { runOperation } from '../../support/jobs.js';
import { pdfFacts, tool, withFile } from '../../support/independent-tools.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

describe('pdf.merge and pdf.merge-compress on generated fixtures', () => {
  let photo: { bytes: Uint8Array; width: number; height: number };
  let textPdf: Uint8Array;
  let mixedPdf: Uint8Array;
  before(async () => {
    photo = await photographedPage();
    textPdf = outlinedTextPdf();
    mixedPdf = mixedPagesPdf(photo);
  });

  it('merge keeps order and sums pages; merge-compress does both', async () => {
    const second = makePdf(textPages(2, 'Second'));
    const { output } = await runOperation('pdf.merge', [textPdf, second, mixedPdf], {});
    const facts = await pdfFacts(output!.body);
    expect(facts.check).to.equal(0);
    expect(facts.pages).to.equal(10);
    const order = ['markerpage1', 'markerpage5', 'markersecond1', 'markersecond2', 'markermixed1'].map((m) => facts.text.indexOf(m));
    expect(order).to.equal([...order].sort((a, b) => a - b));
    expect(order[0]).to.be.at.least(0);
    expect(facts.outlineItems).to.be.at.least(5);
    const mc = await runOperation('pdf.merge-compress', [textPdf, mixedPdf], { level: 'balanced' });
    const mcFacts = await pdfFacts(mc.output!.body);
    expect(mcFacts.check).to.equal(0);
    expect(mcFacts.pages).to.equal(8);
    expect(mcFacts.text).to.contain('markermixed2');
  });
});

describe('merge keeps every input\'s outline', () => {
  interface Entry { depth: number; title: string; page: number | null; open: boolean; view?: unknown[]; uri?: string; kids: number }

  /** The outline as qpdf reads it, flattened in document order; destinations resolved to page numbers here, not by qpdf or mupdf. */
  async function outlineOf(bytes: Uint8Array): Promise<Entry[]> {
    return withFile(bytes, 'pdf', async (file) => {
      const r = await tool('qpdf', ['--json', '--json-key=outlines', '--json-key=pages', '--json-key=qpdf', file]);
      type Item = { dest: unknown; object: string; open: boolean; title: string; kids: Item[] };
      type Objects = Record<string, { value: Record<string, unknown> }>;
      const json = JSON.parse(r.out) as { outlines: Item[]; pages: { object: string }[]; qpdf: [unknown, Objects] };
      const pageOf = new Map(json.pages.map((p, i) => [p.object, i + 1]));
      const value = (v: unknown): Record<string, unknown> | undefined => (typeof v === 'string' && / R$/.test(v) ? json.qpdf[1][`obj:${v}`]?.value : v as Record<string, unknown> | undefined);
      const entries: Entry[] = [];
      const walk = (items: Item[], depth: number) => {
        for (const item of items) {
          const dest = Array.isArray(item.dest) ? item.dest : (item.dest as { '/D'?: unknown[] } | null)?.['/D'];
          // Positions to 0.01 pt; an /XYZ zoom of 0 and null both mean "keep the reader's zoom".
          const view = dest?.slice(1).map((v, i) => (typeof v === 'number' ? (dest[1] === '/XYZ' && i === 3 && v === 0 ? null : Math.round(v * 100) / 100) : v));
          const action = value(value(item.object)?.['/A']);
          const uri = action?.['/S'] === '/URI' ? String(action['/URI']).replace(/^u:/, '') : undefined;
          const page = dest ? pageOf.get(dest[0] as string) ?? null : null;
          entries.push({
            depth, title: item.title, page, open: item.open, ...(view ? { view } : {}), ...(uri ? { uri } : {}), kids: item.kids.length,
          });
          walk(item.kids, depth + 1);
        }
      };
      walk(json.outlines, 0);
      return entries;
    });
  }

  /**
   * What the merged outline must be: each input's entries in input order, pages moved by the pages
   * before it. Open/closed only matters with children.
   */
  async function expectedOutline(inputs: readonly Uint8Array[]): Promise<Entry[]> {
    const expected: Entry[] = [];
    let offset = 0;
    for (const bytes of inputs) {
      for (const e of await outlineOf(bytes)) expected.push({ ...e, page: e.page === null ? null : e.page + offset });
      offset += (await pdfFacts(bytes)).pages;
    }
    return expected;
  }
  const comparable = (entries: Entry[]) => entries.map((e) => ({ ...e, open: e.kids > 0 ? e.open : undefined }));

  /** Link annotations, counted in qpdf's JSON of all objects. */
  const linksOf = (bytes: Uint8Array) => withFile(bytes, 'pdf', async (file) => ((await tool('qpdf', ['--json', '--json-key=qpdf', file])).out.match(/"\/Subtype": "\/Link"/g) ?? []).length);

  it('merge and merge-compress (lossless) keep nesting, titles, open state, URIs and pages moved by the earlier inputs', async () => {
    const first = makePdf(textPages(2, 'Alpha'), { outline: true, link: true });
    const nested = await sampleFile('014-outlines/mistitled_outlines_example.pdf'); // 4 pages, three levels, closed entries
    const named = await sampleFile('006-pdflatex-outline/pdflatex-outline.pdf'); // named destinations
    const last = makePdf(textPages(3, 'Gamma'), { outline: true, link: true, outlineTitles: ['Überblick', 'Ελληνικά', '日本語'], outlineUri: 'https://example.com/more' });
    const inputs = [first, nested, named, last];
    const expected = await expectedOutline(inputs);
    expect(expected.length).to.equal(2 + 27 + 9 + 4);
    // The sources resolve every page destination, so a lost offset cannot hide behind a null.
    expect(expected.filter((e) => e.page === null).map((e) => e.title)).to.equal(['Website']);
    expect(expected.filter((e) => e.kids > 0 && !e.open).map((e) => e.title)).to.equal(['Seventh', 'Fifteenth']);
    let expectedLinks = 0;
    for (const bytes of inputs) expectedLinks += await linksOf(bytes);
    expect(expectedLinks).to.be.at.least(5);
    for (const [work, fields] of [['pdf.merge', {}], ['pdf.merge-compress', { level: 'lossless' }]] as const) {
      const { output, leftovers } = await runOperation(work, inputs, fields);
      expect(leftovers).to.equal([]);
      const facts = await pdfFacts(output!.body);
      expect(facts.check).to.equal(0);
      expect(facts.pages).to.equal(2 + 4 + 4 + 3);
      expect(facts.text).to.contain('markergamma3');
      const merged = await outlineOf(output!.body);
      expect(comparable(merged)).to.equal(comparable(expected));
      // Spot checks against the numbers themselves: 014's "Fifth" is on its page 3, "日本語" on the last input's page 3.
      expect(merged.find((e) => e.title === 'Fifth')!.page).to.equal(2 + 3);
      expect(merged.find((e) => e.title === '日本語')!.page).to.equal(2 + 4 + 4 + 3);
      expect(merged.at(-1)).to.include({ title: 'Website', uri: 'https://example.com/more', page: null });
      // Page links are untouched: every input's link annotations are still there.
      expect(await linksOf(output!.body)).to.equal(expectedLinks);
    }
  });

  it('takes outlines from owner-password-only inputs, skips a broken one and keeps qpdf\'s merge when the outline step cannot run', async () => {
    const first = makePdf(textPages(2, 'Alpha'), { outline: true });
    const ownerOnly = await withFile(makePdf(textPages(3, 'Owner'), { outline: true, outlineTitles: ['Eins', 'Zwei', 'Drei'] }), 'pdf', async (file, dir) => {
      const out = path.join(dir, 'owner.pdf');
      expect((await tool('qpdf', ['--encrypt', '', 'owner-secret', '256', '--', file, out])).code).to.equal(0);
      return new Uint8Array(await readFile(out));
    });
    // Chapter 2's /Next points back at Chapter 1: mupdf refuses the outline ("Cycle detected").
    const healthy = makePdf(textPages(3, 'Cycle'), { outline: true });
    const cyclic = Buffer.from(Buffer.from(healthy).toString('latin1').replace('/Prev 11 0 R /Next 13 0 R', '/Prev 11 0 R /Next 11 0 R'), 'latin1');
    expect(cyclic.equals(healthy)).to.be.false();
    const nested = await sampleFile('014-outlines/mistitled_outlines_example.pdf');

    const { output } = await runOperation('pdf.merge', [first, ownerOnly, cyclic, nested], {});
    const facts = await pdfFacts(output!.body);
    expect([facts.check, facts.pages, facts.encrypted]).to.equal([0, 12, false]);
    const expected = [...await expectedOutline([first, ownerOnly]), ...(await outlineOf(nested)).map((e) => ({ ...e, page: e.page! + 8 }))];
    expect(expected.map((e) => e.title).slice(2, 5)).to.equal(['Eins', 'Zwei', 'Drei']);
    expect(comparable(await outlineOf(output!.body))).to.equal(comparable(expected));

    // A broken outline in the first input stops the outline step; the pages are still merged.
    const fallback = await runOperation('pdf.merge', [cyclic, nested], {});
    const fallbackFacts = await pdfFacts(fallback.output!.body);
    expect([fallbackFacts.check, fallbackFacts.pages]).to.equal([0, 7]);
    expect(fallback.leftovers).to.equal([]);
  });
});
