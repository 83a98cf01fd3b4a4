// The paying side on Solana: a signer from the secret key a wallet exports, and the exact scheme
// registered on an x402 client against a chosen RPC (the local chain in dev, a cluster in live).
import { createKeyPairSignerFromBytes, getBase58Encoder, type KeyPairSigner } from '@solana/kit';
import type { x402Client } from '@x402/core/client';
import { ExactSvmScheme } from '@x402/svm/exact/client';

/** A signer from a base58 64-byte secret key (the format of Solana CLI and wallet exports). */
export async function createSvmClientSigner(secretKeyBase58: string): Promise<KeyPairSigner> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(getBase58Encoder().encode(secretKeyBase58.trim()));
  } catch {
    throw new Error('the Solana secret key is not base58');
  }
  if (bytes.length !== 64) throw new Error(`the Solana secret key must be 64 bytes, found ${bytes.length}`);
  return createKeyPairSignerFromBytes(bytes);
}

/**
 * Registers the exact Solana scheme on an x402 client, talking to the given RPC. Done by hand
 * because `registerExactSvmScheme` from @x402/svm takes no RPC URL and silently uses the public
 * mainnet endpoint.
 */
export function registerSvmPayer(client: x402Client, signer: KeyPairSigner, rpcUrl: string): x402Client {
  return client.register('solana:*', new ExactSvmScheme(signer, { rpcUrl }));
}
