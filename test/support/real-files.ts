// Files from other projects' test suites, kept in test/fixtures/real-files/ with their sources and
// licences (its README.md).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The fixtures folder in the source tree (this module runs from dist/test/support/). */
export const REAL_FILES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/real-files');

export type RealFile = 'bad21.pdf' | 'issue-1688b.pdf' | 'Password_Protected-hello.ppt' | 'PasswordProtected.doc'
  | 'au.asn.aes.www_conferences_2011_presentations_Fri_20Room4Level4_20930_20Maloney.pptx' | 'cn.orthodox.www_divenbog_APRIL_30-APRIL.DOC';

export async function realFile(name: RealFile): Promise<Uint8Array> {
  return new Uint8Array(await readFile(path.join(REAL_FILES, name)));
}
