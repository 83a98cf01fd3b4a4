// The facilitator clients: x402's own HTTPFacilitatorClient, authenticated the way each hosted
// facilitator wants (Coinbase's CDP with a fresh JWT per call from @coinbase/x402, PayAI with its
// JWT from @payai/facilitator, or one fixed header), and wrapped so that a facilitator refusing
// this service's credentials (401, 403) is told apart from one that is down and from a payment
// that is invalid: the first is the operator's to fix, and never the payer's fault.
import { createPrivateKey } from 'node:crypto';
import { HTTPFacilitatorClient, type FacilitatorClient, type FacilitatorConfig } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { ConfigError } from '../config.js';

export type CreateAuthHeaders = NonNullable<FacilitatorConfig['createAuthHeaders']>;

/** How a facilitator call is authenticated, and which settings hold the key (named in refusals). */
export interface FacilitatorAuth {
  createAuthHeaders: CreateAuthHeaders;
  /** The environment variables that hold the credentials, e.g. "CDP_API_KEY_ID and CDP_API_KEY_SECRET". */
  credentials: string;
}

type Operation = 'verify' | 'settle' | 'supported';

/** The facilitator answered 401 or 403: it refused this service's credentials, so it did nothing. */
export class FacilitatorRefusedError extends Error {
  constructor(
    /** The facilitator's host, never its credentials. */
    readonly facilitator: string,
    readonly operation: Operation,
    readonly status: number,
    /** The facilitator's own words, shortened, with anything token-like removed. */
    readonly detail: string,
    readonly credentials: string | undefined,
  ) {
    super(`the facilitator at ${facilitator} refused this service's credentials: ${operation} answered ${status}${detail ? ` (${detail})` : ''}`);
    this.name = 'FacilitatorRefusedError';
  }
}

const REFUSED = new Set([401, 403]);
const SETTLEMENT_PENDING = 'settlement_pending';
// x402's client puts a non-2xx answer without a verify or settle body only in its message.
const FAILED_ANSWER = /^Facilitator (?:verify|settle|getSupported) failed \((\d{3})\)(?::\s*(.*))?$/s;
// A JWT or any long opaque token a facilitator might echo: never repeated to clients or logs.
const TOKEN_LIKE = /[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|Bearer\s+\S+|[A-Za-z0-9+/_-]{40,}={0,2}/g;

function refusal(err: unknown): { status: number; detail: string } | undefined {
  const statusCode = (err as { statusCode?: unknown } | undefined)?.statusCode;
  if (typeof statusCode === 'number') {
    if (!REFUSED.has(statusCode)) return undefined;
    const e = err as { invalidMessage?: string; invalidReason?: string; errorMessage?: string; errorReason?: string };
    return { status: statusCode, detail: clean(e.invalidMessage ?? e.invalidReason ?? e.errorMessage ?? e.errorReason ?? '') };
  }
  const m = err instanceof Error ? FAILED_ANSWER.exec(err.message) : null;
  if (!m || !REFUSED.has(Number(m[1]))) return undefined;
  return { status: Number(m[1]), detail: clean(m[2] ?? '') };
}

// The words of a JSON answer ({"errorMessage": "..."} and the like), else the text as it came.
function wordsOf(text: string): string {
  try {
    const data = JSON.parse(text) as Record<string, unknown>;
    for (const key of ['errorMessage', 'message', 'error', 'invalidMessage', 'invalidReason', 'errorReason']) {
      if (typeof data?.[key] === 'string' && data[key]) return data[key] as string;
    }
  } catch {
    // not JSON
  }
  return text;
}

function clean(text: string): string {
  const compact = wordsOf(text).replace(TOKEN_LIKE, '[token]').replace(/\s+/g, ' ').trim();
  return compact.length > 160 ? `${compact.slice(0, 157)}...` : compact;
}

/**
 * x402's HTTP client for one facilitator, whose refusals of the credentials become
 * FacilitatorRefusedError, and which remembers why /supported failed (for the boot's message).
 */
export class AuthenticatedFacilitatorClient implements FacilitatorClient {
  private readonly http: HTTPFacilitatorClient;
  readonly host: string;
  /** Why the last GET /supported failed, if it did. */
  supportedFailure: Error | undefined;
  // Payloads whose settlement was answered settlement_pending: x402 asks once more at once, and a
  // refusal then does not mean nothing happened, as the first attempt may be on its way to the chain.
  private readonly pending = new WeakSet<object>();

  constructor(readonly url: string, timeoutMs: number, readonly auth: FacilitatorAuth | undefined) {
    this.http = new HTTPFacilitatorClient({ url, timeoutMs, ...(auth ? { createAuthHeaders: auth.createAuthHeaders } : {}) });
    this.host = URL.canParse(url) ? new URL(url).host : url;
  }

  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    return this.call('verify', () => this.http.verify(payload, requirements));
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    try {
      const result = await this.call('settle', () => this.http.settle(payload, requirements));
      if (!result.success && result.errorReason === SETTLEMENT_PENDING) this.pending.add(payload);
      return result;
    } catch (err) {
      if (err instanceof FacilitatorRefusedError && this.pending.has(payload)) {
        throw new Error(`the settlement was pending, then ${err.message}`);
      }
      if ((err as { errorReason?: unknown }).errorReason === SETTLEMENT_PENDING) this.pending.add(payload);
      throw err;
    }
  }

  async getSupported(): Promise<SupportedResponse> {
    try {
      const supported = await this.call('supported', () => this.http.getSupported());
      this.supportedFailure = undefined;
      return supported;
    } catch (err) {
      this.supportedFailure = err instanceof Error ? err : new Error(String(err));
      throw err;
    }
  }

  private async call<T>(operation: Operation, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      const refused = refusal(err);
      if (refused) throw new FacilitatorRefusedError(this.host, operation, refused.status, refused.detail, this.auth?.credentials);
      throw err;
    }
  }
}

/** One fixed Authorization header on every call (EVM_FACILITATOR_AUTH, SVM_FACILITATOR_AUTH). */
export function fixedAuth(value: string, variable: string): FacilitatorAuth {
  const headers = { Authorization: value };
  return { createAuthHeaders: async () => ({ verify: headers, settle: headers, supported: headers }), credentials: variable };
}

// CDP secrets come as a base64 Ed25519 key or a PEM EC key. cdp-sdk reads the EC key only as
// PKCS#8, while CDP has handed out SEC1 ("EC PRIVATE KEY") files, and an environment file often
// holds a PEM on one line with literal \n: both are converted here, the key itself unchanged.
function cdpSecret(secret: string): string {
  const text = secret.includes('\\n') ? secret.replace(/\\n/g, '\n') : secret;
  if (!text.includes('-----BEGIN EC PRIVATE KEY-----')) return text.trim();
  try {
    return createPrivateKey(text).export({ format: 'pem', type: 'pkcs8' }).toString();
  } catch {
    throw new ConfigError('invalid configuration: CDP_API_KEY_SECRET: the EC private key cannot be read');
  }
}

/**
 * Coinbase's CDP facilitator: every call carries a fresh JWT made by @coinbase/x402 (cdp-sdk's
 * generateJwt), bound to the method, host and path of the call. Returns CDP's own URL when none is
 * given; an overriding URL gets JWTs bound to its own host and path, as the facilitator that
 * receives them checks them against the request it gets.
 */
export async function cdpFacilitator(url: string, keyId: string, keySecret: string): Promise<{ url: string; auth: FacilitatorAuth }> {
  const cdp = await import('@coinbase/x402');
  const secret = cdpSecret(keySecret);
  const credentials = 'CDP_API_KEY_ID and CDP_API_KEY_SECRET';
  const own = cdp.createFacilitatorConfig(keyId, secret);
  const target = facilitatorUrl(url || own.url!, 'EVM_FACILITATOR_URL');
  const base = target.pathname.replace(/\/+$/, '');
  let createAuthHeaders: CreateAuthHeaders;
  if (target.href.replace(/\/+$/, '') === own.url) {
    createAuthHeaders = own.createAuthHeaders!;
  } else {
    const sign = (method: string, path: string) => cdp.createAuthHeader(keyId, secret, method, target.host, `${base}/${path}`);
    createAuthHeaders = async () => {
      const [verify, settle, supported] = await Promise.all([sign('POST', 'verify'), sign('POST', 'settle'), sign('GET', 'supported')]);
      const correlation = cdp.createCorrelationHeader();
      return {
        verify: { Authorization: verify, 'Correlation-Context': correlation },
        settle: { Authorization: settle, 'Correlation-Context': correlation },
        supported: { Authorization: supported, 'Correlation-Context': correlation },
      };
    };
  }
  await checkSigns(createAuthHeaders, 'CDP_API_KEY_SECRET', 'an Ed25519 key (base64, as CDP shows it) or an ES256 key (PEM)');
  return { url: target.href.replace(/\/+$/, ''), auth: { createAuthHeaders, credentials } };
}

/**
 * PayAI's facilitator beyond its free tier: calls carry the JWT @payai/facilitator makes from the
 * PayAI key (which that package reuses until shortly before it expires). Returns PayAI's own URL
 * when none is given; an overriding URL keeps the JWTs.
 */
export async function payaiFacilitator(url: string, keyId: string, keySecret: string): Promise<{ url: string; auth: FacilitatorAuth }> {
  const payai = await import('@payai/facilitator');
  const own = payai.createFacilitatorConfig(keyId, keySecret);
  const target = facilitatorUrl(url || own.url!, 'SVM_FACILITATOR_URL');
  const createAuthHeaders = own.createAuthHeaders! as CreateAuthHeaders;
  await checkSigns(createAuthHeaders, 'PAYAI_API_KEY_SECRET', 'an Ed25519 key in PKCS#8, base64, as PayAI shows it (payai_sk_...)');
  return { url: target.href.replace(/\/+$/, ''), auth: { createAuthHeaders, credentials: 'PAYAI_API_KEY_ID and PAYAI_API_KEY_SECRET' } };
}

function facilitatorUrl(url: string, variable: string): URL {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) throw new ConfigError(`invalid configuration: ${variable}: must be an http or https URL`);
  return parsed;
}

// A key that cannot sign is found at boot, with the variable named, not at the first payment.
async function checkSigns(createAuthHeaders: CreateAuthHeaders, variable: string, expected: string): Promise<void> {
  try {
    await createAuthHeaders();
  } catch {
    throw new ConfigError(`invalid configuration: ${variable}: cannot sign with this key; it must be ${expected}`);
  }
}
