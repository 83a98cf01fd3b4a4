// Solana wallets in the browser, found through the Wallet Standard: the interface Phantom,
// Solflare, Backpack and the other Solana extensions register with. Its `solana:signTransaction`
// feature signs a transaction's wire bytes, so no wallet-specific object model (web3.js
// transactions of the older `window.solana` providers) is needed. The discovery is the standard's
// two events, written out here instead of pulling in @wallet-standard/app.

/** The parts of a Wallet Standard account and wallet this page uses. */
export interface StandardAccount {
  readonly address: string;
  readonly publicKey: Uint8Array;
  readonly chains: readonly string[];
  readonly features: readonly string[];
}

interface SignTransactionInput { account: StandardAccount; transaction: Uint8Array; chain?: string }

export interface StandardWallet {
  readonly name: string;
  readonly chains: readonly string[];
  readonly accounts: readonly StandardAccount[];
  readonly features: {
    'standard:connect'?: { connect(input?: { silent?: boolean }): Promise<{ accounts: readonly StandardAccount[] }> };
    'solana:signTransaction'?: { signTransaction(...inputs: SignTransactionInput[]): Promise<ReadonlyArray<{ signedTransaction: Uint8Array }>> };
    [feature: string]: unknown;
  };
}

const wallets: StandardWallet[] = [];
const listeners: Array<() => void> = [];

interface WalletsApi { register(...wallets: StandardWallet[]): () => void }

const api: WalletsApi = {
  register(...registered: StandardWallet[]): () => void {
    for (const wallet of registered) if (!wallets.includes(wallet)) wallets.push(wallet);
    for (const listener of listeners) listener();
    return () => {
      for (const wallet of registered) wallets.splice(wallets.indexOf(wallet), 1);
      for (const listener of listeners) listener();
    };
  },
};

/**
 * Starts listening for wallets: those that load after the page announce themselves with
 * `wallet-standard:register-wallet`; those already loaded answer the page's `app-ready`.
 */
export function watchSolanaWallets(onChange: () => void): void {
  listeners.push(onChange);
  window.addEventListener('wallet-standard:register-wallet', (event) => {
    (event as CustomEvent<(api: WalletsApi) => void>).detail(api);
  });
  window.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: api }));
}

/** The Wallet Standard chain ids for the CAIP-2 Solana networks the service may offer. */
const STANDARD_CHAINS: Record<string, string> = {
  'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp': 'solana:mainnet',
  'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1': 'solana:devnet',
  'solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z': 'solana:testnet',
};

export const standardChain = (network: string) => STANDARD_CHAINS[network];

/** A found wallet that can sign Solana transactions on this network, the first one registered. */
export function solanaWalletFor(network?: string): StandardWallet | undefined {
  const chain = network ? standardChain(network) : undefined;
  return wallets.find((wallet) => wallet.features['solana:signTransaction'] !== undefined
    && wallet.features['standard:connect'] !== undefined
    && (chain === undefined || wallet.chains.includes(chain)));
}
