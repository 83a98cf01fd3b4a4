// SPL Token accounts on the local Solana chain: the classic Token program's fixed-size Mint and
// Account layouts, the USDC mint at its mainnet address, and the owners' associated USDC
// accounts. The layouts are encoded here by hand rather than with @solana-program/token, so no
// second @solana/kit version has to agree with @x402/svm's.
import { address, getProgramDerivedAddress } from '@solana/kit';
import { Account } from 'litesvm/dist/internal.js';
import { RENT_EXEMPT_EPOCH, type LocalSolanaChain } from './chain.js';
import { fromKey, toKey } from './wire.js';

export const SOLANA_USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const USDC_DECIMALS = 6;
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';

const MINT_SIZE = 82;
const TOKEN_ACCOUNT_SIZE = 165;

interface MintState { mintAuthority: Uint8Array | null; supply: bigint; decimals: number; freezeAuthority: Uint8Array | null }
export interface TokenAccountState {
  mint: Uint8Array; owner: Uint8Array; amount: bigint; state: number; isNative: bigint | null;
  delegate: Uint8Array | null; delegatedAmount: bigint; closeAuthority: Uint8Array | null;
}

function writeOptionalKey(view: DataView, bytes: Uint8Array, offset: number, key: Uint8Array | null) {
  view.setUint32(offset, key ? 1 : 0, true);
  if (key) bytes.set(key, offset + 4);
}
function readOptionalKey(view: DataView, bytes: Uint8Array, offset: number): Uint8Array | null {
  return view.getUint32(offset, true) === 1 ? bytes.slice(offset + 4, offset + 36) : null;
}

function encodeMint(mint: MintState): Uint8Array {
  const bytes = new Uint8Array(MINT_SIZE);
  const view = new DataView(bytes.buffer);
  writeOptionalKey(view, bytes, 0, mint.mintAuthority);
  view.setBigUint64(36, mint.supply, true);
  bytes[44] = mint.decimals;
  bytes[45] = 1; // initialized
  writeOptionalKey(view, bytes, 46, mint.freezeAuthority);
  return bytes;
}
function decodeMint(bytes: Uint8Array): MintState {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    mintAuthority: readOptionalKey(view, bytes, 0),
    supply: view.getBigUint64(36, true),
    decimals: bytes[44],
    freezeAuthority: readOptionalKey(view, bytes, 46),
  };
}

function encodeTokenAccount(account: Pick<TokenAccountState, 'mint' | 'owner' | 'amount'>): Uint8Array {
  const bytes = new Uint8Array(TOKEN_ACCOUNT_SIZE);
  const view = new DataView(bytes.buffer);
  bytes.set(account.mint, 0);
  bytes.set(account.owner, 32);
  view.setBigUint64(64, account.amount, true);
  bytes[108] = 1; // initialized; no delegate, not native, no close authority
  return bytes;
}
function decodeTokenAccount(bytes: Uint8Array): TokenAccountState {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    mint: bytes.slice(0, 32),
    owner: bytes.slice(32, 64),
    amount: view.getBigUint64(64, true),
    delegate: readOptionalKey(view, bytes, 72),
    state: bytes[108],
    isNative: view.getUint32(109, true) === 1 ? view.getBigUint64(113, true) : null,
    delegatedAmount: view.getBigUint64(121, true),
    closeAuthority: readOptionalKey(view, bytes, 129),
  };
}

function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const digits = amount.toString().padStart(decimals + 1, '0');
  const fraction = digits.slice(-decimals).replace(/0+$/, '');
  return fraction ? `${digits.slice(0, -decimals)}.${fraction}` : digits.slice(0, -decimals);
}
export const tokenAmount = (amount: bigint, decimals: number) => {
  const text = uiAmountString(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(text), uiAmountString: text };
};

/** The chain's token accounts, as the RPC methods read them and the rig funds them. */
export class TokenAccounts {
  private readonly usdcMintKey = toKey(SOLANA_USDC_MINT);
  private readonly tokenProgramKey = toKey(TOKEN_PROGRAM);

  constructor(private readonly chain: LocalSolanaChain) {
    chain.svm.setAccount(
      this.usdcMintKey,
      new Account(
        chain.rentExempt(MINT_SIZE),
        encodeMint({ mintAuthority: null, supply: 0n, decimals: USDC_DECIMALS, freezeAuthority: null }),
        this.tokenProgramKey,
        false,
        RENT_EXEMPT_EPOCH,
      ),
    );
  }

  /** The owner's associated USDC token account (classic Token program). */
  async usdcAccountOf(owner: string): Promise<string> {
    const [ata] = await getProgramDerivedAddress({
      programAddress: address(ASSOCIATED_TOKEN_PROGRAM),
      seeds: [toKey(owner), this.tokenProgramKey, this.usdcMintKey],
    });
    return ata;
  }

  /** Creates or overwrites the owner's USDC account with this balance; the mint's supply follows. */
  async setUsdcBalance(owner: string, amount: bigint): Promise<void> {
    const { svm } = this.chain;
    const ataKey = toKey(await this.usdcAccountOf(owner));
    const previous = this.tokenAccountState(ataKey)?.amount ?? 0n;
    const data = encodeTokenAccount({ mint: this.usdcMintKey, owner: toKey(owner), amount });
    svm.setAccount(ataKey, new Account(this.chain.rentExempt(TOKEN_ACCOUNT_SIZE), data, this.tokenProgramKey, false, RENT_EXEMPT_EPOCH));
    const mintAccount = svm.getAccount(this.usdcMintKey);
    if (!mintAccount) throw new Error('the USDC mint disappeared');
    const mint = decodeMint(mintAccount.data());
    svm.setAccount(
      this.usdcMintKey,
      new Account(
        mintAccount.lamports(), encodeMint({ ...mint, supply: mint.supply - previous + amount }),
        this.tokenProgramKey, false, RENT_EXEMPT_EPOCH,
      ),
    );
  }

  /** USDC atomic units in the owner's associated token account; 0 when it does not exist. */
  async usdcBalance(owner: string): Promise<bigint> {
    return this.tokenAccountState(toKey(await this.usdcAccountOf(owner)))?.amount ?? 0n;
  }

  /** The token account at this address, when it is one of the Token program's. */
  tokenAccountState(key: Uint8Array): TokenAccountState | undefined {
    const account = this.chain.svm.getAccount(key);
    if (!account || fromKey(account.owner()) !== TOKEN_PROGRAM || account.data().length !== TOKEN_ACCOUNT_SIZE) return undefined;
    return decodeTokenAccount(account.data());
  }

  mintDecimals(mint: Uint8Array): number {
    const account = this.chain.svm.getAccount(mint);
    return account && account.data().length === MINT_SIZE ? decodeMint(account.data()).decimals : 0;
  }

  /** An account's data as jsonParsed shows it, when it is a Token program mint or account. */
  parsedData(owner: string, data: Uint8Array) {
    if (owner !== TOKEN_PROGRAM) return undefined;
    if (data.length === MINT_SIZE) {
      const mint = decodeMint(data);
      return {
        type: 'mint',
        info: {
          decimals: mint.decimals,
          freezeAuthority: mint.freezeAuthority ? fromKey(mint.freezeAuthority) : null,
          isInitialized: true,
          mintAuthority: mint.mintAuthority ? fromKey(mint.mintAuthority) : null,
          supply: mint.supply.toString(),
        },
      };
    }
    if (data.length === TOKEN_ACCOUNT_SIZE) {
      const account = decodeTokenAccount(data);
      const decimals = this.mintDecimals(account.mint);
      return {
        type: 'account',
        info: {
          isNative: account.isNative !== null,
          mint: fromKey(account.mint),
          owner: fromKey(account.owner),
          state: account.state === 2 ? 'frozen' : account.state === 1 ? 'initialized' : 'uninitialized',
          tokenAmount: tokenAmount(account.amount, decimals),
          ...(account.delegate
            ? { delegate: fromKey(account.delegate), delegatedAmount: tokenAmount(account.delegatedAmount, decimals) }
            : {}),
          ...(account.closeAuthority ? { closeAuthority: fromKey(account.closeAuthority) } : {}),
        },
      };
    }
    return undefined;
  }

  /** The token balances among a transaction's accounts, as a transaction's meta reports them. */
  balancesAmong(keys: Uint8Array[]): unknown[] {
    const balances: unknown[] = [];
    keys.forEach((key, accountIndex) => {
      const state = this.tokenAccountState(key);
      if (!state) return;
      balances.push({
        accountIndex,
        mint: fromKey(state.mint),
        owner: fromKey(state.owner),
        programId: TOKEN_PROGRAM,
        uiTokenAmount: tokenAmount(state.amount, this.mintDecimals(state.mint)),
      });
    });
    return balances;
  }
}
