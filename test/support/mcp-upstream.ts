// A loopback MCP server built with the official SDK, standing in for the service where a test drives
// the bridge's modules in process: it lists the tools given and answers each call with the test's
// handler, recording what it was sent (a payment in _meta included).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentPayload } from '@x402/core/types';
import { PAYMENT_META_KEY } from '../../core/protocol.js';

export interface UpstreamCall { name: string; args: Record<string, unknown>; payment?: PaymentPayload }
export type UpstreamHandler = (call: UpstreamCall) => Promise<CallToolResult> | CallToolResult;

export class LoopbackUpstream {
  readonly calls: UpstreamCall[] = [];
  url = '';
  private server: http.Server | undefined;

  constructor(private readonly tools: Tool[], public handler: UpstreamHandler, private readonly instructions?: string) {}

  /** The calls that carried a payment. */
  paid(): UpstreamCall[] {
    return this.calls.filter((c) => c.payment !== undefined);
  }

  async start(): Promise<void> {
    this.server = http.createServer(async (req, res) => {
      if (req.method !== 'POST') { res.writeHead(405, { allow: 'POST' }).end(); return; }
      const mcp = new Server({ name: 'loopback-upstream', version: '1.0.0' }, {
        capabilities: { tools: {} }, ...(this.instructions ? { instructions: this.instructions } : {}),
      });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: this.tools }));
      mcp.setRequestHandler(CallToolRequestSchema, async (r) => {
        const payment = r.params._meta?.[PAYMENT_META_KEY] as PaymentPayload | undefined;
        const call = { name: r.params.name, args: r.params.arguments ?? {}, ...(payment ? { payment } : {}) };
        this.calls.push(call);
        return this.handler(call);
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => { void transport.close(); void mcp.close(); });
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    });
    this.server.listen(0, '127.0.0.1');
    await new Promise((resolve) => this.server!.once('listening', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
