// The one way the service makes a request on a buyer's behalf: fetching an input from a URL
// (file_url, files[i].url) and pushing a result to deliver_to. SECURITY.md, "Fetching and
// pushing buyers' URLs", lists the rules enforced here. This module logs nothing, and its error
// messages name the field, the host and what failed, never a URL's path or query (a presigned
// URL's query is a credential).
import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { lookup } from 'node:dns/promises';
import { isIP, isIPv6, type LookupFunction } from 'node:net';
import { fail, ServiceError, type ErrorCode } from '../../core/errors.js';
import { ConfigError, type Config } from '../config.js';
import { VERSION } from '../../core/version.js';
import { refusedAddressClass } from './address.js';

/** A fetch follows at most this many redirects; a push follows none. */
export const MAX_REDIRECTS = 3;
/** Long enough for presigned URLs, whose queries carry signatures and session tokens. */
export const MAX_URL_LENGTH = 8192;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const DNS_FAILURES = new Set(['ENOTFOUND', 'ENODATA', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ESERVFAIL', 'ENONAME']);
// OpenSSL's certificate verification codes and Node's own TLS and SSL error codes.
const TLS_FAILURE = /^(ERR_TLS_|ERR_SSL_|EPROTO$|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|HOSTNAME_MISMATCH$|INVALID_CA$|PATH_LENGTH_EXCEEDED$|INVALID_PURPOSE$)/;
const CONNECTION_FAILURES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset or closed before the answer was complete',
  EPIPE: 'the connection was closed while the request was being sent',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
};

export interface OutboundRules {
  /** URL_INPUTS: false refuses every buyer URL, naming the setting. */
  enabled: boolean;
  /**
   * URL_FETCH_ALLOW as "host:port" keys, hosts as the URL parser writes them: exempt from the address
   * rule, and plain http is allowed to them.
   */
  allow: ReadonlySet<string>;
  /** URL_FETCH_TIMEOUT_MS: one deadline for a whole fetch (redirects and lookups included) or push. */
  timeoutMs: number;
  /** Looks up a host name's addresses, once per connection (default: the system resolver). Tests give their own. */
  resolve?: (host: string) => Promise<string[]>;
  /** Certificates trusted instead of the system's (tests with their own certificate). */
  ca?: string;
}

export interface FetchedFile {
  /** The whole body, in a Buffer that owns its ArrayBuffer (so it can be transferred to a worker without a copy). */
  bytes: Buffer;
  /** The Content-Type's media type, lowercased, without parameters; only a hint, the bytes decide the type. */
  mediaType?: string;
}

/** The rules from the settings; throws ConfigError for a URL_FETCH_ALLOW entry that is not host:port. */
export function outboundRules(config: Pick<Config, 'urlInputs' | 'urlFetchAllow' | 'urlFetchTimeoutMs'>): OutboundRules {
  const allow = new Set<string>();
  for (const entry of config.urlFetchAllow.split(',').map((s) => s.trim()).filter(Boolean)) {
    const match = /^([^/@?#\s]+):(\d{1,5})$/.exec(entry);
    const port = Number(match?.[2]);
    const host = match ? hostnameOf(match[1]) : undefined;
    if (!host || port < 1 || port > 65535) {
      throw new ConfigError(`invalid configuration: URL_FETCH_ALLOW (urlFetchAllow): "${entry}" is not host:port`);
    }
    allow.add(`${host}:${port}`);
  }
  return { enabled: config.urlInputs === 'on', allow, timeoutMs: config.urlFetchTimeoutMs };
}

/** Checks a URL's form (scheme, credentials, length) without any network access. */
export function parseBuyerUrl(raw: unknown, field: string, rules: OutboundRules): URL {
  requireEnabled(field, rules);
  if (typeof raw !== 'string' || raw === '') fail('URL_REFUSED', `${field} must be an https URL`, { field });
  if (raw.length > MAX_URL_LENGTH) fail('URL_REFUSED', `${field} is ${raw.length} characters long; the limit is ${MAX_URL_LENGTH}`, { field });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    fail('URL_REFUSED', `${field} is not a URL`, { field });
  }
  checkForm(url, field, field, rules);
  url.hash = '';
  return url;
}

/**
 * Resolves the URL's host and vets every address now, without connecting: for deliver_to,
 * refused before any payment. Any failure, a lookup that fails included, is URL_REFUSED.
 */
export async function vetBuyerUrl(url: URL, field: string, rules: OutboundRules): Promise<void> {
  requireEnabled(field, rules);
  checkForm(url, field, field, rules);
  const deadline = new Deadline(rules.timeoutMs);
  try {
    await vettedAddresses(url, field, field, rules, deadline.signal);
  } catch (err) {
    throw deadline.explain(err, 'URL_REFUSED', field, `${field}: looking up ${url.hostname}`);
  } finally {
    deadline.clear();
  }
}

/**
 * GETs a buyer's URL: every address vetted, at most MAX_REDIRECTS redirects (each vetted the
 * same way), the body cut at maxBytes, all within rules.timeoutMs. Failures are 4xx:
 * URL_REFUSED, URL_FETCH_FAILED or PAYLOAD_TOO_LARGE; an abort of `signal` throws its reason.
 */
export async function fetchBuyerUrl(
  url: URL, opts: { field: string; maxBytes: number; rules: OutboundRules; signal?: AbortSignal },
): Promise<FetchedFile> {
  const { field, maxBytes, rules } = opts;
  requireEnabled(field, rules);
  checkForm(url, field, field, rules);
  const deadline = new Deadline(rules.timeoutMs, opts.signal);
  let current = url;
  try {
    for (let redirects = 0; ; redirects++) {
      const subject = redirects === 0 ? field : `${field}'s redirect ${redirects}`;
      const addresses = await vettedAddresses(current, field, subject, rules, deadline.signal);
      const answer = await send('GET', current, addresses, {}, undefined, rules, deadline.signal);
      const status = answer.statusCode ?? 0;
      if (REDIRECT_STATUSES.has(status)) {
        answer.destroy();
        if (redirects === MAX_REDIRECTS) fail('URL_FETCH_FAILED', `${field} redirected more than ${MAX_REDIRECTS} times; at most ${MAX_REDIRECTS} redirects are followed`, { field });
        current = redirectTarget(answer, current, field, status);
        checkForm(current, field, `${field}'s redirect ${redirects + 1}`, rules);
        continue;
      }
      if (status < 200 || status > 299) {
        answer.destroy();
        fail('URL_FETCH_FAILED', `${field}: the URL answered ${status}`, { field });
      }
      return await readBody(answer, field, maxBytes);
    }
  } catch (err) {
    throw deadline.explain(err, 'URL_FETCH_FAILED', field, `${field}: fetching from ${current.host}`);
  } finally {
    deadline.clear();
  }
}

/**
 * PUTs a result to a buyer's URL (deliver_to), vetted like a fetch, within rules.timeoutMs.
 * A refused address is URL_REFUSED; a non-2xx answer (a redirect included: a push follows
 * none) or a failure is DELIVERY_FAILED naming it; an abort of `signal` throws its reason.
 */
export async function pushToBuyerUrl(
  url: URL, body: Uint8Array, mediaType: string, opts: { field: string; rules: OutboundRules; signal?: AbortSignal },
): Promise<{ status: number }> {
  const { field, rules } = opts;
  requireEnabled(field, rules);
  checkForm(url, field, field, rules);
  const deadline = new Deadline(rules.timeoutMs, opts.signal);
  try {
    const addresses = await vettedAddresses(url, field, field, rules, deadline.signal);
    const headers = { 'content-type': mediaType, 'content-length': String(body.byteLength) };
    const answer = await send('PUT', url, addresses, headers, body, rules, deadline.signal);
    const status = answer.statusCode ?? 0;
    answer.destroy();
    if (status >= 300 && status <= 399) fail('DELIVERY_FAILED', `${field}: the URL answered ${status}, a redirect; a push follows no redirects, so the result was not delivered`, { field });
    if (status < 200 || status > 299) fail('DELIVERY_FAILED', `${field}: the URL answered ${status}; the result was not delivered`, { field });
    return { status };
  } catch (err) {
    throw deadline.explain(err, 'DELIVERY_FAILED', field, `${field}: pushing to ${url.host}`);
  } finally {
    deadline.clear();
  }
}

function requireEnabled(field: string, rules: OutboundRules): void {
  if (!rules.enabled) fail('URL_REFUSED', `${field}: URLs are turned off on this deployment (URL_INPUTS=off)`, { field });
}

/** Scheme and credentials; `subject` names the URL in messages ("file_url's redirect 2"). */
function checkForm(url: URL, field: string, subject: string, rules: OutboundRules): void {
  const plainHttpAllowed = url.protocol === 'http:' && rules.allow.has(allowKey(url));
  if (url.protocol !== 'https:' && !plainHttpAllowed) {
    fail('URL_REFUSED', `${subject} must be an https URL, not ${url.protocol.replace(/:$/, '')}`, { field });
  }
  if (url.username || url.password) {
    fail('URL_REFUSED', `${subject} carries credentials (user:password@); URLs with credentials are refused`, { field });
  }
}

/** The host's addresses, each vetted unless the host:port is in URL_FETCH_ALLOW. */
async function vettedAddresses(url: URL, field: string, subject: string, rules: OutboundRules, signal: AbortSignal): Promise<string[]> {
  const host = bareHostname(url);
  const literal = isIP(host) !== 0;
  const addresses = literal ? [host] : await untilAborted((rules.resolve ?? systemResolve)(host), signal);
  if (addresses.length === 0) throw Object.assign(new Error('no addresses'), { code: 'ENODATA' });
  if (rules.allow.has(allowKey(url))) return addresses;
  for (const address of addresses) {
    const refused = refusedAddressClass(address);
    if (!refused) continue;
    const what = literal ? `${url.hostname} is ${refused}` : `${url.hostname} resolves to ${address}, ${refused}`;
    fail('URL_REFUSED', `${subject}: ${what}; only public addresses are reached`, { field });
  }
  return addresses;
}

async function systemResolve(host: string): Promise<string[]> {
  return (await lookup(host, { all: true })).map((answer) => answer.address);
}

/**
 * One request, connected to the vetted addresses only: the lookup Node would make is replaced
 * by one that answers them, so no second lookup can return another address. TLS still checks
 * the certificate against the URL's host name. Only the headers set here are sent.
 */
function send(method: 'GET' | 'PUT', url: URL, addresses: readonly string[], headers: OutgoingHttpHeaders, body: Uint8Array | undefined, rules: OutboundRules, signal: AbortSignal): Promise<IncomingMessage> {
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request({
      method,
      hostname: bareHostname(url),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      headers: { 'user-agent': `paydoc/${VERSION}`, accept: '*/*', ...headers },
      lookup: pinnedLookup(addresses),
      agent: false, // a fresh connection: no socket is shared with another request or host
      signal,
      ...(rules.ca ? { ca: rules.ca } : {}),
    }, resolve);
    request.on('error', reject);
    request.end(body);
  });
}

function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const answers = addresses.map((address) => ({ address, family: isIPv6(address) ? 6 : 4 }));
  return (_hostname, options, callback) => {
    if (options.all) callback(null, answers);
    else callback(null, answers[0].address, answers[0].family);
  };
}

function redirectTarget(answer: IncomingMessage, from: URL, field: string, status: number): URL {
  const location = answer.headers.location;
  if (!location) fail('URL_FETCH_FAILED', `${field}: the URL answered ${status} without a Location to follow`, { field });
  try {
    const target = new URL(location, from);
    target.hash = '';
    return target;
  } catch {
    fail('URL_FETCH_FAILED', `${field}: the URL answered ${status} with a Location that is not a URL`, { field });
  }
}

/** Reads the body into one Buffer, stopping (and closing the connection) as soon as it passes maxBytes. */
async function readBody(answer: IncomingMessage, field: string, maxBytes: number): Promise<FetchedFile> {
  const declaredHeader = answer.headers['content-length'];
  const declared = declaredHeader !== undefined && /^\d+$/.test(declaredHeader) ? Number(declaredHeader) : undefined;
  if (declared !== undefined && declared > maxBytes) {
    answer.destroy();
    fail('PAYLOAD_TOO_LARGE', `${field} is ${declared} bytes (its Content-Length); the limit is ${maxBytes} bytes`, { field });
  }
  // With a known length the body goes straight into its final Buffer; otherwise chunks are kept
  // and copied once. Buffer.alloc never hands out a slice of Node's shared pool.
  const known = declared !== undefined ? Buffer.alloc(declared) : undefined;
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of answer as AsyncIterable<Buffer>) {
    if (received + chunk.byteLength > maxBytes || (known && received + chunk.byteLength > known.byteLength)) {
      answer.destroy();
      fail('PAYLOAD_TOO_LARGE', `${field} is more than ${maxBytes} bytes; the limit is ${maxBytes} bytes`, { field });
    }
    if (known) chunk.copy(known, received);
    else chunks.push(chunk);
    received += chunk.byteLength;
  }
  if (known && received !== known.byteLength) {
    fail('URL_FETCH_FAILED', `${field}: the answer ended after ${received} of its ${known.byteLength} bytes`, { field });
  }
  const bytes = known ?? Buffer.alloc(received);
  if (!known) {
    let offset = 0;
    for (const chunk of chunks) offset += chunk.copy(bytes, offset);
  }
  const mediaType = answer.headers['content-type']?.split(';')[0].trim().toLowerCase();
  return { bytes, ...(mediaType ? { mediaType } : {}) };
}

/** One timer for a whole operation, also stopped by the caller's signal. */
class Deadline {
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;
  private expired = false;
  private readonly timer: NodeJS.Timeout;
  private readonly onCallerAbort = () => this.controller.abort(this.caller?.reason);

  constructor(private readonly ms: number, private readonly caller?: AbortSignal) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort(new Error('deadline passed'));
    }, ms);
    if (caller?.aborted) this.onCallerAbort();
    else caller?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  /** What to throw for an error met during the operation: `doing` says what was under way ("file_url: fetching from example.com"). */
  explain(err: unknown, code: ErrorCode, field: string, doing: string): unknown {
    if (err instanceof ServiceError) return err;
    if (this.caller?.aborted) return this.caller.reason;
    if (this.expired) return new ServiceError(code, `${doing} did not finish within ${this.ms} ms (URL_FETCH_TIMEOUT_MS)`, { field });
    return new ServiceError(code, `${doing} failed: ${describeFailure(err)}`, { field });
  }

  clear(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
  }
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Words for a network error, from its code only: Node's messages can carry more than the host. */
function describeFailure(err: unknown): string {
  const code = typeof (err as { code?: unknown } | undefined)?.code === 'string' ? (err as { code: string }).code : undefined;
  if (code === undefined) return 'the connection failed';
  if (DNS_FAILURES.has(code)) return `the host name does not resolve (${code})`;
  if (TLS_FAILURE.test(code)) return `TLS failed (${code})`;
  if (code.startsWith('HPE_')) return `the answer is not valid HTTP (${code})`;
  return `${CONNECTION_FAILURES[code] ?? 'the connection failed'} (${code})`;
}

/** "host:port" as URL_FETCH_ALLOW lists it, the scheme's default port written out. */
function allowKey(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
}

/** The host name as a socket takes it: an IPv6 literal without its brackets. */
function bareHostname(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** A host as the URL parser writes it ("[::1]", "127.0.0.1" for 0x7f.1, lowercase names). */
function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return undefined;
  }
}
