// The web page's Solana relay (POST /web/solana-rpc) against an attacker: every spelling of the
// two reads it relays (option order, commitment, extra whitespace) is one read upstream per
// interval, other encodings are refused without reaching the RPC, and one client address gets
// 30 requests a minute, then 429 with Retry-After. The upstream is the local Solana chain behind
// a counting proxy; clients speak from different loopback addresses (127.0.0.x).
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService, type TestService } from '../support/service.js';
import { clientKey } from '../../server/plugins/web.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface Answer {
  status: number; retryAfter?: string;
  body: { id?: unknown; result?: { value?: unknown }; error?: { code: string; field?: string; message: string } };
}

/** One JSON-RPC call to the relay, sent from `localAddress`, as raw text (so spellings are exact). */
function ask(url: string, localAddress: string, text: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/web/solana-rpc`, { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve({
        status: res.statusCode!,
        ...(res.headers['retry-after'] !== undefined ? { retryAfter: res.headers['retry-after'] } : {}),
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['body'],
      }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

describe('the Solana relay: one upstream read per kind per interval, and a limit per client', () => {
  let t: TestService;
  let live: TestService;
  let proxy: http.Server;
  const upstream: Array<{ method: string; params: unknown }> = [];
  const reads = (method: string) => upstream.filter((u) => u.method === method);

  before(async () => {
    t = await startTestService({ solana: true });
    // The operator's RPC: the local chain, behind a proxy that records every request it is sent.
    proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c)).on('end', async () => {
        const body = Buffer.concat(chunks);
        const call = JSON.parse(body.toString('utf8')) as { method: string; params: unknown };
        upstream.push({ method: call.method, params: call.params });
        const answer = await fetch(t.svm!.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    live = await startTestService({
      rigs: { evm: t.evm, svm: t.svm },
      config: { payments: 'live', svmFacilitatorUrl: t.svm!.facilitatorUrl, svmPayTo: t.svm!.payTo, svmRpcUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` },
    });
  });

  after(async () => {
    await live?.stop();
    proxy?.close();
    await t?.stop();
  });

  it('60 mint reads and 60 blockhash reads in every accepted spelling, from eight addresses, reach the RPC once each; a blockhash is read again after its 2 s', { timeout: 30_000 }, async () => {
    const mint = t.svm!.asset;
    const commitments = [undefined, 'processed', 'confirmed', 'finalized'];
    const mintSpellings = commitments.flatMap((c) => [
      `{"jsonrpc":"2.0","id":"ID","method":"getAccountInfo","params":["${mint}",{"encoding":"base64"${c ? `,"commitment":"${c}"` : ''}}]}`,
      `{ "params": [ "${mint}", { ${c ? `"commitment": "${c}", ` : ''}"encoding": "base64" } ], "method": "getAccountInfo", "id": "ID", "jsonrpc": "2.0" }`,
    ]);
    const blockhashSpellings = [
      '{"jsonrpc":"2.0","id":"ID","method":"getLatestBlockhash"}',
      '{"jsonrpc":"2.0","id":"ID","method":"getLatestBlockhash","params":[]}',
      '{"jsonrpc":"2.0","id":"ID","method":"getLatestBlockhash","params":[{}]}',
      ...commitments.slice(1).map((c) => `{"params":[{"commitment":"${c}"}],"id":"ID","method":"getLatestBlockhash","jsonrpc":"2.0"}`),
    ];
    const from = (i: number) => `127.0.0.${2 + (i % 8)}`;
    const calls = Array.from({ length: 120 }, (_, i) => {
      const spellings = i % 2 ? blockhashSpellings : mintSpellings;
      return ask(live.url, from(i), spellings[Math.floor(i / 2) % spellings.length].replace('"ID"', `"c${i}"`));
    });
    const answers = await Promise.all(calls);
    expect(answers.map((a) => a.status)).to.equal(Array(120).fill(200));
    // Each caller gets its own id back and a real answer.
    expect(answers.map((a) => a.body.id)).to.equal(Array.from({ length: 120 }, (_, i) => `c${i}`));
    expect(answers.every((a) => a.body.result?.value !== undefined)).to.equal(true);
    expect(reads('getAccountInfo')).to.equal([{ method: 'getAccountInfo', params: [mint, { encoding: 'base64', commitment: 'confirmed' }] }]);
    expect(reads('getLatestBlockhash')).to.equal([{ method: 'getLatestBlockhash', params: [{ commitment: 'confirmed' }] }]);

    await new Promise((r) => setTimeout(r, 2_100));
    const again = await Promise.all(blockhashSpellings.map((s, i) => ask(live.url, `127.0.0.${12 + i}`, s)));
    expect(again.map((a) => a.status)).to.equal(Array(blockhashSpellings.length).fill(200));
    expect((await ask(live.url, '127.0.0.11', mintSpellings[3])).status).to.equal(200);
    expect(reads('getLatestBlockhash')).to.have.length(2);
    expect(reads('getAccountInfo')).to.have.length(1);
  });

  it('other encodings and options are refused with 422 naming the rule, and never reach the RPC', async () => {
    const before = upstream.length;
    const mint = t.svm!.asset;
    for (const params of [[mint], [mint, {}], [mint, { encoding: 'base58' }], [mint, { encoding: 'jsonParsed' }], [mint, { encoding: 'base64+zstd' }], [mint, { encoding: 'base64', dataSlice: { offset: 0, length: 1 } }], [mint, { encoding: 'base64' }, 'extra']]) {
      const answer = await ask(live.url, '127.0.0.30', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params }));
      expect(answer.status, JSON.stringify(params)).to.equal(422);
      expect(answer.body.error).to.include({ code: 'FIELD_INVALID', field: 'params' });
      expect(answer.body.error!.message, JSON.stringify(params)).to.contain('{ "encoding": "base64" }');
    }
    const blockhash = await ask(live.url, '127.0.0.30', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLatestBlockhash', params: [{ commitment: 'confirmed', minContextSlot: 7 }] }));
    expect(blockhash.status).to.equal(422);
    expect(blockhash.body.error!.message).to.contain('getLatestBlockhash takes at most a commitment');
    expect(upstream.length).to.equal(before);
  });

  it('one address gets 30 requests a minute, then 429 RATE_LIMITED with Retry-After; another address is still answered', async () => {
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLatestBlockhash', params: [{ commitment: 'confirmed' }] });
    const first = await Promise.all(Array.from({ length: 30 }, () => ask(live.url, '127.0.0.20', call)));
    expect(first.map((a) => a.status)).to.equal(Array(30).fill(200));
    const refused = await ask(live.url, '127.0.0.20', call);
    expect(refused.status).to.equal(429);
    expect(refused.body.error).to.include({ code: 'RATE_LIMITED', status: 429 });
    expect(refused.body.error!.message).to.contain('30 requests a minute');
    expect(Number(refused.retryAfter)).to.be.within(1, 60);
    // Refused before the body is even read: a malformed body from the same address is also 429.
    expect((await ask(live.url, '127.0.0.20', '{not json')).status).to.equal(429);
    expect((await ask(live.url, '127.0.0.21', call)).status).to.equal(200);
  });

  it('counts an IPv6 client by its /64 and an IPv4-mapped one by its IPv4 address', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).to.equal('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).to.equal('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002::')).to.equal('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).to.equal('2001:db8:0:0::/64');
    expect(clientKey('::1')).to.equal('0:0:0:0::/64');
    expect(clientKey('::ffff:203.0.113.7')).to.equal('203.0.113.7');
    expect(clientKey('203.0.113.7')).to.equal('203.0.113.7');
  });
});
