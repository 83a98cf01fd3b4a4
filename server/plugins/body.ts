// Request bodies for the operation routes and /mcp, read here rather than by hapi: hapi's own
// reader answers a body that is too slow only after the client has finished sending it (it
// drains the rest first), so a trickling client held the route until its response timeout. Read
// here, the upload limit answers 408 on time, and hapi closes the connection of a body that was
// not read to its end.
import type { Readable } from 'node:stream';
import Boom from '@hapi/boom';
import { type as parseContentType } from '@hapi/content';
import type { Plugin, Request, RouteOptionsPayload } from '@hapi/hapi';

/** hapi's settings for a route whose body is read by readBody (gzip and deflate still decoded by hapi). */
export function streamedPayload(allow: string[], maxBytes: number): RouteOptionsPayload {
  return { output: 'stream', parse: 'gunzip', allow, maxBytes, timeout: false };
}

/**
 * Refuses a body the route will refuse anyway, by its declared Content-Length or its type, before
 * hapi asks for it or waits for it. hapi makes the same two checks (in @hapi/subtext) only after
 * it has answered `Expect: 100-continue` with `100 Continue`, and then reads the whole declared body
 * before it answers the refusal, with no time limit: a client that declared 80 MB and sent nothing
 * held its request until the route's timeout and got a 5xx. Refused here, a client that waits for
 * `100 Continue` is answered at once and sends nothing. A client that sends its body anyway is
 * still sending when the refusal is ready: closing the connection under it then (hapi closes one
 * whose body was not read) breaks its upload with EPIPE or ECONNRESET before it reads the status,
 * so the rest of the body is read and dropped first, within the bounds of drainUpload.
 */
export const bodyPrecheckPlugin: Plugin<{ drainMs: number }> = {
  name: 'body-precheck',
  register(server, { drainMs }) {
    // onPreAuth: the route is known (and with it its limits), the body not yet touched.
    server.ext('onPreAuth', async (request, h) => {
      if (request.method === 'get' || request.method === 'head') return h.continue;
      const settings = request.route.settings.payload as {
        maxBytes?: number; allow?: string | string[]; override?: string; defaultContentType?: string;
      };
      const declared = Number(request.headers['content-length']);
      let refusal: Boom.Boom | undefined;
      if (settings.maxBytes !== undefined && declared > settings.maxBytes) {
        // hapi's own wording, so the answer is the one its check would have given.
        refusal = Boom.entityTooLarge(`Payload content length greater than maximum allowed: ${settings.maxBytes}`);
      } else if (settings.allow !== undefined) {
        const allow = Array.isArray(settings.allow) ? settings.allow : [settings.allow];
        const { mime } = parseContentType(settings.override || (request.headers['content-type'] as string | undefined) || settings.defaultContentType || 'application/octet-stream');
        if (!allow.includes(mime)) refusal = Boom.unsupportedMediaType();
      }
      if (!refusal) return h.continue;
      // Without `100 Continue` (never sent here) a client that asked for it sends no body.
      const expect = request.headers.expect as string | undefined;
      if (!/100-continue/i.test(expect ?? '')) await drainUpload(request.raw.req, drainMs);
      throw refusal;
    });
  },
};

/** A body being sent is read to its end and dropped, up to this many bytes (about twice the largest route's limit, 96 MB). */
export const DRAIN_MAX_BYTES = 200 * 1024 * 1024;
/** No byte of the body within this time: the client sends none (it declared a length only), and is answered at once. */
export const DRAIN_FIRST_MS = 400;
/** Once a body flows, a pause this long (a busy client or machine) still counts as sending. */
export const DRAIN_IDLE_MS = 5_000;

/**
 * Reads and drops the rest of a request body, so the answer that follows reaches a client still
 * sending. Stops at the body's end, when no byte came within DRAIN_FIRST_MS or none for
 * DRAIN_IDLE_MS since the last, after `maxMs`, or past DRAIN_MAX_BYTES (then the connection is
 * closed with the body unread, as before).
 */
export function drainUpload(stream: Readable, maxMs: number): Promise<void> {
  if (stream.readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    let bytes = 0;
    let idle: NodeJS.Timeout;
    const finish = () => {
      clearTimeout(idle);
      clearTimeout(cap);
      stream.off('data', onData).off('end', finish).off('close', finish).off('error', finish);
      stream.pause();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > DRAIN_MAX_BYTES) return finish();
      clearTimeout(idle);
      idle = setTimeout(finish, DRAIN_IDLE_MS);
    };
    idle = setTimeout(finish, DRAIN_FIRST_MS);
    const cap = setTimeout(finish, maxMs);
    stream.on('data', onData).once('end', finish).once('close', finish).once('error', finish);
    stream.resume();
  });
}

/**
 * Buffers lent to bodies that are only read on this thread and answered without a job: the
 * unpaid request every x402 client sends first to learn the price, and MCP messages (parsed to
 * text at once). Each such body used to be a new allocation outside V8's heap that lived for the
 * whole request; at a few megabytes per upload, that memory is what made V8 run a full
 * collection every few paid calls, a fifth of the service's CPU per call. A paid body is not
 * lent: its bytes are handed to the worker without a copy, and so leave this thread.
 */
export class BodyBuffers {
  private readonly idle = new Map<number, Buffer[]>();
  private idleBytes = 0;

  constructor(private readonly maxIdleBytes: number, private readonly maxPerSize: number) {}

  /** A buffer of at least `size` bytes; sizes are rounded up to a power of two so buffers fit many bodies. */
  take(size: number): Buffer {
    const capacity = 2 ** Math.ceil(Math.log2(Math.max(size, MIN_LENT_BYTES)));
    const buffer = this.idle.get(capacity)?.pop();
    if (!buffer) return Buffer.allocUnsafeSlow(capacity);
    this.idleBytes -= capacity;
    return buffer;
  }

  /**
   * Back for the next body, unless it was handed on (a transfer empties it) or the idle set is
   * full. The bytes it held are zeroed first: an idle buffer keeps nothing of anyone's file.
   */
  give(buffer: Buffer, used: number): void {
    const capacity = buffer.buffer.byteLength;
    const list = this.idle.get(capacity) ?? [];
    if (capacity === 0 || list.length >= this.maxPerSize || this.idleBytes + capacity > this.maxIdleBytes) return;
    buffer.fill(0, 0, used);
    list.push(Buffer.from(buffer.buffer));
    this.idle.set(capacity, list);
    this.idleBytes += capacity;
  }
}

// Below this a body is cheap to allocate and dies young; lending it would gain nothing.
const MIN_LENT_BYTES = 64 * 1024;
const lent = new BodyBuffers(128 * 1024 * 1024, 8);

/**
 * Reads the whole body and passes it to `use`. With `lend`, the body lives in a lent buffer that
 * is given back when `use` settles: nothing may keep a view of it past then.
 */
export async function withBody<T>(request: Request, timeoutMs: number, lend: boolean, use: (body: Buffer) => Promise<T>): Promise<T> {
  const { maxBytes } = request.route.settings.payload as { maxBytes: number };
  const stream = request.payload as Readable;
  const declared = Number(request.headers['content-length']);
  // Without an encoding the body is exactly its Content-Length (Node's parser stops there).
  if (request.headers['content-encoding'] || !Number.isSafeInteger(declared) || declared <= 0 || declared > maxBytes) {
    return use(ownedBuffer(await readUndeclared(request, timeoutMs, maxBytes).catch(lingerOnTimeout(request))));
  }
  const lending = lend && declared >= MIN_LENT_BYTES;
  const buffer = lending ? lent.take(declared) : Buffer.allocUnsafeSlow(declared);
  try {
    return await use(await readInto(stream, buffer.subarray(0, declared), timeoutMs).catch(lingerOnTimeout(request)));
  } finally {
    if (lending) lent.give(buffer, declared);
  }
}

/** After a 408, what the client still sends is read and dropped for at most this long before its connection is closed. */
export const LINGER_AFTER_TIMEOUT_MS = 10_000;

/**
 * A body too slow is answered 408 while its client is still sending. Node closes the connection
 * once the answer is written (Connection: close), and closing it with bytes unread resets it: a
 * client that reads only once it has sent its body (or whose next write comes before its read)
 * fails with EPIPE or ECONNRESET and never sees the 408. So the connection is closed lingering, as
 * web servers do: the answer is followed by a FIN, and what still comes is read and dropped
 * (drainUpload's bounds, at most LINGER_AFTER_TIMEOUT_MS) before it is closed.
 */
function lingerOnTimeout(request: Request): (err: unknown) => never {
  return (err) => {
    if ((err as Boom.Boom).output?.statusCode === 408) {
      const { req } = request.raw;
      const { socket } = req;
      socket.destroySoon = () => {
        if (socket.writable) socket.end();
        void drainUpload(req, LINGER_AFTER_TIMEOUT_MS).then(() => socket.destroy());
      };
    }
    throw err;
  };
}

/**
 * Reads a body whose length was not declared (chunked, or encoded). One found larger than
 * `maxBytes` while it arrives is refused 413 after the rest is read and dropped by drainUpload
 * (within its bounds, and within what is left of `timeoutMs`): closing the connection under a
 * client still sending, as Wreck.read does, resets it before it reads the refusal.
 */
function readUndeclared(request: Request, timeoutMs: number, maxBytes: number): Promise<Buffer> {
  const stream = request.payload as Readable;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const stop = () => {
      clearTimeout(timer);
      stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose).off('aborted', onClose);
      stream.pause();
    };
    const fail = (err: Error) => { stop(); reject(err); };
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length <= maxBytes) return void chunks.push(chunk);
      stop();
      // The raw request, not a decoder piped from it: what is dropped is the bytes as sent.
      const raw = request.raw.req;
      raw.unpipe();
      void drainUpload(raw, Math.max(0, timeoutMs - (Date.now() - started))).then(() => {
        // hapi's own wording, as the declared-length check gives (errors.ts names the limit from it).
        reject(Boom.entityTooLarge(`Payload content length greater than maximum allowed: ${maxBytes}`));
      });
    };
    const onEnd = () => { stop(); resolve(Buffer.concat(chunks, length)); };
    const onError = (err: Error) => fail((err as Boom.Boom).isBoom ? err : Boom.internal('Payload stream error', err));
    const onClose = () => fail(Boom.internal('Payload stream closed prematurely'));
    const timer = setTimeout(() => fail(Boom.clientTimeout()), timeoutMs);
    stream.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose).once('aborted', onClose);
  });
}

/**
 * Every body owns its whole ArrayBuffer, so a paid upload's buffer can be handed to the worker
 * without a copy (pipeline.ts). A small body joined from its chunks is a slice of Node's shared
 * small-buffer pool: such a body is copied.
 */
function ownedBuffer(body: Buffer): Buffer {
  if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) return body;
  const owned = Buffer.allocUnsafeSlow(body.length);
  body.copy(owned);
  return owned;
}

/**
 * Copies the chunks into the body's buffer as they arrive (collecting them and joining them at
 * the end, as Wreck does, allocates every upload twice).
 */
function readInto(stream: Readable, body: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let length = 0;
    const finish = (err: Error | null) => {
      clearTimeout(timer);
      stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose).off('aborted', onClose);
      if (!err) return resolve(body.subarray(0, length));
      // The rest is not read: the refusal is answered and hapi closes the connection.
      stream.pause();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (length + chunk.length > body.length) return finish(Boom.badRequest('Payload is longer than its Content-Length'));
      body.set(chunk, length);
      length += chunk.length;
    };
    const onEnd = () => finish(null);
    const onError = (err: Error) => finish((err as Boom.Boom).isBoom ? err : Boom.internal('Payload stream error', err));
    const onClose = () => finish(Boom.internal('Payload stream closed prematurely'));
    const timer = setTimeout(() => finish(Boom.clientTimeout()), timeoutMs);
    stream.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose).once('aborted', onClose);
  });
}
