// The rules that drop running heads, feet and page numbers (workers/layout/running-text.ts), on fragments built in code.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { dropRunningText } from '../../../../workers/layout/testing.js';
import { fragment, prose, texts } from './fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('layout: running text (dropRunningText)', () => {
  it('a row repeated at the top of every page, set apart from the body, is a running head and goes (dropRunningText)', () => {
    const page = (n: number) => ({ height: 800, fragments: [fragment('Journal of Worked Examples', 200, 400, 20, { size: 8 }), ...prose(5, 50, 550, 100), fragment(String(n), 295, 305, 770, { size: 8 })] });
    const pages = [page(1), page(2)];
    dropRunningText(pages, 10);
    expect(pages.map((p) => p.fragments.length)).to.equal([5, 5]);
  });

  it('a bare page number set apart in the outer fifth goes though above the running-text zone; a capital letter alone there stays (dropRunningText: PAGE_NUMBER_ZONE_SHARE)', () => {
    const page = (text: string) => ({ height: 800, fragments: [...prose(5, 50, 550, 100), fragment(text, 295, 305, 680)] });
    const [arabic, roman, letter] = [page('12'), page('iv'), page('A')];
    for (const p of [arabic, roman, letter]) dropRunningText([p], 10);
    expect([arabic, roman, letter].map((p) => p.fragments.length)).to.equal([5, 5, 6]);
  });

  it('on a one-page document a body-size title stays, a smaller running head goes (dropRunningText: SMALLER_THAN_BODY_SHARE)', () => {
    const title = { height: 800, fragments: [fragment('Dear Ms Smith,', 50, 150, 20), ...prose(5, 50, 550, 100)] };
    const head = { height: 800, fragments: [fragment('Internal memo', 50, 150, 20, { size: 8 }), ...prose(5, 50, 550, 100)] };
    dropRunningText([title], 10);
    dropRunningText([head], 10);
    expect(texts(title.fragments)).to.include(['Dear Ms Smith,']);
    expect(texts(head.fragments)).to.not.include(['Internal memo']);
  });

  it('a number alone at the top in type well larger than the body is a chapter number and stays; at the body size it is a page number and goes (isRunningRow: isLargeRow, LARGE_TYPE_SHARE)', () => {
    const page = (size: number) => ({ height: 800, fragments: [fragment('2', 50, 60, 60, { size }), fragment('The Lost Homeland', 50, 220, 100, { size: 18 }), ...prose(5, 50, 290, 150)] });
    const chapter = page(18), number = page(10);
    dropRunningText([chapter], 10);
    dropRunningText([number], 10);
    expect(texts(chapter.fragments)).to.include(['2', 'The Lost Homeland']);
    expect(texts(number.fragments)).to.not.include(['2']);
  });
});
