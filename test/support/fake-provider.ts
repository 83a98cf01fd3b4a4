// A local OpenAI-compatible chat-completions server standing in for the model provider. It checks
// what a real provider would refuse (unknown model, too many images, a malformed or strict-incompatible
// response format) and otherwise answers whatever the test scripts: text, JSON, errors, delays, hangs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_MODEL = 'fake-vision-1';
const MAX_IMAGES_PER_REQUEST = 30;

export interface ReceivedRequest {
  /** 0-based arrival order. */
  index: number;
  model: string;
  authorization: string | undefined;
  messages: Array<{ role: string; content: unknown }>;
  /** Every image part, in message order, as sent (data URLs). */
  imageUrls: string[];
  /** The text parts of the last user message. */
  userTexts: string[];
  responseFormat: { type: string; json_schema?: { name: string; schema: Record<string, unknown>; strict?: boolean } } | undefined;
  body: Record<string, unknown>;
}

export interface Reply {
  /** HTTP status; 200 by default. */
  status?: number;
  /** The assistant's text (200 answers). */
  content?: string;
  /** Serialised as the assistant's text (200 answers). */
  json?: unknown;
  finishReason?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Never answer (until the client gives up or the server closes). */
  hang?: boolean;
}

export type Script = (request: ReceivedRequest) => Reply | Promise<Reply>;

export interface FakeProvider {
  baseUrl: string;
  received: ReceivedRequest[];
  /** Most requests in progress at the same time since the last reset. */
  maxInFlight: number;
  script: Script;
  reset(script: Script): void;
  close(): Promise<void>;
}

/** The width of a PNG data URL, read from its IHDR chunk (tests give each page its own width). */
export function pngWidth(url: string): number {
  const bytes = Buffer.from(url.slice(url.indexOf(',') + 1, url.indexOf(',') + 1 + 64), 'base64');
  if (bytes.subarray(1, 4).toString('latin1') !== 'PNG') throw new Error('not a PNG data URL');
  return bytes.readUInt32BE(16);
}

function strictProblem(node: unknown, path: string): string | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  if (Array.isArray(node)) {
    for (const [i, child] of node.entries()) {
      const problem = strictProblem(child, `${path}/${i}`);
      if (problem) return problem;
    }
    return undefined;
  }
  const record = node as Record<string, unknown>;
  if (record.type === 'object') {
    if (record.additionalProperties !== false) return `${path}: additionalProperties must be false`;
    const names = Object.keys((record.properties as object | undefined) ?? {});
    const required = (record.required as string[] | undefined) ?? [];
    const missing = names.find((name) => !required.includes(name));
    if (missing) return `${path}: '${missing}' must be required`;
  }
  for (const [key, child] of Object.entries(record)) {
    if (key === 'enum' || key === 'const' || key === 'default') continue;
    const problem = strictProblem(child, `${path}/${key}`);
    if (problem) return problem;
  }
  return undefined;
}

/** What OpenAI would answer 400 to before running the model. */
function refusal(request: ReceivedRequest): string | undefined {
  if (!Array.isArray(request.messages) || request.messages.length === 0) return 'messages must be a non-empty array';
  if (request.imageUrls.length > MAX_IMAGES_PER_REQUEST) return `at most ${MAX_IMAGES_PER_REQUEST} images per request (got ${request.imageUrls.length})`;
  for (const url of request.imageUrls) {
    if (!/^data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+/=]+$/.test(url)) return 'image_url must be a base64 data URL of a PNG, JPEG or WebP image';
  }
  const format = request.responseFormat;
  if (format) {
    if (format.type !== 'json_schema') return `unsupported response_format type ${format.type}`;
    const spec = format.json_schema;
    if (!spec || !/^[a-zA-Z0-9_-]{1,64}$/.test(spec.name ?? '')) return 'response_format.json_schema.name is invalid';
    if (!spec.schema || typeof spec.schema !== 'object') return 'response_format.json_schema.schema is required';
    if (spec.schema.type !== 'object') return 'the root of the schema must be an object';
    if (spec.strict) {
      const problem = strictProblem(spec.schema, '#');
      if (problem) return `Invalid schema for response_format '${spec.name}': ${problem}`;
    }
  }
  return undefined;
}

function describeRequest(index: number, body: Record<string, unknown>, authorization: string | undefined): ReceivedRequest {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as ReceivedRequest['messages'];
  const imageUrls: string[] = [];
  let userTexts: string[] = [];
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    const texts: string[] = [];
    for (const part of message.content as Array<Record<string, unknown>>) {
      if (part.type === 'image_url') imageUrls.push(String((part.image_url as { url?: unknown } | undefined)?.url));
      if (part.type === 'text') texts.push(String(part.text));
    }
    if (message.role === 'user') userTexts = texts;
  }
  return {
    index, model: String(body.model), authorization, messages, imageUrls, userTexts,
    responseFormat: body.response_format as ReceivedRequest['responseFormat'], body,
  };
}

function errorBody(status: number, message: string) {
  const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, param: null, code: null } };
}

function completion(request: ReceivedRequest, content: string, finishReason: string) {
  return {
    id: `chatcmpl-fake-${request.index}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: finishReason, logprobs: null }],
    usage: { prompt_tokens: 85 * request.imageUrls.length + 40, completion_tokens: Math.ceil(content.length / 4), total_tokens: 0 },
  };
}

export async function startFakeProvider(script: Script): Promise<FakeProvider> {
  let inFlight = 0;
  const fake: FakeProvider = {
    baseUrl: '',
    received: [],
    maxInFlight: 0,
    script,
    reset(next) {
      fake.received = [];
      fake.maxInFlight = 0;
      fake.script = next;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      send(res, 404, errorBody(404, `no route ${req.method} ${req.url}`));
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      send(res, 400, errorBody(400, 'the body is not JSON'));
      return;
    }
    const request = describeRequest(fake.received.length, body, req.headers.authorization);
    fake.received.push(request);
    if (request.model !== FAKE_MODEL) {
      send(res, 404, errorBody(404, `The model '${request.model}' does not exist`));
      return;
    }
    const refused = refusal(request);
    if (refused) {
      send(res, 400, errorBody(400, refused));
      return;
    }
    inFlight++;
    fake.maxInFlight = Math.max(fake.maxInFlight, inFlight);
    try {
      const reply = await fake.script(request);
      if (reply.hang) {
        await new Promise<void>((resolve) => res.on('close', () => resolve()));
        return;
      }
      if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
      const status = reply.status ?? 200;
      if (status !== 200) {
        send(res, status, errorBody(status, `scripted ${status}`), reply.headers);
        return;
      }
      const content = reply.json !== undefined ? JSON.stringify(reply.json) : reply.content ?? '';
      send(res, 200, completion(request, content, reply.finishReason ?? 'stop'), reply.headers);
    } finally {
      inFlight--;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}
