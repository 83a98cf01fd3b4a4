// /v1/pdf/from-markdown: what a reader of the PDF sees (fonts, links, outline, text order,
// table pagination, metadata) and that the input can never make the renderer fetch anything.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ServiceError } from '../core/errors.js';
import { firstInvalidUtf8Offset, inspectMarkdown } from '../checks/markdown.js';
import { plannedJob } from './support/jobs.js';
import { renderHtmlToPdf, renderMarkdownHtml } from '../workers/pdf/from-markdown.js';
import { runTool } from '../tools/runner.js';

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

async function typeset(markdown: string | Uint8Array, title?: string): Promise<Uint8Array> {
  const bytes = typeof markdown === 'string' ? encoder.encode(markdown) : markdown;
  const planned = await plannedJob('pdf.from-markdown', [bytes], title === undefined ? {} : { title }, { root: await newJobDir(), timeoutMs: 90_000 });
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
    expect(() => inspectMarkdown(encoder.encode('# Title\n\nΚείμενο и текст\n'))).to.not.throw();
    expect(() => inspectMarkdown(new Uint8Array([0xef, 0xbb, 0xbf, 0x23, 0x20, 0x41]))).to.not.throw();
  });

  it('refuses bytes that are not UTF-8 with CORRUPT_INPUT naming the offset and line', () => {
    const bad = new Uint8Array([...encoder.encode('ok line\nsecond é '), 0xc3, 0x28, 0x41]);
    const error = (() => { try { inspectMarkdown(bad); } catch (err) { return err; } return undefined; })();
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
      const error = (() => { try { inspectMarkdown(bytes); } catch (err) { return err; } return undefined; })();
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
