// What the HTTP payment tests do again and again, in one place: a free port, a quote, a paid
// retry with a signed payload, the balances on a local chain, an error body's code.
import net from 'node:net';
import { once } from 'node:events';
import Code from '@hapi/code';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { privateKeyToAccount } from 'viem/accounts';
import { signOnBase } from './service.js';

const { expect } = Code;

/** A TCP port nothing listens on at the moment (also what a "closed" service address is). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** Posts the request unpaid, expects its 402 and returns the PaymentRequired from the header. */
export async function quoteAt(url: string, body: FormData): Promise<PaymentRequired> {
  const res = await fetch(url, { method: 'POST', body });
  expect(res.status, url).to.equal(402);
  return decodePaymentRequiredHeader(res.headers.get('payment-required')!);
}

/** The paid retry: the same request with the payload in PAYMENT-SIGNATURE. */
export function paidAt(url: string, body: FormData, payload: PaymentPayload): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) } });
}

interface Chain {
  balanceOf(owner: string): Promise<bigint>;
  payerAddress: string;
  payTo: string;
}

/** The demo payer's and the merchant's USDC, read from the chain. */
export async function balancesOf(chain: Chain): Promise<{ payer: bigint; payTo: bigint }> {
  return { payer: await chain.balanceOf(chain.payerAddress), payTo: await chain.balanceOf(chain.payTo) };
}

/** The catalog code of an error response. */
export async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

/**
 * The standard client's Base authorization re-signed as the payer (nonce unchanged) with a
 * validBefore `seconds` from now: a payment about to expire.
 */
export async function signShortLived(pr: PaymentRequired, payerKey: `0x${string}`, seconds: number): Promise<{ payload: PaymentPayload; validBefore: number }> {
  const signed = await signOnBase(pr, payerKey);
  const auth = (signed.payload as { authorization: Record<string, string> }).authorization;
  const validBefore = Math.floor(Date.now() / 1000) + seconds;
  const short: Record<string, string> = { ...auth, validBefore: String(validBefore) };
  const asset = pr.accepts.find((a) => a.network === 'eip155:8453')!.asset as `0x${string}`;
  const signature = await privateKeyToAccount(payerKey).signTypedData({
    domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: asset },
    types: { TransferWithAuthorization: [
      { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
      { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
    ] },
    primaryType: 'TransferWithAuthorization',
    message: {
      from: short.from as `0x${string}`, to: short.to as `0x${string}`, value: BigInt(short.value),
      validAfter: BigInt(short.validAfter), validBefore: BigInt(validBefore), nonce: short.nonce as `0x${string}`,
    },
  });
  return { payload: { ...signed, payload: { signature, authorization: short } }, validBefore };
}
