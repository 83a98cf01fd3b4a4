// The Solana leg of the offline payment rig: a LiteSVM-backed JSON-RPC endpoint that answers as
// Solana mainnet (the USDC mint at its mainnet address), and a second local x402 facilitator that
// co-signs as fee payer and settles through it. Clients build exactly the transaction they would
// build for mainnet, so the unmodified @x402 client, server and facilitator run against it. Used by
// `npm start` with PAYMENTS=dev and by the tests.
import { createKeyPairSignerFromBytes, getBase58Encoder, type KeyPairSigner } from '@solana/kit';
import { x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/facilitator';
import { serveFacilitator, type FacilitatorServer } from './facilitator-http.js';
import { startSvmRpc } from './svm-rpc/server.js';
import { SOLANA_USDC_MINT } from './svm-rpc/token.js';

export const SOLANA_NETWORK = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' as const;
export { SOLANA_USDC_MINT };

// DEV-ONLY keys, generated once for this rig and published here on purpose: they only ever hold
// value inside the local LiteSVM chain. Never fund them on a real cluster.
/** Pays for demos and tests (holds test USDC); printed at startup so a CLI can use it. */
export const DEV_SVM_PAYER_SECRET_KEY = '3Y6ZNFgMqbeEVaAMcMiRz68Lz9g6sj2TXxavvtpJh7vC3JktiRLy3agz4tcef9iaqmZx3MumeGL7WWZfRks2Z2gi';
/** The local facilitator's fee payer. */
const DEV_SVM_FEE_PAYER_SECRET_KEY = '2Z6HQ7iCW5DYcvfmH2PK49akPgqmpecB9ec4BHq8sds6RGzGUoCweigCrDWuNXRLQh8Aj1fesqrCc3pGqA9znKPs';
/** Receives payments (only its address is needed). */
export const DEV_SVM_PAY_TO = '3GNCNgPKz5EjcSo6FinZVnoL6nhgiAQM749yVfRo9mPA';

const DEFAULT_PAYER_BALANCE = 1_000_000_000n; // 1000 USDC, 6 decimals
const LAMPORTS_PER_SOL = 1_000_000_000n;

export interface SvmRigOptions {
  /** Test USDC in the dev payer's associated token account, in atomic units (6 decimals). */
  payerBalance?: bigint;
  /** The facilitator's HTTP port; a free one is picked when omitted. */
  facilitatorPort?: number;
  /** The JSON-RPC port; a free one is picked when omitted. */
  rpcPort?: number;
}

export interface SvmRig {
  network: typeof SOLANA_NETWORK;
  rpcUrl: string;
  facilitatorUrl: string;
  /** The USDC mint, at its mainnet address. */
  asset: string;
  /** The base58 owner address payments go to (its USDC account exists, empty at start). */
  payTo: string;
  /** Base58 of the payer's 64-byte secret key, as a CLI environment variable would hold it. */
  payerSecretKey: string;
  payerAddress: string;
  /** The facilitator's fee payer, as its /supported advertises in extra.feePayer. */
  feePayerAddress: string;
  facilitator: FacilitatorServer;
  /** USDC atomic units in the owner's associated token account (0 when it has none). */
  balanceOf(owner: string): Promise<bigint>;
  /** Sets the owner's USDC balance (creating its associated token account), for tests. */
  setBalance(owner: string, amount: bigint): Promise<void>;
  /** JSON-RPC calls the chain has answered, by method. */
  rpcCalls: Record<string, number>;
  /** Makes every transaction built so far unable to land (its blockhash is no longer valid). */
  expireBlockhash(): void;
  stop(): Promise<void>;
}

// The keys above are valid 64-byte keys, so they need none of the checks a user's key gets.
function signerFromSecretKey(secretKeyBase58: string): Promise<KeyPairSigner> {
  return createKeyPairSignerFromBytes(new Uint8Array(getBase58Encoder().encode(secretKeyBase58)));
}

/** An x402 facilitator settling Solana exact payments through the given RPC with the dev fee payer. */
export async function createSvmFacilitator(rpcUrl: string): Promise<{ facilitator: x402Facilitator; feePayerAddress: string }> {
  const feePayer = await signerFromSecretKey(DEV_SVM_FEE_PAYER_SECRET_KEY);
  const signer = toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: rpcUrl });
  const facilitator = new x402Facilitator().register(SOLANA_NETWORK, new ExactSvmScheme(signer));
  return { facilitator, feePayerAddress: feePayer.address };
}

export async function startSvmRig(options: SvmRigOptions = {}): Promise<SvmRig> {
  const rpc = await startSvmRpc({ port: options.rpcPort });
  let facilitatorServer: FacilitatorServer | undefined;
  try {
    const payer = await signerFromSecretKey(DEV_SVM_PAYER_SECRET_KEY);
    const { facilitator, feePayerAddress } = await createSvmFacilitator(rpc.url);

    rpc.setLamports(feePayerAddress, 100n * LAMPORTS_PER_SOL);
    rpc.setLamports(payer.address, 10n * LAMPORTS_PER_SOL);
    rpc.setLamports(DEV_SVM_PAY_TO, LAMPORTS_PER_SOL);
    await rpc.setUsdcBalance(payer.address, options.payerBalance ?? DEFAULT_PAYER_BALANCE);
    await rpc.setUsdcBalance(DEV_SVM_PAY_TO, 0n);

    facilitatorServer = await serveFacilitator(facilitator, { port: options.facilitatorPort, host: '127.0.0.1' });
    const server = facilitatorServer;
    let stopped: Promise<void> | undefined;
    return {
      network: SOLANA_NETWORK,
      rpcUrl: rpc.url,
      facilitatorUrl: server.url,
      asset: SOLANA_USDC_MINT,
      payTo: DEV_SVM_PAY_TO,
      payerSecretKey: DEV_SVM_PAYER_SECRET_KEY,
      payerAddress: payer.address,
      feePayerAddress,
      facilitator: server,
      balanceOf: (owner) => rpc.usdcBalance(owner),
      setBalance: (owner, amount) => rpc.setUsdcBalance(owner, amount),
      rpcCalls: rpc.calls,
      expireBlockhash: () => rpc.expireBlockhash(),
      stop: () => {
        stopped ??= Promise.all([server.stop(), rpc.stop()]).then(() => undefined);
        return stopped;
      },
    };
  } catch (error) {
    await facilitatorServer?.stop();
    await rpc.stop();
    throw error;
  }
}
