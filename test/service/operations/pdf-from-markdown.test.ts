// /v1/pdf/from-markdown: what a reader of the PDF sees (fonts, links, outline, text order,
// table pagination, metadata) and that the input can never make the renderer fetch anything.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceError } from '../../../core/errors.js';
import {
  BOX_LIMIT, RUN_LIMIT, RUN_STEP, firstInvalidUtf8Offset, inspectMarkdown, estimatedLayoutMs, layoutBudgetMs,
  LAYOUT_BASE_MS, LAYOUT_MS_PER_KB,
} from '../../../checks/markdown.js';
import { PDF_TIMEOUT_MS } from '../../../operations/shared.js';
import { plannedJob } from '../../support/jobs.js';
import { startTestService, form, type TestService } from '../../support/service.js';
import { balancesOf } from '../../support/paying.js';
import { renderHtmlToPdf, renderMarkdownHtml } from '../../../workers/pdf/from-markdown.js';
import { LINK_LIMIT } from '../../../workers/pdf/markdown-html.js';
import { runTool } from '../../../tools/process/run-tool.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const encoder = new TextEncoder();
const TOOL_TIMEOUT = 60_000;

let workRoot: string;
let jobCounter = 0;

async function newJobDir(): Promise<string> {
  jobCounter += 1;
  return mkdtemp(path.join(workRoot, `job${jobCounter}-`));
}

async function typeset(markdown: string | Uint8Array, title?: string, timeoutMs = 90_000): Promise<Uint8Array> {
  const bytes = typeof markdown === 'string' ? encoder.encode(markdown) : markdown;
  const planned = await plannedJob('pdf.from-markdown', [bytes], title === undefined ? {} : { title }, { root: await newJobDir(), timeoutMs });
  const output = await planned.run().finally(() => planned.jobDir.remove());
  expect(output.mediaType).to.equal('application/pdf');
  return output.body;
}

async function tool(name: string, args: string[], input?: Uint8Array): Promise<string> {
  const result = await runTool(name, args, { input, timeoutMs: TOOL_TIMEOUT, cwd: workRoot });
  expect(result.exitCode, `${name} ${args.join(' ')}: ${result.stderr}`).to.equal(0);
  return Buffer.from(result.stdout).toString('utf8');
}

const pdftotext = (pdf: Uint8Array, ...args: string[]) => tool('pdftotext', [...args, '-', '-'], pdf);

async function toFile(pdf: Uint8Array, name: string): Promise<string> {
  const file = path.join(workRoot, name);
  await writeFile(file, pdf);
  return file;
}

/** URIs of the link annotations in object order, once each (a link wrapped over two lines has two). */
async function linkUris(pdf: Uint8Array): Promise<string[]> {
  const json = JSON.parse(await tool('qpdf', ['--json=2', '--json-key=qpdf', await toFile(pdf, `links-${jobCounter}.pdf`)])) as {
    qpdf: [unknown, Record<string, { value?: Record<string, unknown> }>];
  };
  const uris: string[] = [];
  for (const object of Object.values(json.qpdf[1])) {
    const value = object.value;
    if (value?.['/Subtype'] !== '/Link') continue;
    const action = value['/A'] as Record<string, string> | undefined;
    const uri = action?.['/URI']?.replace(/^u:/, '');
    if (uri !== undefined && !uris.includes(uri)) uris.push(uri);
  }
  return uris;
}

const words = (text: string) => text.match(/[\p{L}\p{N}]+/gu) ?? [];

/** The first expected word not found, in order, in the actual words; undefined when all are. */
function firstMissingInOrder(expected: string[], actual: string[]): string | undefined {
  let at = 0;
  for (const [index, word] of expected.entries()) {
    while (at < actual.length && actual[at] !== word) at += 1;
    if (at === actual.length) return `${word} (expected word ${index + 1} of ${expected.length})`;
    at += 1;
  }
  return undefined;
}

before(async () => {
  workRoot = await mkdtemp(path.join(os.tmpdir(), 'from-markdown-test-'));
});

after(async () => {
  await rm(workRoot, { recursive: true, force: true });
});

describe('inspectMarkdown (before payment)', () => {
  it('accepts UTF-8, with or without a byte order mark', () => {
    expect(() => inspectMarkdown(encoder.encode('# Title\n\nΚείμενο и текст\n'), PDF_TIMEOUT_MS)).to.not.throw();
    expect(() => inspectMarkdown(new Uint8Array([0xef, 0xbb, 0xbf, 0x23, 0x20, 0x41]), PDF_TIMEOUT_MS)).to.not.throw();
  });

  it('refuses bytes that are not UTF-8 with CORRUPT_INPUT naming the offset and line', () => {
    const bad = new Uint8Array([...encoder.encode('ok line\nsecond é '), 0xc3, 0x28, 0x41]);
    const error = (() => { try { inspectMarkdown(bad, PDF_TIMEOUT_MS); } catch (err) { return err; } return undefined; })();
    expect(error).to.be.an.instanceof(ServiceError);
    expect((error as ServiceError).code).to.equal('CORRUPT_INPUT');
    expect((error as ServiceError).status).to.equal(422);
    expect((error as ServiceError).message).to.contain(`offset ${bad.length - 3}`);
    expect((error as ServiceError).message).to.contain('line 2');
  });

  it('finds the first bad byte exactly where a strict decoder fails', () => {
    const cases: Array<[number[], number]> = [
      [[0x41, 0x80], 1], // lone continuation byte
      [[0xc0, 0x80], 0], // overlong NUL
      [[0xe0, 0x80, 0x80], 0], // overlong three-byte form
      [[0xed, 0xa0, 0x80], 0], // UTF-16 surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0], // above U+10FFFF
      [[0x41, 0x42, 0xe2, 0x82], 2], // truncated at the end
      [[0xf5, 0x41], 0],
      [[0xf0, 0x9f, 0x98, 0x80, 0xff], 4],
      [[0xe2, 0x82, 0xac, 0xce, 0xb1], -1],
    ];
    for (const [bytes, offset] of cases) expect(firstInvalidUtf8Offset(new Uint8Array(bytes)), bytes.join(',')).to.equal(offset);
    // Random bytes: the scanner and the platform's strict decoder agree on validity, and the prefix before the offset decodes.
    const strict = new TextDecoder('utf-8', { fatal: true });
    let seed = 7;
    const random = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
    for (let round = 0; round < 500; round += 1) {
      const bytes = Uint8Array.from({ length: 1 + (random() % 8) }, () => (random() % 4 === 0 ? 0x41 : 0x80 + (random() % 128)));
      const offset = firstInvalidUtf8Offset(bytes);
      let valid = true;
      try { strict.decode(bytes); } catch { valid = false; }
      expect(offset === -1, Array.from(bytes).join(',')).to.equal(valid);
      if (offset > 0) expect(() => strict.decode(bytes.subarray(0, offset))).to.not.throw();
    }
  });

  it('refuses an empty or whitespace-only document with NO_CONTENT', () => {
    for (const bytes of [new Uint8Array(), encoder.encode(' \n\t\r\n  '), new Uint8Array([0xef, 0xbb, 0xbf, 0x0a])]) {
      const error = (() => { try { inspectMarkdown(bytes, PDF_TIMEOUT_MS); } catch (err) { return err; } return undefined; })();
      expect((error as ServiceError).code).to.equal('NO_CONTENT');
      expect((error as ServiceError).status).to.equal(422);
    }
  });
});

describe('renderMarkdownHtml', () => {
  it('escapes raw HTML, drops images and keeps only http, https and mailto links', () => {
    const html = renderMarkdownHtml([
      '<script>alert(1)</script> <img src="http://x/y.png"> <style>@import url(http://x/a.css)</style>',
      '',
      '![chart of sales](http://x/c.png) ![](http://x/d.png)',
      '',
      '[web](https://example.com/) [mail](mailto:a@example.com) [file](file:///etc/passwd) [js](javascript:alert(1)) [rel](notes.md) <file:///etc/hosts>',
    ].join('\n'), 'A <b>title</b> & more');
    const body = html.slice(html.indexOf('<body'));
    expect(body).to.not.contain('<script');
    expect(body).to.not.contain('<img');
    expect(body).to.not.contain('<style');
    expect(body).to.contain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(body).to.contain('@import url(http://x/a.css)');
    expect(body).to.contain('[chart of sales]');
    expect(body).to.not.contain('c.png');
    expect(body.match(/href="[^"]*"/g)).to.equal(['href="https://example.com/"', 'href="mailto:a@example.com"']);
    expect(body).to.contain(' file js rel ');
    expect(body).to.contain('file:///etc/hosts');
    expect(html).to.contain('<title>A &lt;b&gt;title&lt;/b&gt; &amp; more</title>');
  });

  it('leaves the title out when none is given', () => {
    expect(renderMarkdownHtml('text')).to.not.contain('<title>');
    expect(renderMarkdownHtml('text', '  ')).to.not.contain('<title>');
  });
});

const LONG_TOKEN = `unbroken${'x'.repeat(180)}end`;
const RICH_MARKDOWN = `# Quarterly Report

Opening paragraph with *emphasis*, **strong words**, ~~struck text~~ and \`inline code\`. Read [the documentation](https://example.com/docs?a=1&b=2) or [write to us](mailto:team@example.org). A [relative link](notes.md) stays plain text.

## Lists and Quotes

1. First ordered item
   - nested bullet one
   - nested bullet two
     1. deeply nested ordered
2. Second ordered item

- loose bullet alpha
- loose bullet beta

> Quoted paragraph that continues.
>
> > Nested quotation here.

### Code Samples

\`\`\`
function wraps(first, second) { return first + second + " and a comment that keeps going well past the right margin of an A4 page"; }
${LONG_TOKEN}
\`\`\`

    indented code block line
    second indented line

## Tables and Scripts

| Name | Quantity | Remark |
|:-----|---------:|:------:|
| apples | 12 | fresh |
| pears | 7 | ripe |

![Diagram of flows](https://example.com/diagram.png)

Greek: Ελληνικά γράμματα. Cyrillic: Кириллица и текст. Chinese: before 漢字 after.

# Closing Words

Final sentence of the document.
`;

describe('fromMarkdown: a document with every construct', () => {
  let pdf: Uint8Array;
  let text: string;

  before(async () => {
    pdf = await typeset(RICH_MARKDOWN, 'Quarterly Report Ω Ж');
    text = await pdftotext(pdf);
  });

  it('is a valid A4 PDF with the title field as its title metadata', async () => {
    await tool('qpdf', ['--check', await toFile(pdf, 'rich.pdf')]);
    const info = await tool('pdfinfo', ['-'], pdf);
    expect(info).to.match(/^Title:\s+Quarterly Report Ω Ж$/m);
    expect(info).to.match(/^Page size:\s+595\.\d+ x 841\.\d+ pts \(A4\)$/m);
  });

  it('embeds every font as a subset: DejaVu Sans, its bold and oblique, and DejaVu Sans Mono', async () => {
    const rows = (await tool('pdffonts', ['-'], pdf)).split('\n').slice(2).filter((row) => row.trim() !== '');
    expect(rows.length).to.be.at.least(4);
    for (const row of rows) {
      const [name, , , , emb, sub] = row.trim().split(/\s+/);
      expect(emb, row).to.equal('yes');
      expect(sub, row).to.equal('yes');
      expect(name, row).to.match(/^[A-Z]{6}\+DejaVu-Sans/);
    }
    const names = rows.map((row) => row.split(/\s+/)[0]!.slice(7));
    expect(names).to.include(['DejaVu-Sans', 'DejaVu-Sans-Bold', 'DejaVu-Sans-Oblique', 'DejaVu-Sans-Mono']);
  });

  it('makes http(s) and mailto links clickable with the right URIs, and nothing else', async () => {
    expect(await linkUris(pdf)).to.equal(['https://example.com/docs?a=1&b=2', 'mailto:team@example.org']);
  });

  it('builds the outline from the headings', async () => {
    const outline = (await tool('mutool', ['show', await toFile(pdf, 'outline.pdf'), 'outline']))
      .split('\n').filter((line) => line.includes('"'))
      .map((line) => { const match = /^[-+|]?(\t+)"(.*)"\t/.exec(line)!; return `${match[1]!.length} ${match[2]}`; });
    const headings = [...RICH_MARKDOWN.matchAll(/^(#{1,6}) (.+)$/gm)].map((match) => `${match[1]!.length} ${match[2]}`);
    expect(outline).to.equal(headings);
  });

  it('contains every word of the input in order', () => {
    const source = RICH_MARKDOWN
      .replace(/\]\([^)]*\)/g, ']') // link and image destinations are not shown
      .replace(LONG_TOKEN, '') // checked on its own below: wrapping splits it
      .replace(/\p{Script=Han}/gu, ''); // no Han glyphs: see the next test
    const missing = firstMissingInOrder(words(source), words(text));
    expect(missing, `missing word: ${missing}`).to.be.undefined();
    expect(text.replace(/\s+/g, '')).to.contain(LONG_TOKEN);
  });

  it('draws Greek and Cyrillic, and shows U+FFFD for characters the fonts cannot draw', () => {
    expect(text).to.contain('Ελληνικά γράμματα');
    expect(text).to.contain('Кириллица и текст');
    expect(text).to.match(/before \uFFFD\uFFFD after/);
  });

  it('wraps code blocks inside the page instead of running off it', async () => {
    const bbox = await tool('pdftotext', ['-bbox', '-', '-'], pdf);
    const pageWidth = Number(/<page width="([\d.]+)"/.exec(bbox)![1]);
    const rightEdges = [...bbox.matchAll(/xMax="([\d.]+)"/g)].map((match) => Number(match[1]));
    expect(rightEdges.length).to.be.above(100);
    // 18 mm right margin: nothing may pass it.
    expect(Math.max(...rightEdges)).to.be.below(pageWidth - 50);
  });

  it('numbers the pages in the footer as "page / pages"', async () => {
    const pages = Number(/^Pages:\s+(\d+)$/m.exec(await tool('pdfinfo', ['-'], pdf))![1]);
    const lastPage = await pdftotext(pdf, '-f', String(pages), '-l', String(pages));
    expect(lastPage).to.match(new RegExp(`\\b${pages}\\s*/\\s*${pages}\\s*$`));
  });
});

describe('fromMarkdown: a 200-row table', () => {
  it('breaks across pages and repeats its header row on each page', async () => {
    const rows = Array.from({ length: 200 }, (_, index) => `| item${index + 1} | ${(index + 1) * 3} | note${index + 1} |`);
    const pdf = await typeset(['| Product | Amount | Comment |', '|---|--:|---|', ...rows].join('\n'));
    const pages = Number(/^Pages:\s+(\d+)$/m.exec(await tool('pdfinfo', ['-'], pdf))![1]);
    expect(pages).to.be.at.least(3);
    for (let page = 1; page <= pages; page += 1) {
      const pageWords = words(await pdftotext(pdf, '-layout', '-f', String(page), '-l', String(page)));
      expect(pageWords.slice(0, 3), `page ${page}`).to.equal(['Product', 'Amount', 'Comment']);
      expect(pageWords[3], `page ${page}`).to.match(/^item\d+$/);
    }
    const all = words(await pdftotext(pdf, '-layout'));
    const expected = rows.flatMap((row) => words(row));
    expect(firstMissingInOrder(expected, all)).to.be.undefined();
  });
});

describe('fromMarkdown: nothing is ever fetched', () => {
  let server: http.Server;
  let base: string;
  const requests: string[] = [];
  let passwdLine: string;

  before(async () => {
    server = http.createServer((request, response) => {
      requests.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'text/css' });
      response.end('body { color: red }');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    passwdLine = (await readFile('/etc/passwd', 'utf8')).split('\n')[0]!;
    expect(passwdLine.length).to.be.above(5);
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function expectNothingLeaked(pdf: Uint8Array): Promise<void> {
    expect(requests).to.equal([]);
    const text = await pdftotext(pdf);
    expect(text).to.not.contain(passwdLine);
    // Streams uncompressed, so file content hidden anywhere (not just in the text layer) would show.
    const raw = await tool('qpdf', ['--qdf', '--object-streams=disable', '--stream-data=uncompress', await toFile(pdf, `leak-${jobCounter}.pdf`), '-']);
    expect(raw).to.not.contain(passwdLine);
    expect(await tool('pdfdetach', ['-list', await toFile(pdf, `attach-${jobCounter}.pdf`)])).to.match(/^0 embedded files/);
  }

  it('typesets Markdown whose images, links and raw HTML point at a local server and at /etc/passwd', async () => {
    const pdf = await typeset([
      `# Hostile ![tracker](${base}/heading.png)`,
      '',
      `![local image](${base}/image.png) ![passwd](file:///etc/passwd) [server link](${base}/page) [passwd link](file:///etc/passwd)`,
      '',
      `<img src="${base}/raw.png"> <link rel="stylesheet" href="${base}/raw.css"> <iframe src="file:///etc/passwd"></iframe>`,
      '',
      `<style>@import url(${base}/import.css); body { background: url(file:///etc/passwd) } @font-face { font-family: X; src: url(${base}/font.ttf) }</style>`,
      '',
      `<a rel="attachment" href="file:///etc/passwd">attach</a> <object data="file:///etc/passwd"></object>`,
    ].join('\n'));
    await expectNothingLeaked(pdf);
    // The server link is a clickable link (links are not fetched); the file: link is plain text.
    expect(await linkUris(pdf)).to.equal([`${base}/page`]);
    const text = await pdftotext(pdf);
    expect(text).to.contain('[local image]');
    expect(text).to.contain('@import url(');
  });

  it('refuses every fetch in the renderer itself, even for HTML that asks for them', async () => {
    const svg = encodeURIComponent(`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><image href="${base}/svg-image.png" width="10" height="10"/></svg>`);
    const html = `<!DOCTYPE html><html><head>
<link rel="stylesheet" href="${base}/head.css">
<link rel="attachment" href="file:///etc/passwd">
<style>@import url("${base}/import.css"); @font-face { font-family: Remote; src: url("${base}/font.woff") }
body { font-family: Remote; background: url("file:///etc/passwd") } p::after { content: url("${base}/after.png") }</style>
</head><body><p>renderer door check</p>
<img src="${base}/img.png"><img src="file:///etc/passwd"><img src="data:image/svg+xml,${svg}">
<object data="${base}/object.svg" type="image/svg+xml"></object><embed src="file:///etc/passwd">
<a rel="attachment" href="file:///etc/passwd">attachment</a>
<pre style="background-image: url('${base}/inline.png')">x</pre>
</body></html>`;
    const pdf = await renderHtmlToPdf(html, { workDir: await newJobDir(), timeoutMs: TOOL_TIMEOUT });
    expect(await pdftotext(pdf)).to.contain('renderer door check');
    await expectNothingLeaked(pdf);
  });
});

describe('fromMarkdown: refused inputs', () => {
  it('answers NO_CONTENT for an empty document and CORRUPT_INPUT for invalid UTF-8', async () => {
    await expect(typeset('   \n\n')).to.reject(ServiceError, /empty/);
    const error = await expect(typeset(new Uint8Array([0x23, 0x20, 0xff, 0x0a]))).to.reject(ServiceError);
    expect(error.code).to.equal('CORRUPT_INPUT');
    expect(error.message).to.contain('offset 2');
  });
});

// WeasyPrint 57 lays out a run of text without a space again for every line it fills, and a
// long text again for every line when its first ~120 characters fit on one: each shape below
// took past the 120 s job deadline (a 40 KB word alone took 14 s) before the renderer gave long
// runs break opportunities and bounded its text nodes (workers/pdf/markdown-html.ts).
const ZWSP = '\u200b';
const repeat = (unit: string, bytes: number) => unit.repeat(Math.floor(bytes / unit.length));
const longWord = (bytes: number) => repeat('abcdefghij', bytes);
const bodyOf = (html: string) => html.slice(html.indexOf('<body>'));
/**
 * The text layer without the page footers (`2 / 7`), and of the rest only the characters the
 * expected text is made of: no line ends, and no table header repeated on each page.
 */
function joinedText(layer: string, expected: string): string {
  const alphabet = new Set(expected);
  return [...layer.replace(/\d+ \/ \d+/g, '')].filter((char) => alphabet.has(char)).join('');
}
/** The text nodes of the HTML body, in characters. */
const textNodeLengths = (html: string) => bodyOf(html).split(/<[^>]*>/).map((node) => [...node].length);

describe('renderMarkdownHtml: break opportunities in long runs', () => {
  it('breaks a run of more than 32 characters after its 32nd character and every 16 after, and leaves shorter words alone', () => {
    const html = renderMarkdownHtml(`${'a'.repeat(100)} ${'b'.repeat(RUN_LIMIT)}`);
    const paragraph = /<p>(.*)<\/p>/.exec(html)![1]!;
    const [run, word] = paragraph.split(' ');
    expect(run!.split(ZWSP).map((piece) => piece.length)).to.equal([RUN_LIMIT, RUN_STEP, RUN_STEP, RUN_STEP, RUN_STEP, 4]);
    expect(word).to.equal('b'.repeat(RUN_LIMIT));
  });

  it('counts a run across inline elements as one run', () => {
    for (const unit of ['ab`cd`', 'ab[cd](https://e.com/)']) {
      const html = renderMarkdownHtml(repeat(unit, unit.length * 20));
      expect(bodyOf(html).replace(/<[^>]*>/g, '').trim().split(ZWSP).map((piece) => piece.length), unit).to.equal([RUN_LIMIT, RUN_STEP, RUN_STEP, RUN_STEP]);
    }
  });

  it('breaks runs in code blocks, inline code, link text, table cells and image text too', () => {
    const run = longWord(200);
    for (const markdown of ['```\n' + run + '\n```', '    ' + run, '`' + run + '`', `<https://example.com/${run}>`, `| a |\n|---|\n| ${run} |`, `![${run}](https://example.com/a.png)`]) {
      const html = bodyOf(renderMarkdownHtml(markdown));
      expect(html.includes(ZWSP), markdown.slice(0, 30)).to.be.true();
      expect(html.replace(/<[^>]*>/g, '').replaceAll(ZWSP, '').includes(run), markdown.slice(0, 30)).to.be.true();
    }
  });

  it('never breaks between a letter and its accents', () => {
    const accented = 'e\u0301\u0302'.repeat(40);
    const html = renderMarkdownHtml(accented);
    expect(html).to.contain(ZWSP);
    for (const piece of /<p>(.*)<\/p>/.exec(html)![1]!.split(ZWSP)) expect(piece.startsWith('e'), JSON.stringify(piece)).to.be.true();
  });

  it(`starts a new text node every ${BOX_LIMIT} characters or so, at a space or break opportunity`, () => {
    const shapes = [repeat('i ', 20_000), longWord(20_000), '```\n' + repeat('ab cd\n', 20_000) + '```', repeat('word ', 20_000), repeat('ab**cd**', 20_000)];
    for (const markdown of shapes) {
      const lengths = textNodeLengths(renderMarkdownHtml(markdown));
      expect(Math.max(...lengths), markdown.slice(0, 12)).to.be.at.most(BOX_LIMIT + RUN_LIMIT + 1);
    }
  });

  it(`keeps a link whose destination is longer than ${LINK_LIMIT} characters as text: the PDF repeats it on every line the link is on`, () => {
    const long = `https://example.com/${'p'.repeat(LINK_LIMIT)}`;
    const limit = long.slice(0, LINK_LIMIT);
    const body = bodyOf(renderMarkdownHtml(`[long](${long}) [limit](${limit}) <${long}>`));
    expect(body.match(/href="[^"]*"/g)?.map((href) => href.length)).to.equal([`href="${limit}"`.length]);
    expect(body.replace(/<[^>]*>/g, '').replaceAll(ZWSP, '').includes(`long limit ${long}`)).to.be.true();
  });
});

describe('fromMarkdown: hostile runs typeset within the job deadline', () => {
  const cases: Array<{ name: string; markdown: string; text: string }> = [
    { name: 'a 150 KB single word', markdown: longWord(150_000), text: longWord(150_000) },
    { name: 'a 16 KB run across inline elements', markdown: repeat('ab`cd`', 16_000), text: repeat('abcd', 10_664) },
    { name: 'a 150 KB line in a code block', markdown: '```\n' + longWord(150_000) + '\n```', text: longWord(150_000) },
    { name: 'a 200 KB inline code span', markdown: '`' + longWord(200_000) + '`', text: longWord(200_000) },
    { name: 'a 200 KB URL', markdown: `<https://example.com/${longWord(200_000)}>`, text: `https://example.com/${longWord(200_000)}` },
    { name: 'a 150 KB word in a table cell', markdown: `| x | y |\n|---|---|\n| ${longWord(150_000)} | z |`, text: longWord(150_000) },
    { name: '300 KB of narrow letters and spaces', markdown: repeat('i ', 300_000), text: repeat('i', 150_000) },
  ];
  for (const { name, markdown, text } of cases) {
    it(`${name}: a valid PDF whose text layer holds the text whole`, async () => {
      const pdf = await typeset(markdown);
      await tool('qpdf', ['--check', await toFile(pdf, `hostile-${jobCounter}.pdf`)]);
      const layer = await pdftotext(pdf);
      // The break opportunities are not in the text layer: lines joined give the text back.
      expect(layer.includes(ZWSP), 'U+200B in the text layer').to.be.false();
      expect(joinedText(layer, text).includes(text), 'the text whole in the text layer').to.be.true();
      expect(pdf.length).to.be.below(2 * 1024 * 1024);
    });
  }

  it('a 200 KB URL is not clickable (longer than a link may be) but shows whole', async () => {
    expect(await linkUris(await typeset(`<https://example.com/${longWord(200_000)}>`))).to.equal([]);
  });
});

describe('fromMarkdown: tabs in code blocks', () => {
  it('are typeset as the spaces up to the next tab stop, so the text layer copies out the code in order', async () => {
    const pdf = await typeset('```\nall:\n\tcc -o x x.c\n\techo\tdone\n```\n\n    a\tb\n');
    const text = await pdftotext(pdf, '-layout');
    // WeasyPrint 57 garbled the characters around a tab: `echo<tab>done` came out as `e<tab>cho don<tab>e`.
    expect(text).to.match(/^ +cc -o x x\.c$/m);
    expect(text).to.match(/^ +echo {2,}done$/m);
    expect(text).to.match(/^ *a {2,}b$/m);
  });
});

describe('fromMarkdown: deep lists and quotes', () => {
  it('keeps the text of lists and quotes 40 levels deep on the page', async () => {
    let list = '';
    for (let level = 0; level < 20; level += 1) list += `${'  '.repeat(level)}- level${level} item\n`;
    const markdown = `${'>'.repeat(40)} deepest quoted words\n\n${list}`;
    const pdf = await typeset(markdown);
    const bbox = await tool('pdftotext', ['-bbox', '-', '-'], pdf);
    const pageWidth = Number(/<page width="([\d.]+)"/.exec(bbox)![1]);
    const placed = [...bbox.matchAll(/<word xMin="([\d.-]+)" yMin="[\d.-]+" xMax="([\d.-]+)" yMax="[\d.-]+">([^<]*)</g)].map((match) => ({ xMin: Number(match[1]), xMax: Number(match[2]), word: match[3]! }));
    for (const word of ['deepest', 'quoted', 'words', 'level19']) expect(placed.map((p) => p.word), word).to.include(word);
    for (const { xMin, xMax, word } of placed) {
      expect(xMin, word).to.be.at.least(0);
      expect(xMax, word).to.be.below(pageWidth - 50);
    }
  });

  it('refuses lists and quotes nested deeper than markdown-it reads (100 levels) instead of leaving the rest out', async () => {
    const error = await expect(typeset(`${'>'.repeat(100)} lost words\n\nafter`)).to.reject(ServiceError);
    expect(error.code).to.equal('LIMIT_EXCEEDED');
    expect(error.message).to.contain('100 levels');
    await expect(typeset(`${'>'.repeat(99)} kept words\n\nafter`)).to.not.reject();
  });
});

// Real Markdown nobody here wrote: the README and CHANGELOG files of the installed packages
// (package-lock.json fixes which), read at test time.
const NODE_MODULES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../node_modules');
const MB = 1024 * 1024;

/** Every README.md and CHANGELOG.md of a package installed at the top of node_modules, in path order. */
async function packageMarkdownFiles(): Promise<string[]> {
  const packages: string[] = [];
  for (const entry of (await readdir(NODE_MODULES)).sort()) {
    if (entry.startsWith('.')) continue;
    if (!entry.startsWith('@')) packages.push(path.join(NODE_MODULES, entry));
    else for (const scoped of (await readdir(path.join(NODE_MODULES, entry))).sort()) packages.push(path.join(NODE_MODULES, entry, scoped));
  }
  const files: string[] = [];
  for (const dir of packages) {
    for (const name of ['README.md', 'CHANGELOG.md']) {
      const file = path.join(dir, name);
      if (await stat(file).then((info) => info.isFile(), () => false)) files.push(file);
    }
  }
  return files;
}

/** Those files one after another, cut at the last line end within `bytes`. */
async function packageMarkdown(bytes: number): Promise<string> {
  const parts: string[] = [];
  let total = 0;
  for (const file of await packageMarkdownFiles()) {
    if (total >= bytes) break;
    const text = `${await readFile(file, 'utf8')}\n\n`;
    parts.push(text);
    total += Buffer.byteLength(text);
  }
  expect(total, 'README and CHANGELOG files in node_modules').to.be.at.least(bytes);
  const joined = Buffer.from(parts.join('')).subarray(0, bytes);
  return joined.subarray(0, joined.lastIndexOf(0x0a) + 1).toString('utf8');
}

/** The unit repeated to at most `bytes` of UTF-8. */
const repeatBytes = (unit: string, bytes: number) => unit.repeat(Math.floor(bytes / Buffer.byteLength(unit)));
const estimatePerKb = (markdown: string) => estimatedLayoutMs(markdown) / (Buffer.byteLength(markdown) / 1024);
const DEADLINE_SHARE = `passes 60 s, 50 % of the job's 120 s deadline`;
const PER_BYTE = `the Markdown costs far more to typeset per byte than ordinary documents: its estimated layout time passes both 3.2 s and ${LAYOUT_MS_PER_KB} ms per KB`;

function refusal(markdown: string, deadlineMs = PDF_TIMEOUT_MS): ServiceError | undefined {
  try {
    inspectMarkdown(encoder.encode(markdown), deadlineMs);
  } catch (error) {
    expect(error).to.be.an.instanceof(ServiceError);
    return error as ServiceError;
  }
  return undefined;
}

describe('inspectMarkdown: the layout budget (before payment)', () => {
  /** The unit repeated from 100 times, doubling, until the check refuses it; and the last count it accepted. */
  const justOver = (unit: string, prefix = '') => {
    let count = 100;
    while (!refusal(prefix + unit.repeat(count))) count *= 2;
    return { refused: prefix + unit.repeat(count), accepted: prefix + unit.repeat(count / 2) };
  };
  const refuse = (markdown: string, name: string, reason: string) => {
    const error = refusal(markdown);
    expect(error, name).to.be.an.instanceof(ServiceError);
    expect(error!.code, name).to.equal('LIMIT_EXCEEDED');
    expect(error!.status, name).to.equal(413);
    expect(error!.message, name).to.contain(reason);
  };
  const prose = 'The quarterly figures were reviewed by the committee before the meeting closed. ';
  const codeLine = 'function total(rows) { return rows.reduce((sum, row) => sum + row.amount, 0); }\n';

  it('gives a document 3.2 s, or 200 ms per KB when that is more, and never more than half the job\'s deadline', () => {
    expect(layoutBudgetMs(1, PDF_TIMEOUT_MS)).to.equal(LAYOUT_BASE_MS);
    expect(layoutBudgetMs(100 * 1024, PDF_TIMEOUT_MS)).to.equal(100 * LAYOUT_MS_PER_KB);
    expect(layoutBudgetMs(MB, PDF_TIMEOUT_MS)).to.equal(PDF_TIMEOUT_MS / 2);
    // A shorter deadline (JOB_TIMEOUT_MS) shrinks the ceiling with it.
    expect(layoutBudgetMs(MB, 20_000)).to.equal(10_000);
  });

  it('refuses, past 3.2 s, Markdown that lays out a short element every few bytes (each took minutes or ran out of memory at 1 MB)', () => {
    const shapes: Array<[string, string, string?]> = [
      ['- a\n', 'list items'], ['- a\r', 'list items on old Mac line ends'], ['1. a\n', 'numbered items'], ['- - - a\n', 'lists three deep'],
      ['a\n\n', 'paragraphs'], ['# a\n', 'headings'], ['a\\\n', 'line breaks'], ['a  \n', 'line breaks by two spaces'], ['`a` ', 'code spans'],
      ['*a* ', 'emphasis'], ['> a\n', 'quotes'], ['|a|\n|-|\n\n', 'one-cell tables'], ['| a | b |\n', 'rows of a two-column table', '| a | b |\n|---|---|\n'],
    ];
    for (const [unit, name, prefix] of shapes) {
      const { refused, accepted } = justOver(unit, prefix);
      expect(estimatedLayoutMs(refused), name).to.be.above(LAYOUT_BASE_MS);
      expect(estimatePerKb(refused), name).to.be.above(LAYOUT_MS_PER_KB);
      refuse(refused, name, PER_BYTE);
      expect(refusal(accepted), name).to.be.undefined();
      const oneMb = (prefix ?? '') + repeatBytes(unit, MB - 100);
      refuse(oneMb, `${name} at 1 MB`, DEADLINE_SHARE);
      refuse(oneMb, `${name} at 1 MB`, `and its beginning costs far more to typeset per byte than ordinary documents`);
    }
    const columns = (count: number) => `${'|a'.repeat(count)}|\n${'|-'.repeat(count)}|\n`;
    refuse(columns(5_000), 'one row of 5,000 columns', PER_BYTE);
    // 100 columns leave the first a character per line: its cells are counted that way.
    refuse(columns(100) + repeat(`| ${longWord(400)} |\n`, 20_000), 'long cells in narrow columns', PER_BYTE);
  });

  it('refuses Markdown estimated past half the job\'s deadline, whatever its shape, and says so', async () => {
    refuse(repeat('[a](https://e.com/) ', MB - 100), '1 MB of links', DEADLINE_SHARE);
    refuse(repeat('<https://e.com/> ', MB - 100), '1 MB of autolinks', DEADLINE_SHARE);
    // The two changelogs of node_modules densest in lists, links and code (es-abstract, qs), again and again to 1 MB.
    const dense = `${await readFile(path.join(NODE_MODULES, 'es-abstract/CHANGELOG.md'), 'utf8')}\n\n${await readFile(path.join(NODE_MODULES, 'qs/CHANGELOG.md'), 'utf8')}\n\n`;
    refuse(repeat(dense, MB - 100), '1 MB of dense changelogs', DEADLINE_SHARE);
    expect(refusal(repeat(dense, 600 * 1024)), '600 KB of them').to.be.undefined();
    // A job given less time (JOB_TIMEOUT_MS) is given half of it.
    const error = refusal(await readFile(path.join(NODE_MODULES, 'axios/CHANGELOG.md'), 'utf8'), 8_000);
    expect(error?.message).to.contain(`passes 4 s, 50 % of the job's 8 s deadline`);
  });

  it('accepts every README and CHANGELOG in node_modules, and 1 MB of them, of running text, code or one long word', async () => {
    const files = await packageMarkdownFiles();
    expect(files.length).to.be.at.least(100);
    let densest = 0;
    for (const file of files) {
      const markdown = await readFile(file, 'utf8');
      if (markdown.trim() === '') continue; // an empty README: NO_CONTENT
      expect(refusal(markdown), path.relative(NODE_MODULES, file)).to.be.undefined();
      if (markdown.length > 8_000) densest = Math.max(densest, estimatePerKb(markdown));
    }
    // The per-byte rule leaves room above the densest real document.
    expect(densest * 1.5).to.be.below(LAYOUT_MS_PER_KB);
    const shapes = [
      await packageMarkdown(MB), repeatBytes(`${prose.repeat(4)}\n\n`, MB), repeatBytes(prose, MB), longWord(MB),
      '```\n' + repeatBytes(codeLine, MB - 100) + '```\n', repeatBytes(`    ${codeLine}`, MB), repeatBytes(`# ${prose}${prose}\n`, MB),
      repeatBytes('Η ομάδα συμφώνησε να επανεξετάσει τα στοιχεία. Команда согласилась пересмотреть данные. ', MB),
      repeatBytes('漢字仮名交じり文 ', MB),
    ];
    for (const markdown of shapes) {
      expect(Buffer.byteLength(markdown), markdown.slice(0, 20)).to.be.within(MB - 4096, MB);
      expect(refusal(markdown), markdown.slice(0, 20)).to.be.undefined();
    }
    // Half a megabyte of a report with every construct and a heading every 300 bytes.
    expect(refusal(repeatBytes(`${RICH_MARKDOWN}\n`, MB / 2))).to.be.undefined();
  });

  it('estimates every kind of element at least at what WeasyPrint spends on it (bench/from-markdown.ts, milliseconds of CPU)', () => {
    // Measured on the benchmark machine, each shape typeset alone for about 3 s, less Python's start-up (0.54 s).
    const milliseconds = [
      ['a\n\n', 0.881], ['`a` ', 1.057], ['*a* ', 0.84], ['[a](https://e.com/) ', 1.046], ['<https://e.com/> ', 1.177],
      ['a  \n', 1.044], ['# a\n', 1.099], ['- a\n', 1.905], ['1. a\n', 2.309], ['- - - a\n', 5.806], ['| a | b |\n', 2.527],
      ['|a|\n|-|\n\n', 2.742], [prose, 0.575], [codeLine, 0.744],
    ] as const;
    for (const [unit, cost] of milliseconds) {
      const markdown = unit.startsWith('| a') ? `| a | b |\n|---|---|\n${repeat(unit, 50_000)}` : unit === codeLine ? `\`\`\`\n${repeat(unit, 50_000)}\`\`\`\n` : repeat(unit, 50_000);
      const elements = Math.floor(50_000 / unit.length);
      expect(estimatedLayoutMs(markdown) / elements, unit).to.be.at.least(cost);
    }
  });

  it('estimates Markdown of many pages or very long lines at least at what WeasyPrint spends on it (more per page, or per byte, the more there is)', () => {
    // Measured on the benchmark machine (bench/from-markdown.ts), seconds of CPU less Python's start-up (0.54 s).
    const headings = (bytes: number) => Array.from({ length: Math.floor(bytes / 24) }, (_, i) => `## Section ${String(i).padStart(6, '0')} title\n`).join('');
    const measured: Array<[string, string, number]> = [
      ['60 KB of two-letter code lines, 323 pages', '```\n' + repeatBytes('ab\n', 60_000) + '```\n', 5_630],
      ['120 KB of them, 646 pages', '```\n' + repeatBytes('ab\n', 120_000) + '```\n', 12_750],
      ['324 KB of them, 1,750 pages', '```\n' + repeatBytes('ab\n', 323_639) + '```\n', 42_190],
      ['704 KB of short headings', headings(704_496), 47_970],
      ['1 MB of long headings, 1,128 pages', repeatBytes(`# ${prose}Each region reported its own numbers, and the totals were checked twice.\n`, MB), 21_240],
      ['a 1 MB word', longWord(MB - 64), 10_950],
      ['524 KB of ab**cd** on one line', `${repeatBytes('ab**cd**', 524_304)}\n`, 59_800],
    ];
    for (const [name, markdown, milliseconds] of measured) expect(estimatedLayoutMs(markdown), name).to.be.at.least(milliseconds);
    refuse('```\n' + repeatBytes('ab\n', 350 * 1024) + '```\n', '350 KB of two-letter code lines', DEADLINE_SHARE);
  });

  it('counts every line of a code block that may have ended as code and as text, whichever weighs more', () => {
    const items = repeat('- a\n', 20_000);
    // After a link definition's label, a fence may be its destination: the lines after it are list items.
    expect(estimatedLayoutMs(`[a]:\n\`\`\`\n${items}`)).to.be.at.least(estimatedLayoutMs(items));
    // A fence in a list item ends with the item.
    expect(estimatedLayoutMs(`- a\n\n  \`\`\`\n  x\nb\n${items}`)).to.be.at.least(estimatedLayoutMs(items));
    // A fence at the margin after a blank line is code until its closing fence: its lines are code, not list items.
    expect(estimatedLayoutMs(`a\n\n\`\`\`\n${items}`)).to.be.below(estimatedLayoutMs(items) / 2);
  });

  it('counts every element the renderer makes at 0.4 ms at least, so the estimate bounds the elements and the memory they take (10-30 KB each)', () => {
    const shapes = [
      repeat('- a\n', 5000), repeat('a\n\n', 5000), repeat('# a\n', 5000), repeat('a\\\n', 5000), repeat('`a` ', 5000), repeat('*a* ', 5000),
      repeat('**a** ', 5000), repeat('~~a~~ ', 5000), repeat('[a](https://e.com/) ', 5000), repeat('<https://e.com/> ', 5000), repeat('![a](b) ', 5000),
      repeat('> a\n>\n', 5000), repeat('1. a\n', 5000), repeat('- - - a\n', 5000), repeat('a  \n', 5000), repeat('ab**cd**', 5000),
      `${'|a'.repeat(2000)}|\n${'|-'.repeat(2000)}|\n${'|a'.repeat(2000)}|\n`, `| a | b |\n|---|---|\n${repeat('| a | b |\n', 3000)}`,
      '```\n' + repeat('a\n', 5000) + '```', '```\n' + repeat('\n', 5000) + '```', repeat('i ', 50_000), longWord(50_000), RICH_MARKDOWN,
    ];
    for (const markdown of shapes) {
      const elements = (bodyOf(renderMarkdownHtml(markdown)).match(/<[a-z]/g) ?? []).length - 1;
      expect(estimatedLayoutMs(markdown), markdown.slice(0, 20)).to.be.at.least(0.4 * elements);
    }
  });
});

const pageCountOf = async (pdf: Uint8Array) => Number(/^Pages:\s+(\d+)$/m.exec(await tool('pdfinfo', ['-'], pdf))![1]);
const RUNNING_TEXT = `${'The quarterly figures were reviewed by the committee before the meeting closed. '.repeat(4)}\n\n`;

describe('fromMarkdown: ordinary documents up to the 1 MB limit', () => {
  it('typesets 1 MB of README and CHANGELOG files from node_modules (about 30 s of CPU): 300 to 600 pages with their words', { timeout: 400_000 }, async () => {
    const markdown = await packageMarkdown(MB);
    const pdf = await typeset(markdown, undefined, 360_000);
    expect(await pageCountOf(pdf)).to.be.within(300, 600);
    // The last plain paragraph (no marks, at least 8 words) is on the last pages, whole.
    const plain = markdown.split(/\n\s*\n/).map((block) => block.trim()).filter((block) => /^[A-Za-z][^[\]<>`|*_#\\~=]*$/.test(block) && words(block).length >= 8);
    const lastPages = await pdftotext(pdf, '-f', String((await pageCountOf(pdf)) - 10));
    expect(firstMissingInOrder(words(plain.at(-1)!), words(lastPages))).to.be.undefined();
  });
});

describe('paid over HTTP on the local Base chain: documents past the old 3.2 s budget', () => {
  let t: TestService;
  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });
  const url = () => `${t.url}/v1/pdf/from-markdown`;
  const upload = (markdown: string) => form([{ bytes: encoder.encode(markdown), name: 'document.md', type: 'text/markdown' }]);

  it('a real 152 KB CHANGELOG (axios), 150 KB of README and CHANGELOG files and 1 MB of running text: 200, the PDF, 0.01 USD each', { timeout: 300_000 }, async () => {
    const documents: Array<[string, string, number, number]> = [
      ['axios CHANGELOG.md', await readFile(path.join(NODE_MODULES, 'axios/CHANGELOG.md'), 'utf8'), 40, 70],
      ['150 KB of README and CHANGELOG files', await packageMarkdown(150 * 1024), 60, 110],
      ['1 MB of running text', repeatBytes(RUNNING_TEXT, MB), 280, 320],
    ];
    const payFetch = await t.payFetch('base');
    for (const [name, markdown, fewestPages, mostPages] of documents) {
      // Each was refused before (estimated past the old budget of 3.2 s).
      expect(estimatedLayoutMs(markdown), name).to.be.above(LAYOUT_BASE_MS);
      const before = await balancesOf(t.evm);
      const res = await payFetch(url(), { method: 'POST', body: upload(markdown) });
      expect(res.status, name).to.equal(200);
      expect(res.headers.get('content-type'), name).to.equal('application/pdf');
      expect(await pageCountOf(new Uint8Array(await res.arrayBuffer())), name).to.be.within(fewestPages, mostPages);
      const after = await balancesOf(t.evm);
      expect(before.payer - after.payer, name).to.equal(10_000n);
      expect(after.payTo - before.payTo, name).to.equal(10_000n);
    }
  });

  it('refuses dense and overlong Markdown with 413 before any payment is asked for, saying which rule and why', async () => {
    const refused: Array<[string, string, string]> = [
      ['1 MB of one-letter list items', repeatBytes('- a\n', MB), 'and its beginning costs far more to typeset per byte than ordinary documents'],
      ['20 KB of one-letter paragraphs', repeatBytes('a\n\n', 20 * 1024), PER_BYTE],
      ['1 MB of links', repeatBytes('[a](https://e.com/) ', MB), DEADLINE_SHARE],
    ];
    for (const [name, markdown, reason] of refused) {
      const before = await balancesOf(t.evm);
      const res = await fetch(url(), { method: 'POST', body: upload(markdown) });
      expect(res.status, name).to.equal(413);
      expect(res.headers.get('payment-required'), name).to.be.null();
      const { error } = await res.json() as { error: { code: string; message: string } };
      expect(error.code, name).to.equal('LIMIT_EXCEEDED');
      expect(error.message, name).to.contain(reason);
      expect(await balancesOf(t.evm), name).to.equal(before);
    }
  });
});
