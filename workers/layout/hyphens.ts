// Hyphens at line ends. A word the typesetter broke for the line is joined again
// ("measure-" + "ments"); a compound ("state-of-the-art", "well-known"), a URL, an
// identifier or a number range keeps its hyphen and gets no space. Which of the two a
// letters-only pair is cannot be read off the page, so the document's own words decide
// first (the same compound written whole elsewhere), then the system word list when the
// machine has one, then a last rule: join, unless the left part is one of a few words
// that head compounds far more often than they start a longer word.
import { existsSync, readFileSync } from 'node:fs';

const WORD_LIST = '/usr/share/dict/words';
// Words that mostly head a hyphenated compound ("self-", "well-", "ill-", "half-"), except
// before a suffix, where the break was inside one word ("self-ish", "ill-ness").
const HEADS = new Set(['self', 'well', 'ill', 'half']);
const SUFFIX = /^(ness|ish|less|ly|ing|ed|er|est|es|s)$/;

const LEFT_WORD = /^\p{Lu}?\p{Ll}+$/u;
const RIGHT_WORD = /^(\p{Ll}+)(?=$|[^\p{L}\p{N}_\-/])/u;

let systemWords: Set<string> | null | undefined;
let documentWords: ReadonlySet<string> | undefined;

function wordList(): Set<string> | null {
  if (systemWords === undefined) {
    systemWords = null;
    try {
      if (existsSync(WORD_LIST)) systemWords = new Set(readFileSync(WORD_LIST, 'utf8').split('\n').map((w) => w.trim().toLowerCase()).filter(Boolean));
    } catch {
      systemWords = null;
    }
  }
  return systemWords;
}

/** The words of a text, lower-cased, without surrounding punctuation (a compound stays one word). */
export function wordsOf(texts: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const text of texts) {
    for (const token of text.split(/\s+/)) {
      const word = token.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '').toLowerCase();
      if (word) out.add(word);
    }
  }
  return out;
}

/** Runs `work` with the words of the document at hand, for the decisions made while it runs. */
export function withDocumentWords<T>(words: ReadonlySet<string>, work: () => T): T {
  const before = documentWords;
  documentWords = words;
  try {
    return work();
  } finally {
    documentWords = before;
  }
}

/**
 * How to join a line ending in `left` to the next one starting with `right`: 'join' drops
 * the hyphen, 'keep' keeps it with no space, undefined when `left` ends in no hyphen
 * attached to a word (the lines are joined with a space as usual).
 */
export function lineEndHyphen(left: string, right: string): 'join' | 'keep' | undefined {
  if (!/\S-$/.test(left) || !right || /^\s/.test(right)) return undefined;
  const token = /(\S+)-$/.exec(left)![1]!.replace(/^[("'“‘[{]+/, '');
  const next = RIGHT_WORD.exec(right)?.[1];
  // Anything but letters on both sides (a hyphen already inside, a URL, digits, capitals
  // after the break) is a compound or a name that keeps the hyphen.
  if (!next || !LEFT_WORD.test(token)) return 'keep';
  const head = token.toLowerCase();
  const joined = head + next, compound = `${head}-${next}`;
  if (documentWords?.has(compound) && !documentWords.has(joined)) return 'keep';
  if (documentWords?.has(joined)) return 'join';
  const list = wordList();
  if (list) {
    if (list.has(joined)) return 'join';
    return list.has(head) && list.has(next) ? 'keep' : 'join';
  }
  return HEADS.has(head) && !SUFFIX.test(next) ? 'keep' : 'join';
}
