// The local Solana chain's state: an in-process LiteSVM (accounts, programs, execution) plus what
// a real RPC node remembers and LiteSVM does not: the transactions that landed, by signature, and
// the messages already executed.
//
// Only LiteSVM's native layer is used, with raw bytes: its JavaScript wrapper pulls in a newer
// @solana/kit than @x402/svm's and insists on fully signed transactions, while the facilitator
// simulates before it has signed as fee payer.
import { Account, LiteSvm, type InnerInstruction } from 'litesvm/dist/internal.js';
import type { RpcTransactionError } from './transaction-errors.js';
import { recentBlockhashOf, toKey, type WireTransaction } from './wire.js';

const SYSTEM_PROGRAM = '11111111111111111111111111111111';
/** Blocks a blockhash stays usable on a real cluster; only used to report lastValidBlockHeight. */
const BLOCKHASH_VALIDITY_BLOCKS = 150n;
/** The rentEpoch a real cluster reports for rent-exempt accounts (u64::MAX). */
export const RENT_EXEMPT_EPOCH = 18_446_744_073_709_551_615n;

export interface RecordedTransaction {
  slot: bigint;
  wire: WireTransaction;
  err: RpcTransactionError | null;
  logs: string[];
  computeUnits: bigint;
  innerInstructions: InnerInstruction[][];
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: unknown[];
  postTokenBalances: unknown[];
}

export class LocalSolanaChain {
  readonly svm = new LiteSvm();
  /** Transactions that landed, by their first signature. */
  readonly transactions = new Map<string, RecordedTransaction>();
  // A real cluster's status cache refuses a message it has already executed while its blockhash
  // is still valid, in simulation as in execution, whatever the signatures say. LiteSVM only
  // remembers signatures, and its simulation does not look at them at all.
  private readonly landedMessages = new Set<string>();

  slot(): bigint {
    return this.svm.getClock().slot;
  }

  context() {
    return { slot: this.slot(), apiVersion: '2.2.0' };
  }

  advanceSlots(count: bigint): void {
    this.svm.warpToSlot(this.slot() + count);
  }

  latestBlockhash() {
    return { blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: this.slot() + BLOCKHASH_VALIDITY_BLOCKS };
  }

  rentExempt(size: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(size));
  }

  alreadyProcessed(wire: WireTransaction): boolean {
    return this.landedMessages.has(wire.messageHash) && recentBlockhashOf(wire) === this.svm.latestBlockhash();
  }

  recordLanded(signature: string, transaction: RecordedTransaction): void {
    this.landedMessages.add(transaction.wire.messageHash);
    this.transactions.set(signature, transaction);
  }

  /** Gives an account this many lamports (a system account when it does not exist yet). */
  setLamports(owner: string, lamports: bigint): void {
    const key = toKey(owner);
    const existing = this.svm.getAccount(key);
    const account = existing
      ? new Account(lamports, existing.data(), existing.owner(), existing.executable(), existing.rentEpoch())
      : new Account(lamports, new Uint8Array(0), toKey(SYSTEM_PROGRAM), false, RENT_EXEMPT_EPOCH);
    this.svm.setAccount(key, account);
  }

  /**
   * Moves to a new blockhash and past the old one's last valid block height, as ~150 blocks
   * would on a real cluster: transactions built on the old blockhash can no longer land.
   */
  expireBlockhash(): void {
    this.svm.expireBlockhash();
    this.advanceSlots(BLOCKHASH_VALIDITY_BLOCKS + 1n);
  }
}
