// Passing a request on to the replica that holds its result (a held result's retry, a result
// link's download), and its answer back, so that no load balancer has to know which replica
// that is. Only an address another replica recorded in the shared store (its REPLICA_URL) is
// ever contacted, never anything a client sent. A forwarded request carries FORWARDED_HEADER,
// and a request carrying it is never forwarded again: a client that sends it only turns
// forwarding off for itself.
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';

export const FORWARDED_HEADER = 'x-paydoc-forwarded';

// A holder that does not accept the connection in this time is treated as gone.
const CONNECT_TIMEOUT_MS = 2000;

// Connection-level headers, the host, and the encodings (the body is read decoded, and the holder
// answers uncompressed; this replica compresses for its own client).
const NOT_FORWARDED = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'proxy-authorization', 'proxy-authenticate', 'host', 'expect', 'content-encoding', 'accept-encoding', FORWARDED_HEADER,
]);

/** The holder's answer headers this replica passes on (its own CORS and security headers are its own). */
const RELAYED = ['content-type', 'content-length', 'content-disposition', 'cache-control', 'referrer-policy', 'payment-required', 'payment-response', 'retry-after'];

/** An address read from the shared store, as an http(s) origin without credentials; undefined otherwise. */
export function replicaOrigin(address: string | undefined): URL | undefined {
  if (!address || !URL.canParse(address)) return undefined;
  const url = new URL(address);
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return undefined;
  return new URL(url.origin);
}

/** Whether another replica sent this request on already. */
export function wasForwarded(headers: http.IncomingHttpHeaders): boolean {
  return headers[FORWARDED_HEADER] !== undefined;
}

export interface Relayed {
  status: number;
  headers: Record<string, string>;
  body: Readable;
}

export interface ForwardedRequest {
  method: string;
  /** Path and query, as this replica received them. */
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The request body, streamed on (or sent, as read here) once the holder has accepted the connection. */
  body?: Readable | Buffer;
  /** Ends the forward when this replica's own client has gone. */
  signal?: AbortSignal;
  /** How long the holder may stay silent once connected (it may be settling a payment). */
  idleTimeoutMs: number;
}

/** Sends the request to the holder; undefined when the holder could not be reached or did not answer. */
export function forwardTo(holder: URL, request: ForwardedRequest): Promise<Relayed | undefined> {
  const headers: http.OutgoingHttpHeaders = { [FORWARDED_HEADER]: '1', host: holder.host };
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && !NOT_FORWARDED.has(name)) headers[name] = value;
  }
  // The body is sent as read (decoded): its declared length stands only if it was not encoded.
  if (request.headers['content-encoding']) delete headers['content-length'];
  if (Buffer.isBuffer(request.body)) headers['content-length'] = request.body.byteLength;
  const client = holder.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const done = (value: Relayed | undefined) => { if (!settled) { settled = true; resolve(value); } };
    const options = { method: request.method, headers, agent: false, ...(request.signal ? { signal: request.signal } : {}) };
    const outgoing = client.request(new URL(request.path, holder), options);
    const connectTimer = setTimeout(() => outgoing.destroy(new Error('the holder did not accept the connection')), CONNECT_TIMEOUT_MS);
    outgoing.once('socket', (socket) => {
      socket.setTimeout(request.idleTimeoutMs, () => outgoing.destroy(new Error('the holder stopped answering')));
      const connected = () => {
        clearTimeout(connectTimer);
        if (Buffer.isBuffer(request.body)) outgoing.end(request.body);
        else if (request.body) request.body.pipe(outgoing);
        else outgoing.end();
      };
      if (socket.connecting) socket.once(holder.protocol === 'https:' ? 'secureConnect' : 'connect', connected);
      else connected();
    });
    outgoing.once('response', (answer) => {
      const relayed: Record<string, string> = {};
      for (const name of RELAYED) {
        const value = answer.headers[name];
        if (typeof value === 'string') relayed[name] = value;
      }
      done({ status: answer.statusCode ?? 502, headers: relayed, body: answer });
    });
    outgoing.once('error', () => { clearTimeout(connectTimer); done(undefined); });
  });
}

/**
 * Passes a hapi request on to the holder (with `body`: the request's body, streamed or as read
 * here) and answers with what it answered; undefined when the holder could not be reached (the
 * caller then answers as it would without forwarding).
 */
export async function relayToHolder(
  request: Request, h: ResponseToolkit, holder: URL, idleTimeoutMs: number, body: Readable | Buffer | undefined,
): Promise<ResponseObject | undefined> {
  const gone = new AbortController();
  const res = request.raw.res;
  res.once('close', () => { if (!res.writableFinished) gone.abort(); });
  const relayed = await forwardTo(holder, {
    method: request.method.toUpperCase(), path: request.url.pathname + request.url.search, headers: request.raw.req.headers,
    ...(body ? { body } : {}), signal: gone.signal, idleTimeoutMs,
  });
  if (!relayed) return undefined;
  const response = h.response(relayed.body).code(relayed.status);
  for (const [name, value] of Object.entries(relayed.headers)) response.header(name, value);
  return response;
}
