// pdf.markdown: Markdown from the PDF's own text layer, computed locally with mutool.
// `mutool draw -F stext` gives glyphs with fonts and boxes; a small `mutool run` script
// gives link annotations with their rectangles (stext has none). Pages are read in
// chunks so a long document never holds all of its structured text in memory at once.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runTool } from '../../runner.js';
import { timeLeft, type WorkFunction } from '../../contract.js';
import { fail } from '../../../server/errors.js';
import { convertStext, type PageLink } from './convert.js';

const CHUNK_PAGES = 40;
const MAX_STEXT_BYTES = 256 * 1024 * 1024;

// Prints one JSON array of [pageIndex, [x0, y0, x1, y1], uri] for the pages first..last (1-based).
const LINKS_SCRIPT = `
var doc = new Document(scriptArgs[0]);
var first = parseInt(scriptArgs[1], 10) - 1, last = parseInt(scriptArgs[2], 10) - 1;
var out = [];
for (var i = first; i <= last && i < doc.countPages(); i++) {
  var links = doc.loadPage(i).getLinks();
  for (var j = 0; j < links.length; j++) {
    var uri = links[j].uri;
    if (typeof uri === 'string' && /^(https?:|mailto:|ftp:)/i.test(uri)) out.push([i - first, links[j].bounds, uri]);
  }
}
print(JSON.stringify(out));
`;

function parseLinks(stdout: Uint8Array): PageLink[] {
  try {
    const raw = JSON.parse(Buffer.from(stdout).toString('utf8')) as [number, number[], string][];
    return raw
      .filter((l) => Array.isArray(l) && Array.isArray(l[1]) && l[1].length === 4 && typeof l[2] === 'string')
      .map(([page, rect, uri]) => ({ page, rect: rect as [number, number, number, number], uri }));
  } catch {
    return []; // links are an enrichment: a PDF whose annotations cannot be read still converts
  }
}

export const markdown: WorkFunction = async (input) => {
  const file = input.files[0];
  if (!file?.path) fail('UNSUPPORTED_TYPE', 'Upload one PDF file.', { field: 'file' });
  const pdf = path.basename(file.path);
  const cwd = input.jobDir;
  const script = 'links.js';
  await writeFile(path.join(cwd, script), LINKS_SCRIPT, { mode: 0o600 });
  const pageCount = Math.max(1, file.pages ?? 1);
  const parts: string[] = [];
  for (let first = 1; first <= pageCount; first += CHUNK_PAGES) {
    const last = Math.min(pageCount, first + CHUNK_PAGES - 1);
    const range = `${first}-${last}`;
    const [text, links] = await Promise.all([
      runTool('mutool', ['draw', '-q', '-F', 'stext', '-o', '-', pdf, range], { cwd, timeoutMs: timeLeft(input), maxStdout: MAX_STEXT_BYTES }),
      runTool('mutool', ['run', script, pdf, String(first), String(last)], { cwd, timeoutMs: timeLeft(input), maxStdout: 16 * 1024 * 1024 }),
    ]);
    const xml = Buffer.from(text.stdout).toString('utf8');
    if (!xml.includes('<page')) {
      if (/password|encrypt/i.test(text.stderr)) fail('ENCRYPTED_PDF', 'The PDF is password-protected; remove the password first.', { field: 'file' });
      fail('CORRUPT_INPUT', 'The PDF could not be read.', { field: 'file' });
    }
    parts.push(convertStext(xml, links.exitCode === 0 ? parseLinks(links.stdout) : [], first));
  }
  const body = parts.filter((p) => p.trim()).join('\n');
  return { body: new TextEncoder().encode(body), mediaType: 'text/markdown; charset=utf-8' };
};
