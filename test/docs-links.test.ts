// The documentation is Markdown files that link to one another and into the tree. This follows
// every relative link in them: the file or folder it names must exist, and a `#fragment` must be
// a heading of the page it leads to (as GitHub makes anchors from headings). Links to other sites
// are not followed; links inside code blocks and code spans are not links.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** README.md, SECURITY.md, every page under docs/, and the other READMEs of the tree. */
export function documentationFiles(): string[] {
  const under = (dir: string): string[] => readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return under(rel);
    return e.name.endsWith('.md') ? [rel] : [];
  });
  const readmes = ['deploy', 'test', 'workers/layout', 'vendor/x402-batch-settlement', 'test/fixtures/real-files']
    .map((dir) => `${dir}/README.md`).filter((file) => existsSync(path.join(root, file)));
  return ['README.md', 'SECURITY.md', ...under('docs').sort(), ...readmes];
}

/** Markdown without its fenced code blocks and code spans, where brackets are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The anchors GitHub gives a page's headings: lowercased, punctuation dropped, spaces as hyphens, repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const withoutCode = markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    out.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return out;
}

interface Link { file: string; line: number; target: string }

/** Every link and image in a page whose target is not another site. */
function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  for (const [i, line] of prose(readFileSync(path.join(root, file), 'utf8')).split('\n').entries()) {
    for (const [, target] of line.matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push({ file, line: i + 1, target });
    }
  }
  return links;
}

/** Why a link leads nowhere, or undefined when it leads somewhere. */
function brokenBecause(link: Link): string | undefined {
  const [pathPart, fragment] = link.target.split('#') as [string, string | undefined];
  const target = pathPart === '' ? link.file : path.posix.normalize(path.posix.join(path.posix.dirname(link.file), decodeURI(pathPart)));
  if (target.startsWith('..')) return 'leads out of the repository';
  const full = path.join(root, target);
  if (!existsSync(full)) return `${target} does not exist`;
  if (fragment === undefined) return undefined;
  if (statSync(full).isDirectory() || !target.endsWith('.md')) return `${target} is not a page with headings`;
  const found = anchors(readFileSync(full, 'utf8'));
  return found.has(decodeURIComponent(fragment)) ? undefined : `${target} has no heading #${fragment}`;
}

describe('the documentation\'s links', () => {
  it('reads the pages it promises to check, and finds their links', () => {
    const files = documentationFiles();
    expect(files).to.include(['README.md', 'SECURITY.md', 'docs/operations/README.md', 'docs/configuration.md']);
    expect(files.flatMap(relativeLinks).length).to.be.above(100);
  });

  it('makes anchors as GitHub does', () => {
    const page = [
      '# Paying through a channel: pay.js and the bridge', '## `compress` with `target_kb`', '## Notes', '## Notes',
      '```', '# not a heading', '```',
    ].join('\n');
    expect([...anchors(page)]).to.equal(['paying-through-a-channel-payjs-and-the-bridge', 'compress-with-target_kb', 'notes', 'notes-1']);
  });

  it('finds a broken link and a missing anchor (the check can fail)', () => {
    const link = (file: string, target: string) => brokenBecause({ file, line: 1, target });
    expect(link('docs/payments.md', 'no-such-page.md')).to.equal('docs/no-such-page.md does not exist');
    expect(link('README.md', 'docs/payments.md#no-such-heading')).to.equal('docs/payments.md has no heading #no-such-heading');
    expect(link('README.md', 'docs/payments.md#how-a-paid-call-works')).to.be.undefined();
  });

  it('every relative link leads to a file or folder of the tree, and every #anchor to a heading there', () => {
    const broken = documentationFiles().flatMap(relativeLinks)
      .map((link) => ({ link, why: brokenBecause(link) }))
      .filter((b) => b.why !== undefined)
      .map(({ link, why }) => `${link.file}:${link.line} (${link.target}): ${why}`);
    expect(broken).to.equal([]);
  });
});
