// MCP at /mcp: stateless streamable HTTP, one tool per operation, paid per the x402 MCP
// transport (PaymentRequired in structuredContent when unpaid, the PaymentPayload in
// params._meta["x402/payment"], the receipt in result._meta["x402/payment-response"]).
// Tools go through the same paid-call path as the HTTP routes; this plugin only translates.
import type { Plugin, Request, ResponseToolkit } from '@hapi/hapi';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema, ErrorCode, ListToolsRequestSchema,
  type CallToolResult, type CreateTaskResult, type Request as McpRequest, type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { PaymentPayload } from '@x402/core/types';
import { operations } from '../../operations/index.js';
import type { InputKind, Operation } from '../../operations/define.js';
import { INPUT_KINDS } from '../../operations/input-kinds.js';
import { ServiceError, asServiceError } from '../../core/errors.js';
import { readArguments } from '../arguments.js';
import type { Deliverable, Surface } from '../delivery.js';
import { LINK_RESULT_SCHEMA, PUSH_RESULT_SCHEMA } from '../derive/delivery-schemas.js';
import { paidCall } from '../paid-call.js';
import Bourne from '@hapi/bourne';
import { watchConnection, type Connection } from './connection.js';
import { withBody, streamedPayload } from './body.js';
import { shortened } from '../derive/fields.js';
import { mcpResource } from '../derive/resources.js';
import { mcpInputSchema } from '../derive/mcp-schemas.js';
import { MCP_MAX_DECODED_BYTES, PAYMENT_META_KEY, RECEIPT_META_KEY } from '../../core/protocol.js';
import { operationDescription, sendsContent } from '../derive/descriptions.js';
import { ERROR_SCHEMA, PAYMENT_REQUIRED_SCHEMA } from '../derive/shared-schemas.js';
import type { JobOutput } from '../../core/job.js';
import type { App } from '../app.js';
import { VERSION } from '../../core/version.js';
import { corsOriginList } from '../config.js';
import { relayToHolder, replicaOrigin, wasForwarded } from '../replica-forward.js';
import { jobHolder, jobLifetimeMs, recordJobHolder } from '../jobs.js';

// Base64 of the largest decoded input, plus JSON-RPC framing and fields.
const MCP_BODY_LIMIT = Math.ceil(MCP_MAX_DECODED_BYTES / 3) * 4 + 1024 * 1024;

const byTool = new Map(operations.map((op) => [op.tool, op]));

function resultContent(op: Operation, output: JobOutput): CallToolResult {
  const body = Buffer.from(output.body.buffer, output.body.byteOffset, output.body.byteLength);
  if (output.mediaType.startsWith('image/')) return { content: [{ type: 'image', data: body.toString('base64'), mimeType: output.mediaType }] };
  if (output.mediaType === 'application/json') {
    const text = body.toString('utf8');
    return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> };
  }
  if (output.mediaType.startsWith('text/')) return { content: [{ type: 'text', text: body.toString('utf8') }] };
  const ext = output.mediaType === 'application/zip' ? 'zip' : 'pdf';
  return {
    content: [{ type: 'resource', resource: { uri: `mcp://result/${op.tool}.${ext}`, mimeType: output.mediaType, blob: body.toString('base64') } }],
  };
}

/** What resultContent's answer keeps in memory: the text (and, for JSON, its parsed copy), or the base64 string of the bytes. */
function heldContentBytes(output: JobOutput): number {
  const size = output.body.byteLength;
  if (output.mediaType === 'application/json') return 2 * size;
  if (output.mediaType.startsWith('text/')) return size;
  return Math.ceil(size / 3) * 4;
}

/** The structuredContent of a result: its JSON, or the report beside a file. */
function resultSchema(op: Operation): Record<string, unknown> | undefined {
  if (op.output.jsonSchema) return op.output.jsonSchema;
  const report = op.output.report;
  return report ? { type: 'object', required: [report.name], properties: { [report.name]: report.jsonSchema } } : undefined;
}

function errorResult(error: ServiceError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(error.body()) }], structuredContent: error.body() as unknown as Record<string, unknown> };
}

/** What a tool answers: the result, or where it went; and beside it the operation's report, when it has one. */
function deliveredContent(op: Operation, result: Deliverable<CallToolResult>): CallToolResult {
  const answer = deliveryContent(op, result);
  const report = op.output.report;
  if (!report || !result.report) return answer;
  const reported = { [report.name]: result.report };
  return {
    ...answer,
    content: [...answer.content, { type: 'text', text: JSON.stringify(reported) }],
    structuredContent: { ...answer.structuredContent, ...reported },
  };
}

function deliveryContent(op: Operation, result: Deliverable<CallToolResult>): CallToolResult {
  if (result.kind === 'inline') return result.body;
  if (result.kind === 'link') {
    const { url, mediaType, bytes } = result.result;
    return {
      content: [{ type: 'resource_link', uri: url, name: `${op.tool} result`, mimeType: mediaType, size: bytes, description: 'GET this URL once for the result; it expires at expiresAt.' }],
      structuredContent: { result: result.result },
    };
  }
  return { content: [{ type: 'text', text: JSON.stringify({ delivered: result.delivered }) }], structuredContent: { delivered: result.delivered } };
}

/** A task's result is held in memory until its task expires: it is answered inline only within what the task store has room for. */
function mcpSurface(app: App, op: Operation, forTask = false): Surface<CallToolResult> {
  const { mcpInlineMaxBytes } = app.config;
  // The store counts base64 characters; the limit is in bytes before the encoding.
  const maxInlineBytes = forTask ? Math.min(mcpInlineMaxBytes, Math.floor(app.tasks.roomForResult() * 3 / 4)) : mcpInlineMaxBytes;
  return { maxInlineBytes, linkHint: 'call again with "delivery": "link"', encode: (output) => resultContent(op, output), heldBytesOf: heldContentBytes };
}

async function callTool(
  app: App, op: Operation, args: Record<string, unknown> | undefined, payment: PaymentPayload | undefined,
  connection: Connection, forTask = false,
): Promise<CallToolResult> {
  try {
    const raw = readArguments(op, args);
    const outcome = await paidCall(app, {
      op, raw, resource: mcpResource(op, app), surface: mcpSurface(app, op, forTask),
      ...(payment !== undefined ? { payment: () => payment } : {}), clientGone: connection.gone,
    });
    if (outcome.kind === 'payment-required') {
      const pr = outcome.paymentRequired;
      return { isError: true, structuredContent: pr as unknown as Record<string, unknown>, content: [{ type: 'text', text: JSON.stringify(pr) }] };
    }
    void connection.answered.then(outcome.sent);
    return { ...deliveredContent(op, outcome.result), _meta: { [RECEIPT_META_KEY]: outcome.receipt } };
  } catch (err) {
    return errorResult(asServiceError(err));
  }
}

/**
 * A task-augmented tools/call (MCP 2025-11-25): the task is answered at once and the same call
 * runs on without the client's connection; its result, whatever the plain call would have
 * answered (a quote, an error, the result with its receipt), is the task's, read with
 * tasks/result. The payment is settled only when the result is ready, as for any call.
 */
async function startTask(
  app: App, op: Operation, args: Record<string, unknown> | undefined, payment: PaymentPayload | undefined,
  requestId: RequestId, request: McpRequest,
): Promise<CreateTaskResult> {
  let task;
  try {
    task = await app.tasks.createTask({}, requestId, request);
  } catch (err) {
    throw protocolError(ErrorCode.InternalError, (err as Error).message);
  }
  recordJobHolder(app.gate.guard, app.config.replicaUrl || undefined, task.taskId, Math.ceil(jobLifetimeMs(app.config) / 1000));
  // Nobody to leave: the client comes back with the task id. The task holds the result: that is its delivery.
  const connection: Connection = { gone: new AbortController().signal, answered: Promise.resolve(true) };
  app.jobs.track(callTool(app, op, args, payment, connection, true)
    .then((result) => app.tasks.storeTaskResult(task.taskId, result.isError ? 'failed' : 'completed', result)));
  return { task };
}

// A small icon per area, inline so that no host has to fetch anything from the service.
const icon = (glyph: string) => ({
  src: `data:image/svg+xml;base64,${Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 48 48"><rect width="48" height="48" rx="8" fill="#1f4e79"/><text x="24" y="31" font-size="16" font-family="sans-serif" fill="#fff" text-anchor="middle">${glyph}</text></svg>`).toString('base64')}`,
  mimeType: 'image/svg+xml', sizes: ['any'],
});
type Icons = Record<InputKind, Array<ReturnType<typeof icon>>>;
const ICONS = Object.fromEntries(Object.entries(INPUT_KINDS).map(([kind, text]) => [kind, [icon(text.glyph)]])) as Icons;

/** What the server tells an agent at initialize: how paying works, the price models, the limits, how to get a quote. */
function instructions(app: App): string {
  return [
    `paydoc runs ${operations.length} image, PDF and Office tools. Every call is paid on its own with x402 version 2 in USDC; there are no accounts or keys.`,
    `To get a price without paying, call the tool without payment: the result is an error whose structuredContent is the x402 PaymentRequired (the exact price per chain, offered on ${app.gate.chains.map((c) => c.network).join(' and ')}). Every check on the input runs before that quote, so a bad file is refused before any payment is asked for.`,
    `To pay, sign one offer with an x402 client and call the same tool again with the same arguments and the PaymentPayload in _meta["${PAYMENT_META_KEY}"]; the result carries the receipt in _meta["x402/payment-response"]. Nothing is charged for a call that fails or that you leave before settlement.`,
    'Prices: flat per call for images, per page for most PDF tools (the quote is exact for the file sent).',
    'Files: give a file that is already online as file: { "url": "https://…" } (files[] for merges and images to PDF); the service fetches it, so prefer a URL to base64, which you would have to write out in full. Otherwise send standard base64 in file.data, at most 70 MB decoded per call.',
    `Results: small ones come back inline (image content, text, or an embedded resource). For a large result, or to keep it out of the conversation, add "delivery": "link" and you get a resource_link to download once within ${Math.round(app.config.resultLinkTtlS / 60)} minutes; or add "deliver_to": "<an https URL, e.g. a presigned upload URL>" and the service PUTs the result there, charging only after it was accepted. An inline result over ${Math.round(app.config.mcpInlineMaxBytes / 1048576)} MB is refused uncharged (RESULT_TOO_LARGE): ask for a link with the same payment.`,
    'If a paid call answers SETTLEMENT_UNCONFIRMED, call again with the same payment: you get the result without a second charge.',
    `Long calls: every tool can run as a task (tools/call with "task": {}): the task is answered at once, and tasks/get and tasks/result give its state and the same result the plain call would have given. Tasks are kept ${Math.round(jobLifetimeMs(app.config) / 60_000)} minutes from their start; the payment is settled only when the result is ready, and a task that fails is not charged.`,
  ].join('\n\n');
}

// MCP clients give up on a request after 60 s unless progress resets their timer; model and
// long PDF jobs run longer, so a call that carries a progressToken hears from the server often.
const PROGRESS_INTERVAL_MS = 5_000;

type ProgressNotification = { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; message: string } };

/** Sends a progress notification every few seconds until stopped; returns the stop function. */
function reportProgress(token: string | number, send: (notification: ProgressNotification) => Promise<void>): () => void {
  const started = Date.now();
  const timer = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    send({ method: 'notifications/progress', params: { progressToken: token, progress: seconds, message: `working for ${seconds} s` } }).catch(() => undefined);
  }, PROGRESS_INTERVAL_MS);
  return () => clearInterval(timer);
}

/**
 * A JSON-RPC error the SDK sends as it is: its McpError puts "MCP error <code>: " into the message,
 * and SDK clients add the same prefix again when they read it.
 */
function protocolError(code: ErrorCode, message: string): Error & { code: ErrorCode } {
  return Object.assign(new Error(message), { code });
}

function mcpServerFor(app: App, request: Request): Server {
  // Tasks: task-augmented tools/call only; no tasks/list (no sessions to scope it), no tasks/cancel (see ToolTasks).
  const server = new Server({ name: 'paydoc', version: VERSION, title: 'paydoc: pay-per-call image, PDF and Office tools', icons: ICONS.pdf }, {
    capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } }, instructions: instructions(app), taskStore: app.tasks,
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: operations.map((op) => ({
      name: op.tool,
      title: op.title,
      description: `${operationDescription(op, app)} Give the file as { "url" } when it is online (preferred over base64), and for a large result pass "delivery": "link" (a resource_link) or "deliver_to" (an https URL the result is PUT to). Paid with x402 (${op.price.model === 'flat' ? `${op.price.rate} atomic USDC per call` : `${op.price.rate} atomic USDC per page`}): call without payment to get the PaymentRequired, then again with the PaymentPayload in _meta["${PAYMENT_META_KEY}"].`,
      inputSchema: mcpInputSchema(op) as { type: 'object' },
      // An unpaid or failed call carries a PaymentRequired or an error body in structuredContent (the x402
      // MCP transport), and SDK clients validate it against outputSchema even then: the schema admits all three.
      ...(resultSchema(op) ? { outputSchema: { type: 'object' as const, anyOf: [resultSchema(op)!, PAYMENT_REQUIRED_SCHEMA, ERROR_SCHEMA, LINK_RESULT_SCHEMA, PUSH_RESULT_SCHEMA] } } : {}),
      // Read-only and not destructive: a tool returns a new file and changes nothing anywhere. Open
      // world only where the file goes to a third-party model: not on a local engine (OCR_ENGINE,
      // TABLES_ENGINE), where nothing leaves the server.
      annotations: {
        title: op.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: sendsContent(op, app),
      },
      icons: ICONS[op.input.kind],
      execution: { taskSupport: 'optional' as const },
    })),
  }));
  // The connection closing, or the client cancelling the request (notifications/cancelled).
  const connection = watchConnection(request.raw.res);
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const op = byTool.get(req.params.name);
    // An unknown tool is a protocol error (JSON-RPC -32602), not a tool result.
    if (!op) throw protocolError(ErrorCode.InvalidParams, `no tool named "${shortened(req.params.name)}"; tools/list names all ${operations.length}`);
    request.plugins.paydoc = { operation: op.id };
    const payment = req.params._meta?.[PAYMENT_META_KEY] as PaymentPayload | undefined;
    if (payment !== undefined && (typeof payment !== 'object' || payment === null)) {
      return errorResult(new ServiceError('PAYMENT_INVALID', `_meta["${PAYMENT_META_KEY}"] must be an x402 PaymentPayload object`));
    }
    if (req.params.task) return startTask(app, op, req.params.arguments, payment, extra.requestId, req);
    const token = req.params._meta?.progressToken;
    const stopReporting = token === undefined
      ? () => undefined
      : reportProgress(token, (notification) => extra.sendNotification(notification));
    const gone = AbortSignal.any([connection.gone, extra.signal]);
    try {
      return await callTool(app, op, req.params.arguments, payment, { ...connection, gone });
    } finally {
      stopReporting();
    }
  });
  return server;
}

/** A JSON-RPC error for a message that could not be read or was refused (HTTP 400 or 403, as the MCP transport answers). */
function jsonRpcError(h: ResponseToolkit, code: number, message: string, status = 400) {
  return h.response({ jsonrpc: '2.0', id: null, error: { code, message } }).code(status).type('application/json');
}

/**
 * The retry of a paid tool call whose result another replica holds, passed on to it with the
 * message as read here; undefined when no other replica said it holds it, or it did not answer
 * (this replica then answers the call as it would without forwarding).
 */
async function toHolder(request: Request, h: ResponseToolkit, app: App, message: unknown, text: string) {
  const call = message as { method?: unknown; params?: { _meta?: Record<string, unknown>; taskId?: unknown } } | null;
  const taskId = call?.params?.taskId;
  if ((call?.method === 'tasks/get' || call?.method === 'tasks/result') && typeof taskId === 'string' && !await app.tasks.getTask(taskId)) {
    const holder = await jobHolder(app.gate.guard, taskId);
    const address = replicaOrigin(holder?.address);
    if (!address || holder?.address === app.config.replicaUrl) return undefined;
    return relayToHolder(request, h, address, app.config.facilitatorTimeoutMs + jobLifetimeMs(app.config), Buffer.from(text, 'utf8'));
  }
  const payment = call?.params?._meta?.[PAYMENT_META_KEY];
  if (call?.method !== 'tools/call' || payment === null || typeof payment !== 'object') return undefined;
  const holder = replicaOrigin(await app.gate.holderElsewhere(payment as PaymentPayload));
  if (!holder) return undefined;
  return relayToHolder(request, h, holder, app.config.facilitatorTimeoutMs + 30_000, Buffer.from(text, 'utf8'));
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function hostnameOf(host: string): string {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return host;
  }
}

/**
 * The MCP specification's guard against DNS rebinding: a browser page on another site must not
 * reach a server on the user's own machine. The Origin, when a browser sends one, must be one of
 * CORS_ORIGINS ("*" allows any); and a server whose BASE_URL is a loopback name answers only
 * requests addressed to a loopback name.
 */
function rebindingRefusal(request: Request, app: App): string | undefined {
  const base = new URL(app.config.baseUrl);
  const host = hostnameOf(typeof request.headers.host === 'string' ? request.headers.host : '');
  if (LOOPBACK.has(base.hostname) && !LOOPBACK.has(host)) {
    return `Forbidden: the Host "${shortened(host)}" is not a loopback name, and this server (BASE_URL ${base.host}) answers only on loopback (DNS-rebinding protection)`;
  }
  const origin = request.headers.origin as string | undefined;
  const allowed = corsOriginList(app.config);
  if (origin !== undefined && !allowed.includes('*') && !allowed.includes(origin)) {
    return `Forbidden: the Origin "${shortened(origin)}" is not one of CORS_ORIGINS`;
  }
  return undefined;
}

export const mcpPlugin: Plugin<{ app: App }> = {
  name: 'mcp',
  register(server, { app }) {
    server.route({
      method: 'POST',
      path: '/mcp',
      options: { payload: streamedPayload(['application/json'], MCP_BODY_LIMIT), timeout: { server: false, socket: false } },
      handler: async (request: Request, h: ResponseToolkit) => {
        const refusal = rebindingRefusal(request, app);
        if (refusal) return jsonRpcError(h, -32000, refusal, 403);
        const text = await withBody(request, app.config.uploadTimeoutMs, true, async (body) => body.toString('utf8'));
        let message: unknown;
        try {
          // Bourne refuses __proto__ keys, as hapi's own JSON parsing does.
          message = Bourne.parse(text, { protoAction: 'error' });
        } catch {
          return jsonRpcError(h, -32700, 'Parse error: the request body is not valid JSON');
        }
        // JSON-RPC batches were removed from MCP in the 2025-06-18 revision.
        if (Array.isArray(message)) return jsonRpcError(h, -32600, 'Invalid Request: JSON-RPC batches are not supported (removed in MCP 2025-06-18); send one message per request');
        if (!wasForwarded(request.raw.req.headers)) {
          const forwarded = await toHolder(request, h, app, message, text);
          if (forwarded) return forwarded;
        }
        const mcp = mcpServerFor(app, request);
        // A call that asks for progress gets its answer as a stream (progress notifications, then
        // the result); any other gets the single JSON response.
        const progressToken = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta?.progressToken;
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined, enableJsonResponse: progressToken === undefined,
        });
        request.raw.res.on('close', () => { void transport.close(); void mcp.close(); });
        await mcp.connect(transport);
        await transport.handleRequest(request.raw.req, request.raw.res, message);
        return h.abandon;
      },
    });
    const notAllowed = (_r: Request, h: ResponseToolkit) => h.response(new ServiceError('METHOD_NOT_ALLOWED', 'this MCP endpoint is stateless: use POST (no SSE stream, no sessions to delete)').body())
      .code(405).header('allow', 'POST');
    server.route({ method: 'GET', path: '/mcp', handler: notAllowed });
    server.route({ method: 'DELETE', path: '/mcp', handler: notAllowed });
  },
};
