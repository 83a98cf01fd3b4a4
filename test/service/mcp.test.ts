// MCP at /mcp with the official SDK client over real HTTP, paid with the standard x402 client.
import http from 'node:http';
import Lab from '@hapi/lab';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import Code from '@hapi/code';
import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { startTestService, signOnBase, type TestService } from '../support/service.js';
import { makePdf, textPages } from '../support/pdf-fixtures.js';
import { startFakeProvider, FAKE_MODEL } from '../support/fake-provider.js';
import { operations } from '../../operations/index.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

type ToolResult = {
  isError?: boolean;
  content: Array<{ type: string; text?: string; data?: string; mimeType?: string; resource?: { blob?: string; mimeType?: string } }>;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
};

describe('MCP tools (official SDK client, real HTTP, local chain)', () => {
  let t: TestService;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  let png: Buffer;
  const pdf3 = makePdf(textPages(3));

  before(async () => {
    t = await startTestService();
    png = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#00aa55' } }).png().toBuffer();
    client = new Client({ name: 'paydoc-test', version: '1.0.0' });
    transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`));
    await client.connect(transport);
  });
  after(async () => { await client?.close(); await t?.stop(); });

  const call = (name: string, args: Record<string, unknown>, payment?: unknown) =>
    client.callTool({ name, arguments: args, ...(payment ? { _meta: { 'x402/payment': payment } } : {}) }) as Promise<ToolResult>;

  const pay = (pr: PaymentRequired) => signOnBase(pr, t.evm.payerKey);
  const balance = () => t.evm.balanceOf(t.evm.payerAddress);

  it('protocol errors are JSON-RPC errors: an unknown tool -32602, malformed JSON 400 with -32700, a batch 400 with -32600 and nothing run', async () => {
    const unknown = await client.callTool({ name: 'svc_pdf_explode', arguments: {} }).then(() => undefined, (err: unknown) => err);
    expect(unknown).to.be.an.instanceof(McpError);
    expect((unknown as McpError).code).to.equal(ErrorCode.InvalidParams);
    expect((unknown as McpError).message).to.equal(`MCP error -32602: no tool named "svc_pdf_explode"; tools/list names all ${operations.length}`);
    const post = (body: string) => fetch(`${t.url}/mcp`, { method: 'POST', body, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
    const malformed = await post('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"');
    expect(malformed.status).to.equal(400);
    expect(await malformed.json()).to.equal({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the request body is not valid JSON' } });
    const quotes = await t.metric('paydoc_requests_total', { operation: 'pdf.extract', status: '200' });
    const call = { jsonrpc: '2.0', method: 'tools/call', params: { name: 'svc_pdf_extract', arguments: { file: { data: pdf3.toString('base64') } } } };
    const batch = await post(JSON.stringify(Array.from({ length: 60 }, (_, id) => ({ ...call, id }))));
    expect(batch.status).to.equal(400);
    const answer = await batch.json() as { error: { code: number; message: string } };
    expect(answer.error.code).to.equal(-32600);
    expect(answer.error.message).to.contain('batches are not supported');
    expect(await t.metric('paydoc_requests_total', { operation: 'pdf.extract', status: '200' })).to.equal(quotes);
  });

  it('DNS-rebinding protection: on a loopback BASE_URL another Host is 403; an Origin outside CORS_ORIGINS is 403', async () => {
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    const send = (url: string, headers: Record<string, string>) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
        let body = '';
        res.on('data', (chunk) => { body += chunk; });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end(initialize);
    });
    const { port } = new URL(t.url);
    const rebound = await send(`${t.url}/mcp`, { host: `attacker.example:${port}` });
    expect(rebound.status).to.equal(403);
    expect(JSON.parse(rebound.body)).to.include({ jsonrpc: '2.0', id: null });
    expect(JSON.parse(rebound.body).error.message).to.contain('DNS-rebinding');
    expect((await send(`${t.url}/mcp`, { host: `localhost:${port}` })).status).to.equal(200);

    const listed = await startTestService({ rigs: { evm: t.evm }, config: { corsOrigins: 'https://app.example' } });
    try {
      const foreign = await send(`${listed.url}/mcp`, { origin: 'https://attacker.example' });
      expect(foreign.status).to.equal(403);
      expect(JSON.parse(foreign.body).error.message).to.contain('CORS_ORIGINS');
      expect((await send(`${listed.url}/mcp`, { origin: 'https://app.example' })).status).to.equal(200);
      // No Origin (not a browser): allowed.
      expect((await send(`${listed.url}/mcp`, {})).status).to.equal(200);
    } finally {
      await listed.stop();
    }
  });

  it('the server introduces itself: instructions on paying and quoting, annotated tools with icons', async () => {
    const instructions = client.getInstructions() ?? '';
    for (const phrase of ['x402', 'without payment', 'x402/payment', 'per page', 'SETTLEMENT_UNCONFIRMED']) expect(instructions).to.contain(phrase);
    const { tools } = await client.listTools();
    for (const tool of tools) {
      const op = operations.find((o) => o.tool === tool.name)!;
      expect(tool.annotations, tool.name).to.equal({ title: op.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: 'provider' in op.content });
      expect(tool.icons?.[0]?.src ?? '', tool.name).to.match(/^data:image\/svg\+xml;base64,/);
    }
    expect(tools.filter((tool) => tool.annotations?.openWorldHint).map((tool) => tool.name).sort()).to.equal(['svc_image_ocr', 'svc_pdf_ocr', 'svc_pdf_structured', 'svc_pdf_tables']);
  });

  it('a long paid call with a progressToken hears progress every few seconds, so a client with a 6 s timeout (reset on progress) gets its result', { timeout: 120_000 }, async () => {
    // 20 A2 pages at 300 dpi: well over 6 s of drawing.
    const pages = makePdf(textPages(20).map((page) => ({ ...page, size: [1190, 1684] as [number, number] })));
    const args = { file: { data: pages.toString('base64') }, dpi: 300 };
    const unpaid = await call('svc_pdf_render', args);
    const payload = await pay(unpaid.structuredContent as unknown as PaymentRequired);
    const before = await balance();
    const progress: Array<{ progress: number; message?: string }> = [];
    const started = performance.now();
    const result = await client.callTool({ name: 'svc_pdf_render', arguments: args, _meta: { 'x402/payment': payload } }, undefined,
      { timeout: 6_000, resetTimeoutOnProgress: true, onprogress: (p) => { progress.push(p); } }) as ToolResult;
    expect(performance.now() - started).to.be.above(6_000);
    expect(result.isError).to.not.equal(true);
    expect(progress.length).to.be.at.least(1);
    expect(progress[0].message).to.match(/^working for \d+ s$/);
    const quoted = unpaid.structuredContent ? (unpaid.structuredContent as unknown as PaymentRequired).accepts[0].amount : 0;
    expect(before - await balance()).to.equal(BigInt(quoted));
  });

  it('a paid model call of 65 s completes for an SDK client with its default 60 s timeout, kept alive by progress', { timeout: 150_000 }, async () => {
    const fake = await startFakeProvider(() => ({ content: 'slow words', delayMs: 65_000 }));
    const slow = await startTestService({ rigs: { evm: t.evm }, config: { modelBaseUrl: fake.baseUrl, modelName: FAKE_MODEL, modelApiKey: 'test-key' } });
    const agent = new Client({ name: 'paydoc-test-slow', version: '1.0.0' });
    try {
      await agent.connect(new StreamableHTTPClientTransport(new URL(`${slow.url}/mcp`)));
      const args = { file: { data: png.toString('base64') } };
      const unpaid = await agent.callTool({ name: 'svc_image_ocr', arguments: args }) as ToolResult;
      const pr = unpaid.structuredContent as unknown as PaymentRequired;
      const payload = await pay(pr);
      const before = await balance();
      const progress: number[] = [];
      const started = performance.now();
      // No timeout given: the SDK's default of 60 s applies, reset by each progress notification.
      const result = await agent.callTool({ name: 'svc_image_ocr', arguments: args, _meta: { 'x402/payment': payload } }, undefined,
        { resetTimeoutOnProgress: true, onprogress: () => { progress.push(performance.now() - started); } }) as ToolResult;
      expect(performance.now() - started).to.be.above(65_000);
      expect(result.isError, JSON.stringify(result.structuredContent)).to.not.equal(true);
      expect(result.structuredContent).to.equal({ text: 'slow words' });
      // At least one notification every 10 s over the whole call.
      expect(progress.length).to.be.at.least(6);
      const gaps = progress.map((at, i) => at - (i === 0 ? 0 : progress[i - 1]));
      expect(Math.max(...gaps)).to.be.below(10_000);
      expect(before - await balance()).to.equal(BigInt(pr.accepts.find((a) => a.network === 'eip155:8453')!.amount));
    } finally {
      await agent.close();
      await slow.stop();
      await fake.close();
    }
  });

  it('initialize negotiates protocol 2025-11-25', () => {
    expect(transport.protocolVersion).to.equal('2025-11-25');
    expect(client.getServerVersion()?.name).to.equal('paydoc');
  });

  it(`tools/list returns the ${operations.length} tools with schemas derived from the table`, async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).to.equal(operations.map((op) => op.tool).sort());
    const resize = tools.find((tool) => tool.name === 'svc_image_resize')!;
    const props = resize.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.width).to.include({ type: 'integer', minimum: 1 });
    expect(props.fit).to.include({ enum: ['contain', 'cover', 'fill'], default: 'contain' });
    expect(resize.inputSchema.required).to.equal(['file']);
    const merge = tools.find((tool) => tool.name === 'svc_pdf_merge')!;
    expect((merge.inputSchema.properties as Record<string, Record<string, unknown>>).files).to.include({ type: 'array', minItems: 2, maxItems: 20 });
    expect(tools.find((tool) => tool.name === 'svc_pdf_extract')!.outputSchema).to.exist();
  });

  it('an unpaid call returns PaymentRequired in structuredContent and as text, priced like HTTP', async () => {
    const res = await call('svc_pdf_extract', { file: { data: pdf3.toString('base64'), mediaType: 'application/pdf' } });
    expect(res.isError).to.equal(true);
    const pr = res.structuredContent as unknown as PaymentRequired;
    expect(pr.x402Version).to.equal(2);
    expect(pr.accepts[0]).to.include({ amount: '30000', network: 'eip155:8453', scheme: 'exact' });
    expect(pr.resource?.url).to.equal(`${t.url}/mcp`);
    expect(JSON.parse(res.content[0].text!)).to.equal(pr);
  });

  it('a paid call returns the result and the receipt, and the balance moved by exactly the price', async () => {
    const unpaid = await call('svc_image_rotate', { file: { data: png.toString('base64') }, angle: 90 });
    const payload = await pay(unpaid.structuredContent as unknown as PaymentRequired);
    const before = await balance();
    const res = await call('svc_image_rotate', { file: { data: png.toString('base64') }, angle: 90 }, payload);
    expect(res.isError).to.not.equal(true);
    expect(res.content[0].type).to.equal('image');
    expect(res.content[0].mimeType).to.equal('image/png');
    const meta = await sharp(Buffer.from(res.content[0].data!, 'base64')).metadata();
    expect(meta).to.include({ width: 20, height: 30 });
    const receipt = res._meta!['x402/payment-response'] as SettleResponse;
    expect(receipt.success).to.equal(true);
    expect(before - await balance()).to.equal(5000n);

    // The same payment cannot buy a second result, and is not asked to pay again: it was delivered.
    const replay = await call('svc_image_rotate', { file: { data: png.toString('base64') }, angle: 90 }, payload);
    expect(replay.isError).to.equal(true);
    expect((replay.structuredContent as { error: { code: string } }).error.code).to.equal('RESULT_DELIVERED');
    expect(before - await balance()).to.equal(5000n);
  });

  it('JSON results come as structuredContent, PDFs and ZIPs as embedded resources', async () => {
    const unpaid = await call('svc_pdf_extract', { file: { data: pdf3.toString('base64') } });
    const res = await call('svc_pdf_extract', { file: { data: pdf3.toString('base64') } }, await pay(unpaid.structuredContent as unknown as PaymentRequired));
    expect(res.structuredContent).to.include({ pageCount: 3, likelyScanned: false });
    const files = [{ data: pdf3.toString('base64') }, { data: pdf3.toString('base64') }];
    const q = await call('svc_pdf_merge', { files });
    expect((q.structuredContent as unknown as PaymentRequired).accepts[0].amount).to.equal('30000');
    const merged = await call('svc_pdf_merge', { files }, await pay(q.structuredContent as unknown as PaymentRequired));
    expect(merged.content[0].type).to.equal('resource');
    expect(merged.content[0].resource!.mimeType).to.equal('application/pdf');
    expect(Buffer.from(merged.content[0].resource!.blob!, 'base64').subarray(0, 5).toString()).to.equal('%PDF-');
  });

  it('a failed tool call moves nothing', async () => {
    const noImages = makePdf(textPages(1));
    const unpaid = await call('svc_pdf_images', { file: { data: noImages.toString('base64') } });
    const payload = await pay(unpaid.structuredContent as unknown as PaymentRequired);
    const before = await balance();
    const res = await call('svc_pdf_images', { file: { data: noImages.toString('base64') } }, payload);
    expect(res.isError).to.equal(true);
    expect((res.structuredContent as { error: { code: string } }).error.code).to.equal('NO_CONTENT');
    expect(await balance()).to.equal(before);
  });

  it('validation errors are tool errors that name the problem, before any payment', async () => {
    const bad = await call('svc_image_rotate', { file: { data: 'not base64!!' }, angle: 90 });
    expect(bad.isError).to.equal(true);
    expect(bad.content[0].text).to.contain('not standard base64');
    const angle = await call('svc_image_rotate', { file: { data: png.toString('base64') }, angle: 45 });
    expect((angle.structuredContent as { error: { code: string; message: string } }).error).to.include({ code: 'FIELD_INVALID' });
    expect((angle.structuredContent as { error: { message: string } }).error.message).to.contain('one of the integers 90, 180, 270');
    const missing = await call('svc_pdf_merge', { files: [{ data: pdf3.toString('base64') }] });
    expect((missing.structuredContent as { error: { message: string } }).error.message).to.contain('needs 2 to 20 files');
    const unknown = await call('svc_pdf_extract', { file: { data: pdf3.toString('base64') }, colour: 'red' });
    expect((unknown.structuredContent as { error: { field: string } }).error.field).to.equal('colour');
  });
});
