// Stand-ins for the hosted facilitators (Coinbase's CDP, PayAI): an HTTP front that checks each
// call's `Authorization: Bearer <JWT>` as strictly as the real service, against a public key the
// test generated, and forwards the accepted calls to a real local facilitator (devchains), so an
// accepted payment really settles on the local chain. A refused call never reaches it.
import http from 'node:http';
import crypto, { type KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';

export type Operation = 'verify' | 'settle' | 'supported';
export type Scheme = 'cdp' | 'payai';

export interface SeenCall {
  operation: Operation;
  token?: string;
  accepted: boolean;
  /** Why the call was refused. */
  reason?: string;
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
}

export interface JwtStandIn {
  /** What the service is configured with (EVM_FACILITATOR_URL, SVM_FACILITATOR_URL). */
  url: string;
  host: string;
  calls: SeenCall[];
  /** The key each operation trusts; replacing one models a revoked or rotated key. */
  trusted: Record<Operation, KeyObject>;
  /** Shifts the stand-in's clock, in seconds, to make tokens stale. */
  clockOffsetSeconds: number;
  /** 'x402': a refusal carries a verify or settle answer's shape (isValid / success false). */
  refusalShape: 'plain' | 'x402';
  /** Called after an accepted call was answered by the real facilitator (to change keys mid-flow). */
  onForwarded?: (operation: Operation) => void;
  stop(): Promise<void>;
}

// Clocks of the two sides may differ this much, as JWT checkers commonly allow.
const SKEW_SECONDS = 5;
const MAX_LIFETIME_SECONDS = 120;

const b64json = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

function signatureValid(alg: unknown, key: KeyObject, signed: string, signature: Buffer): boolean {
  if (alg === 'EdDSA') return key.asymmetricKeyType === 'ed25519' && crypto.verify(null, Buffer.from(signed), key, signature);
  if (alg === 'ES256') {
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1'
      && crypto.verify('sha256', Buffer.from(signed), { key, dsaEncoding: 'ieee-p1363' }, signature);
  }
  return false;
}

export interface TokenCheck {
  scheme: Scheme;
  keyId: string;
  key: KeyObject;
  /** The request the token came with: CDP binds its JWTs to it. */
  method: string;
  host: string;
  path: string;
  now: number;
  /** CDP's nonces already used (a reused token is refused). */
  seenNonces?: Set<string>;
}

/** Checks one bearer token; answers why it is refused, or its header and claims. */
export function checkToken(
  token: string, check: TokenCheck,
): { reason: string } | { header: Record<string, unknown>; claims: Record<string, unknown> } {
  const parts = token.split('.');
  if (parts.length !== 3) return { reason: 'not a JWT' };
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    header = b64json(parts[0]);
    claims = b64json(parts[1]);
  } catch {
    return { reason: 'not a JWT' };
  }
  if (header.typ !== 'JWT') return { reason: 'typ is not JWT' };
  if (header.kid !== check.keyId) return { reason: 'unknown key id' };
  if (check.scheme === 'payai' && header.alg !== 'EdDSA') return { reason: 'PayAI keys sign with EdDSA' };
  if (!signatureValid(header.alg, check.key, `${parts[0]}.${parts[1]}`, Buffer.from(parts[2], 'base64url'))) return { reason: 'bad signature' };
  if (claims.sub !== check.keyId) return { reason: 'subject is not the key id' };
  const { iat, exp } = claims;
  if (typeof iat !== 'number' || typeof exp !== 'number') return { reason: 'iat and exp are required' };
  if (iat > check.now + SKEW_SECONDS) return { reason: 'issued in the future' };
  if (exp <= check.now) return { reason: 'expired' };
  if (exp - iat > MAX_LIFETIME_SECONDS) return { reason: `valid longer than ${MAX_LIFETIME_SECONDS} s` };
  if (check.scheme === 'payai') {
    if (claims.iss !== 'payai-merchant') return { reason: 'issuer is not payai-merchant' };
    if (typeof claims.jti !== 'string' || !/^[0-9a-f-]{36}$/.test(claims.jti)) return { reason: 'jti missing' };
    return { header, claims };
  }
  if (claims.iss !== 'cdp') return { reason: 'issuer is not cdp' };
  if (typeof claims.nbf !== 'number' || claims.nbf > check.now + SKEW_SECONDS) return { reason: 'not valid yet' };
  const uri = `${check.method} ${check.host}${check.path}`;
  if (!Array.isArray(claims.uris) || claims.uris.length !== 1 || claims.uris[0] !== uri) return { reason: `not bound to ${uri}` };
  if (typeof header.nonce !== 'string' || !/^[0-9a-f]{32}$/.test(header.nonce)) return { reason: 'nonce missing' };
  if (check.seenNonces?.has(header.nonce)) return { reason: 'token reused' };
  check.seenNonces?.add(header.nonce);
  return { header, claims };
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startJwtStandIn(options: {
  scheme: Scheme;
  keyId: string;
  publicKey: KeyObject;
  /** The real facilitator the accepted calls go to. */
  forwardTo: string;
  /** The path the facilitator's operations live under (CDP: /platform/v2/x402). */
  basePath?: string;
}): Promise<JwtStandIn> {
  const basePath = options.basePath ?? '';
  const seenNonces = new Set<string>();
  const standIn: Omit<JwtStandIn, 'url' | 'host' | 'stop'> = {
    calls: [],
    trusted: { verify: options.publicKey, settle: options.publicKey, supported: options.publicKey },
    clockOffsetSeconds: 0,
    refusalShape: 'plain',
  };
  const server = http.createServer(async (req, res) => {
    const send = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    };
    const path = (req.url ?? '/').split('?')[0];
    const operation = (['verify', 'settle', 'supported'] as const).find((op) => path === `${basePath}/${op}`);
    const method = operation === 'supported' ? 'GET' : 'POST';
    if (!operation || req.method !== method) return send(404, JSON.stringify({ error: 'not found' }));
    const body = await readBody(req);
    const auth = req.headers.authorization ?? '';
    const token = auth.startsWith('Bearer ') ? auth.slice('Bearer '.length) : undefined;
    const result = token
      ? checkToken(token, {
          scheme: options.scheme, keyId: options.keyId, key: standIn.trusted[operation],
          method: req.method!, host: req.headers.host ?? '', path,
          now: Math.floor(Date.now() / 1000) + standIn.clockOffsetSeconds,
          ...(options.scheme === 'cdp' ? { seenNonces } : {}),
        })
      : { reason: 'no bearer token' };
    if ('reason' in result) {
      standIn.calls.push({ operation, ...(token ? { token } : {}), accepted: false, reason: result.reason });
      let refusal: Record<string, unknown> = { errorType: 'unauthorized', errorMessage: `Unauthorized: ${result.reason}` };
      if (standIn.refusalShape === 'x402' && operation === 'verify') refusal = { isValid: false, invalidReason: 'unauthorized', invalidMessage: result.reason };
      if (standIn.refusalShape === 'x402' && operation === 'settle') refusal = { success: false, errorReason: 'unauthorized', errorMessage: result.reason, transaction: '', network: '' };
      return send(401, JSON.stringify(refusal));
    }
    standIn.calls.push({ operation, token, accepted: true, header: result.header, claims: result.claims });
    try {
      const answer = await fetch(`${options.forwardTo}/${operation}`, {
        method, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { body } : {}),
      });
      send(answer.status, await answer.text());
      standIn.onForwarded?.(operation);
    } catch {
      req.socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(standIn, {
    url: `http://${host}${basePath}`,
    host,
    stop: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  }) as JwtStandIn;
}

/** A CDP API key as CDP hands it out: Ed25519 as base64 of seed and public key, ES256 as PEM. */
export function cdpKey(kind: 'ed25519' | 'es256', pemFormat: 'pkcs8' | 'sec1' = 'pkcs8'): { secret: string; publicKey: KeyObject } {
  if (kind === 'ed25519') {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
    const jwk = privateKey.export({ format: 'jwk' });
    return { secret: Buffer.concat([Buffer.from(jwk.d!, 'base64url'), Buffer.from(jwk.x!, 'base64url')]).toString('base64'), publicKey };
  }
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { secret: privateKey.export({ format: 'pem', type: pemFormat }).toString(), publicKey };
}

/** A PayAI API key as its merchant portal shows it: payai_sk_ and base64 PKCS#8 Ed25519. */
export function payaiKey(): { secret: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
  return { secret: `payai_sk_${privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64')}`, publicKey };
}
