// Password lengths for protect and unlock, over HTTP on the real service. AES-256 uses at most the
// first 127 UTF-8 bytes of a password, so protect refuses a longer one before payment (qpdf would
// otherwise encrypt a file that neither the whole password nor its first 127 bytes opens); unlock
// takes longer passwords, since readers cut them to what the file's encryption uses.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFile } from 'node:fs/promises';
import { startTestService, form, type TestService } from '../../support/service.js';
import { makePdf, textPages } from '../../support/pdf-fixtures.js';
import { tool, withFile } from '../../support/independent-tools.js';
import { balancesOf } from '../../support/paying.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface ErrorBody { error: { code: string; status: number; message: string; field?: string } }

// 63 two-byte characters and one ASCII letter: 64 characters, exactly 127 bytes.
const AT_LIMIT = `${'é'.repeat(63)}k`;
// The attack's password: 127 bytes with an emoji, a combining mark, a NUL (character 41) and a tab.
const WITH_NUL = `${'a'.repeat(40)}\u0000🔐e\u0301\t${'z'.repeat(78)}`;
// The same without the NUL and the tab, one byte short of the limit: an emoji and a combining mark count as they are.
const UNICODE = `${'a'.repeat(40)}🔐e\u0301${'z'.repeat(79)}`;

/** Whether qpdf opens the PDF with the password (an independent reader, not the code under test). */
async function opensWith(pdf: Uint8Array, password: string): Promise<boolean> {
  return withFile(pdf, 'pdf', async (file) => (await tool('qpdf', [`--password=${password}`, '--show-npages', file])).code === 0);
}

describe('PDF password lengths', () => {
  let t: TestService;
  const pdf = makePdf(textPages(2));
  before(async () => { t = await startTestService(); });
  after(async () => { await t?.stop(); });

  const post = (route: string, password: string, file: Uint8Array = pdf) =>
    fetch(`${t.url}${route}`, { method: 'POST', body: form([{ bytes: file, name: 'a.pdf' }], { password }) });

  for (const [what, password] of [['128 ASCII characters', 'p'.repeat(128)], ['64 two-byte characters (128 bytes)', 'é'.repeat(64)], ['257 characters', 'q'.repeat(257)]] as const) {
    it(`protect refuses a password of ${what} with 422 FIELD_INVALID naming the 127-byte rule, before any payment`, async () => {
      const res = await post('/v1/pdf/protect', password);
      expect(res.status).to.equal(422);
      expect(res.headers.get('payment-required')).to.be.null();
      const { error } = await res.json() as ErrorBody;
      expect(error).to.include({ code: 'FIELD_INVALID', field: 'password' });
      expect(error.message).to.equal('"password" must be a string of 1 to 127 bytes in UTF-8 (ASCII characters take 1 byte, others 2 to 4); received a value that does not qualify');
      expect(error.message).to.not.contain(password.slice(0, 8));
    });
  }

  it('protect quotes a password of exactly 127 bytes, and the paid result opens with exactly that password', async () => {
    const quote = await post('/v1/pdf/protect', AT_LIMIT);
    expect(quote.status).to.equal(402);
    await quote.arrayBuffer();
    const payFetch = await t.payFetch('base');
    const paid = await payFetch(`${t.url}/v1/pdf/protect`, { method: 'POST', body: form([{ bytes: pdf, name: 'a.pdf' }], { password: AT_LIMIT }) });
    expect(paid.status).to.equal(200);
    const locked = new Uint8Array(await paid.arrayBuffer());
    expect(await opensWith(locked, AT_LIMIT)).to.equal(true);
    expect(await opensWith(locked, AT_LIMIT.slice(0, -1))).to.equal(false);
  });

  it('a password holding a NUL is refused before payment naming the character and where it is, by protect and unlock, and nothing is charged', async () => {
    expect(Buffer.byteLength(WITH_NUL)).to.equal(127);
    // The part before the NUL is what qpdf would have used: it opens this file.
    const locked = await withFile(pdf, 'pdf', async (file, dir) => {
      const out = `${dir}/locked.pdf`;
      expect((await tool('qpdf', ['--encrypt', 'a'.repeat(40), 'a'.repeat(40), '256', '--', file, out])).code).to.equal(0);
      return new Uint8Array(await readFile(out));
    });
    const before = await balancesOf(t.evm);
    const payFetch = await t.payFetch('base');
    for (const [route, file] of [['/v1/pdf/protect', pdf], ['/v1/pdf/unlock', locked]] as const) {
      for (const res of [await post(route, WITH_NUL, file), await payFetch(`${t.url}${route}`, { method: 'POST', body: form([{ bytes: file, name: 'a.pdf' }], { password: WITH_NUL }) })]) {
        expect(res.status, route).to.equal(422);
        expect(res.headers.get('payment-required')).to.be.null();
        const { error } = await res.json() as ErrorBody;
        expect(error).to.include({ code: 'FIELD_INVALID', field: 'password' });
        expect(error.message).to.equal('"password" holds U+0000 at character 41; control characters are not allowed');
      }
    }
    const after = await balancesOf(t.evm);
    expect(after.payer).to.equal(before.payer);
  });

  it('a tab, a line break, DEL, a C1 control or a lone surrogate half is refused the same way, at its position in characters', async () => {
    for (const [password, named] of [['tab\there', 'U+0009 at character 4'], ['🔐🔐\rx', 'U+000D at character 3'], ['x\u007f', 'U+007F at character 2'], ['é\u0085', 'U+0085 at character 2']] as const) {
      const res = await post('/v1/pdf/protect', password);
      expect(res.status).to.equal(422);
      expect(((await res.json()) as ErrorBody).error.message).to.equal(`"password" holds ${named}; control characters are not allowed`);
    }
    // A lone surrogate half can only arrive in JSON: MCP's arguments.
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_pdf_protect', arguments: { file: { data: Buffer.from(pdf).toString('base64') }, password: 'ab\ud800c' } } };
    const mcp = await fetch(`${t.url}/mcp`, { method: 'POST', body: JSON.stringify(call), headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
    expect(await mcp.text()).to.contain('holds U+D800 at character 3; a lone surrogate half is not a character');
  });

  it('every character of a password with an emoji and a combining mark counts: the paid result opens with it and not with it less its last character', async () => {
    expect(Buffer.byteLength(UNICODE)).to.equal(126);
    const payFetch = await t.payFetch('base');
    const paid = await payFetch(`${t.url}/v1/pdf/protect`, { method: 'POST', body: form([{ bytes: pdf, name: 'a.pdf' }], { password: UNICODE }) });
    expect(paid.status).to.equal(200);
    const locked = new Uint8Array(await paid.arrayBuffer());
    expect(await opensWith(locked, UNICODE)).to.equal(true);
    expect(await opensWith(locked, UNICODE.slice(0, -1))).to.equal(false);
    expect(await opensWith(locked, UNICODE.replace('e\u0301', '\u00e9'))).to.equal(false);
  });

  it('the contract says it: protect\'s password is described as 1 to 127 bytes in UTF-8, unlock\'s as cut the way the file\'s encryption cuts it', async () => {
    const doc = await (await fetch(`${t.url}/openapi.json`)).json() as { paths: Record<string, { post: { requestBody: { content: Record<string, { schema: { properties: Record<string, { description: string; maxLength?: number }> } }> } } }> };
    const field = (path: string) => doc.paths[path].post.requestBody.content['multipart/form-data'].schema.properties.password;
    expect(field('/v1/pdf/protect').description).to.contain('1 to 127 bytes in UTF-8');
    expect(field('/v1/pdf/protect').maxLength).to.equal(127);
    expect(field('/v1/pdf/unlock').description).to.contain('the first 127 bytes in UTF-8 for AES-256');
    expect(field('/v1/pdf/unlock').maxLength).to.equal(1024);
    for (const path of ['/v1/pdf/protect', '/v1/pdf/unlock']) {
      expect(field(path).description).to.contain('control characters (a NUL, a tab, a line break) are refused');
      const pattern = new RegExp((field(path) as { pattern?: string }).pattern ?? 'missing');
      expect([UNICODE, WITH_NUL, 'x\u0085', 'a\ud800'].map((p) => pattern.test(p))).to.equal([true, false, false, false]);
    }
  });

  it('unlock takes a password longer than 127 bytes whose first 127 bytes open an AES-256 file (as readers do), and refuses a long wrong one', async () => {
    const password = 'u'.repeat(127);
    const locked = await withFile(pdf, 'pdf', async (file, dir) => {
      const out = `${dir}/locked.pdf`;
      expect((await tool('qpdf', ['--encrypt', password, password, '256', '--', file, out])).code).to.equal(0);
      return new Uint8Array(await readFile(out));
    });
    const longer = await post('/v1/pdf/unlock', `${password}${'v'.repeat(73)}`, locked);
    expect(longer.status).to.equal(402);
    await longer.arrayBuffer();
    const wrong = await post('/v1/pdf/unlock', `${'w'.repeat(127)}${'v'.repeat(73)}`, locked);
    expect(wrong.status).to.equal(422);
    expect(((await wrong.json()) as ErrorBody).error.code).to.equal('WRONG_PASSWORD');
  });
});
