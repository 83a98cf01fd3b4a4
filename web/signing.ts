// The ways this page signs a payment: an injected EIP-1193 browser wallet on Base, a Wallet
// Standard wallet on Solana, or in dev mode the service's demo payer on the local Base chain.
import { address as toAddress, getTransactionDecoder, getTransactionEncoder, type TransactionPartialSigner } from '@solana/kit';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import type { ClientEvmSigner } from '@x402/evm';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { createWalletClient, custom, type EIP1193Provider } from 'viem';
import { sentence } from './format.js';
import { describeErrorResponse } from './messages.js';
import { networkName } from './networks.js';
import { solanaWalletFor, standardChain, type StandardAccount } from './solana-wallet.js';
import { SERVICE_READ_TIMEOUT_MS, timedFetch } from './timeouts.js';

declare global {
  interface Window { ethereum?: EIP1193Provider }
}

export function walletErrorWords(error: unknown): string {
  const code = (error as { code?: number })?.code;
  if (code === 4001) return 'You declined the request in your wallet.';
  if (code === 4100) return 'The wallet did not allow this page to use the account.';
  if (code === 4900 || code === 4901) return 'The wallet is not connected to a network.';
  const message = error instanceof Error ? error.message : typeof (error as { message?: unknown })?.message === 'string' ? String((error as { message: string }).message) : '';
  // viem wraps a refusal; its short message still says so.
  if (/reject|denied|declined/i.test(message)) return 'You declined the request in your wallet.';
  return message ? `The wallet could not sign: ${sentence(message.split('\n')[0])}` : 'The wallet could not sign the payment.';
}

export async function signWithWallet(paymentRequired: PaymentRequired, accept: PaymentRequirements): Promise<PaymentPayload> {
  const provider = window.ethereum;
  if (!provider) throw new Error('No browser wallet was found.');
  const accounts = await provider.request({ method: 'eth_requestAccounts' }) as string[];
  const address = accounts[0] as `0x${string}` | undefined;
  if (!address) throw new Error('The wallet shared no account.');
  const wanted = Number(accept.network.split(':')[1]);
  const current = Number(await provider.request({ method: 'eth_chainId' }));
  if (current !== wanted) {
    try {
      await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: `0x${wanted.toString(16)}` }] });
    } catch (error) {
      if ((error as { code?: number })?.code === 4001) throw error;
      throw new Error(`the wallet is on chain ${current}; switch it to ${networkName(accept.network)} (chain ${wanted}) and pay again`);
    }
  }
  const wallet = createWalletClient({ account: address, transport: custom(provider) });
  const signer: ClientEvmSigner = {
    address,
    signTypedData: (typed) => wallet.signTypedData({ account: address, ...typed } as Parameters<typeof wallet.signTypedData>[0]),
  };
  const client = new x402Client();
  client.register(accept.network as `${string}:${string}`, new ExactEvmScheme(signer));
  return new x402HTTPClient(client).createPaymentPayload({ ...paymentRequired, accepts: [accept] });
}

/** Where the exact scheme reads the mint and a recent blockhash: the service's own relay, never a third party. */
export const SOLANA_RELAY = '/web/solana-rpc';

const sameBytes = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  a.length === b.length && Array.prototype.every.call(a, (byte: number, i: number) => byte === b[i]);

/**
 * The wallet's account as the `TransactionSigner` @x402/svm's client scheme signs with: a partial
 * signer (the facilitator adds the fee payer's signature later). Each transaction goes to the
 * wallet as wire bytes and only this account's signature is taken back; a wallet that changed the
 * transaction is refused, because the facilitator would reject any transfer but the quoted one.
 */
function walletSigner(account: StandardAccount, sign: (transaction: Uint8Array) => Promise<Uint8Array>): TransactionPartialSigner {
  const address = toAddress(account.address);
  const encoder = getTransactionEncoder();
  const decoder = getTransactionDecoder();
  return {
    address,
    async signTransactions(transactions) {
      const signed = [];
      for (const transaction of transactions) {
        const back = decoder.decode(await sign(new Uint8Array(encoder.encode(transaction))));
        if (!sameBytes(back.messageBytes, transaction.messageBytes)) throw new Error('the wallet changed the payment transaction instead of signing it as it was');
        const signature = back.signatures[address];
        if (!signature) throw new Error('the wallet returned the transaction without its signature');
        signed.push({ [address]: signature });
      }
      return signed;
    },
  };
}

export async function signWithSolanaWallet(paymentRequired: PaymentRequired, accept: PaymentRequirements): Promise<PaymentPayload> {
  const wallet = solanaWalletFor(accept.network);
  const connect = wallet?.features['standard:connect'];
  const feature = wallet?.features['solana:signTransaction'];
  if (!wallet || !connect || !feature) throw new Error(`No Solana wallet for ${networkName(accept.network)} was found.`);
  const chain = standardChain(accept.network);
  const { accounts } = await connect.connect();
  const account = accounts.find((a) => a.chains.length === 0 || a.chains.includes(chain)) ?? accounts[0];
  if (!account) throw new Error('The wallet shared no account.');
  const signer = walletSigner(account, async (transaction) => {
    const [output] = await feature.signTransaction({ account, transaction, chain });
    if (!output) throw new Error('the wallet returned nothing');
    return output.signedTransaction;
  });
  const client = new x402Client();
  client.register(accept.network as `${string}:${string}`, new ExactSvmScheme(signer, { rpcUrl: new URL(SOLANA_RELAY, window.location.href).href }));
  return new x402HTTPClient(client).createPaymentPayload({ ...paymentRequired, accepts: [accept] });
}

export async function signWithDemoPayer(paymentRequired: PaymentRequired, accept: PaymentRequirements): Promise<PaymentPayload> {
  const response = await timedFetch('/dev/sign', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ paymentRequired: { ...paymentRequired, accepts: [accept] } }),
  }, SERVICE_READ_TIMEOUT_MS);
  if (!response.ok) {
    const { detail } = await describeErrorResponse(response);
    throw new Error(`the demo payer did not sign: ${detail || `status ${response.status}`}`);
  }
  return await response.json() as PaymentPayload;
}
