// A Solana JSON-RPC endpoint on loopback, backed by an in-process LiteSVM, answering what the
// unmodified @x402/svm client and facilitator ask a real cluster. No Solana validator ships on
// npm or Debian; LiteSVM (npm, native addon) already holds the SPL Token, Associated Token
// Account, Compute Budget and Memo programs, and accounts can be placed at any address, so the
// USDC mint sits at its mainnet address and payers sign exactly what they would sign on mainnet.
//
// Only LiteSVM's native layer is used, with raw bytes: its JavaScript wrapper pulls in a newer
// @solana/kit than @x402/svm's and insists on fully signed transactions, while the facilitator
// simulates before it has signed as fee payer. Mint and token accounts are encoded here by hand
// for the same reason (no @solana-program/token version to agree on).
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Account,
  FailedTransactionMetadata,
  LiteSvm,
  TransactionErrorDuplicateInstruction,
  TransactionErrorInstructionError,
  TransactionErrorInsufficientFundsForRent,
  TransactionErrorProgramExecutionTemporarilyRestricted,
  InstructionErrorCustom,
  InstructionErrorBorshIo,
  type InnerInstruction,
  type TransactionMetadata,
} from 'litesvm/dist/internal.js';
import { address, getAddressDecoder, getAddressEncoder, getBase58Decoder, getBase58Encoder, getProgramDerivedAddress } from '@solana/kit';

export const SOLANA_USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const USDC_DECIMALS = 6;
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const SYSTEM_PROGRAM = '11111111111111111111111111111111';

const MINT_SIZE = 82;
const TOKEN_ACCOUNT_SIZE = 165;
/** Blocks a blockhash stays usable on a real cluster; only used to report lastValidBlockHeight. */
const BLOCKHASH_VALIDITY_BLOCKS = 150n;
const SLOTS_PER_EPOCH = 432_000n;
const U64_MAX = 18_446_744_073_709_551_615n;
const MAX_REQUEST_BYTES = 5 * 1024 * 1024;

// LiteSVM reports transaction and instruction errors as enum numbers; a real RPC names them.
const TRANSACTION_ERRORS = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee',
  'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', 'CallChainTooDeep', 'MissingSignatureForFee',
  'InvalidAccountIndex', 'SignatureFailure', 'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance',
  'AccountBorrowOutstanding', 'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded', 'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit', 'CommitCancelled',
] as const;
const INSTRUCTION_ERRORS = [
  'GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall',
  'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized',
  'UninitializedAccount', 'UnbalancedInstruction', 'ModifiedProgramId', 'ExternalAccountLamportSpend',
  'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified', 'DuplicateAccountIndex',
  'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged', 'AccountNotExecutable',
  'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync', 'InvalidError',
  'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt', 'UnsupportedProgramId',
  'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded', 'InvalidSeeds', 'InvalidRealloc',
  'ComputationalBudgetExceeded', 'PrivilegeEscalation', 'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete',
  'ProgramFailedToCompile', 'Immutable', 'IncorrectAuthority', 'AccountNotRentExempt', 'InvalidAccountOwner',
  'ArithmeticOverflow', 'UnsupportedSysvar', 'IllegalOwner', 'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded', 'MaxInstructionTraceLengthExceeded', 'BuiltinProgramsMustConsumeComputeUnits', 'BorshIoError',
] as const;

type RpcTransactionError = string | Record<string, unknown>;

function transactionErrorJson(err: ReturnType<FailedTransactionMetadata['err']>): RpcTransactionError {
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? `TransactionError(${err})`;
  if (err instanceof TransactionErrorInstructionError) {
    const inner = err.err();
    let detail: unknown;
    if (typeof inner === 'number') detail = INSTRUCTION_ERRORS[inner] ?? `InstructionError(${inner})`;
    else if (inner instanceof InstructionErrorCustom) detail = { Custom: inner.code };
    else if (inner instanceof InstructionErrorBorshIo) detail = { BorshIoError: inner.msg };
    else detail = String(inner);
    return { InstructionError: [err.index, detail] };
  }
  if (err instanceof TransactionErrorInsufficientFundsForRent) return { InsufficientFundsForRent: { account_index: err.accountIndex } };
  if (err instanceof TransactionErrorProgramExecutionTemporarilyRestricted) {
    return { ProgramExecutionTemporarilyRestricted: { account_index: err.accountIndex } };
  }
  if (err instanceof TransactionErrorDuplicateInstruction) return { DuplicateInstruction: err.index };
  return String(err);
}

/** Errors raised while executing instructions: such a transaction lands, pays its fee and keeps a status. */
function landsOnChain(err: RpcTransactionError | null): boolean {
  return err === null || (typeof err === 'object' && ('InstructionError' in err || 'InsufficientFundsForRent' in err));
}

// ---------------------------------------------------------------------------------------------
// Bytes

const addressEncoder = getAddressEncoder();
const addressDecoder = getAddressDecoder();
const base58Encoder = getBase58Encoder();
const base58Decoder = getBase58Decoder();

const toKey = (base58Address: string): Uint8Array => new Uint8Array(addressEncoder.encode(address(base58Address)));
const fromKey = (bytes: Uint8Array): string => addressDecoder.decode(bytes);
const toBase58 = (bytes: Uint8Array): string => base58Decoder.decode(bytes);
const toBase64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

function readShortVec(bytes: Uint8Array, offset: number): [value: number, next: number] {
  let value = 0;
  for (let i = 0; i < 3; i += 1) {
    const byte = bytes[offset + i];
    if (byte === undefined) throw new RpcError(-32602, 'invalid transaction: truncated length prefix');
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) return [value, offset + i + 1];
  }
  throw new RpcError(-32602, 'invalid transaction: bad length prefix');
}

interface WireTransaction {
  bytes: Uint8Array;
  signatures: Uint8Array[];
  /** What the chain deduplicates on: base64 SHA-256 of the message bytes. */
  messageHash: string;
  versioned: boolean;
  header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
  staticKeys: Uint8Array[];
  blockhashOffset: number;
  instructions: { programIdIndex: number; accounts: number[]; data: Uint8Array }[];
  lookups: { accountKey: Uint8Array; writableIndexes: number[]; readonlyIndexes: number[] }[];
}

/** Solana's wire format: signatures, then the (legacy or v0) message. */
function parseTransaction(bytes: Uint8Array): WireTransaction {
  const need = (offset: number, length: number) => {
    if (offset + length > bytes.length) throw new RpcError(-32602, 'invalid transaction: truncated');
  };
  let [count, at] = readShortVec(bytes, 0);
  if (count < 1) throw new RpcError(-32602, 'invalid transaction: no signatures');
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < count; i += 1, at += 64) {
    need(at, 64);
    signatures.push(bytes.subarray(at, at + 64));
  }
  need(at, 1);
  const messageHash = createHash('sha256').update(bytes.subarray(at)).digest('base64');
  const versioned = (bytes[at] & 0x80) !== 0;
  if (versioned) {
    if ((bytes[at] & 0x7f) !== 0) throw new RpcError(-32602, 'invalid transaction: unsupported version');
    at += 1;
  }
  need(at, 3);
  const header = { numRequiredSignatures: bytes[at], numReadonlySignedAccounts: bytes[at + 1], numReadonlyUnsignedAccounts: bytes[at + 2] };
  at += 3;
  let keyCount: number;
  [keyCount, at] = readShortVec(bytes, at);
  const staticKeys: Uint8Array[] = [];
  for (let i = 0; i < keyCount; i += 1, at += 32) {
    need(at, 32);
    staticKeys.push(bytes.subarray(at, at + 32));
  }
  need(at, 32);
  const blockhashOffset = at;
  at += 32;
  let instructionCount: number;
  [instructionCount, at] = readShortVec(bytes, at);
  const instructions: WireTransaction['instructions'] = [];
  for (let i = 0; i < instructionCount; i += 1) {
    need(at, 1);
    const programIdIndex = bytes[at];
    let accountCount: number;
    [accountCount, at] = readShortVec(bytes, at + 1);
    need(at, accountCount);
    const accounts = Array.from(bytes.subarray(at, at + accountCount));
    at += accountCount;
    let dataLength: number;
    [dataLength, at] = readShortVec(bytes, at);
    need(at, dataLength);
    instructions.push({ programIdIndex, accounts, data: bytes.subarray(at, at + dataLength) });
    at += dataLength;
  }
  const lookups: WireTransaction['lookups'] = [];
  if (versioned) {
    let lookupCount: number;
    [lookupCount, at] = readShortVec(bytes, at);
    for (let i = 0; i < lookupCount; i += 1) {
      need(at, 32);
      const accountKey = bytes.subarray(at, at + 32);
      let writableCount: number;
      [writableCount, at] = readShortVec(bytes, at + 32);
      need(at, writableCount);
      const writableIndexes = Array.from(bytes.subarray(at, at + writableCount));
      at += writableCount;
      let readonlyCount: number;
      [readonlyCount, at] = readShortVec(bytes, at);
      need(at, readonlyCount);
      const readonlyIndexes = Array.from(bytes.subarray(at, at + readonlyCount));
      at += readonlyCount;
      lookups.push({ accountKey, writableIndexes, readonlyIndexes });
    }
  }
  return { bytes, signatures, messageHash, versioned, header, staticKeys, blockhashOffset, instructions, lookups };
}

// ---------------------------------------------------------------------------------------------
// SPL Token account layouts (the classic Token program's fixed-size Mint and Account)

interface MintState { mintAuthority: Uint8Array | null; supply: bigint; decimals: number; freezeAuthority: Uint8Array | null }
interface TokenAccountState { mint: Uint8Array; owner: Uint8Array; amount: bigint; state: number; isNative: bigint | null; delegate: Uint8Array | null; delegatedAmount: bigint; closeAuthority: Uint8Array | null }

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
const tokenAmount = (amount: bigint, decimals: number) => {
  const text = uiAmountString(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(text), uiAmountString: text };
};

// ---------------------------------------------------------------------------------------------
// JSON-RPC plumbing

class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

// Real RPC answers carry u64 numbers (lamports, rentEpoch) that do not fit a double; @solana/kit
// parses every integer as a BigInt, so write them as bare JSON numbers.
const BIGINT_MARK = '__svm_rpc_bigint__';
const BIGINT_PATTERN = new RegExp(`"${BIGINT_MARK}(-?\\d+)"`, 'g');
function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? `${BIGINT_MARK}${v}` : v)).replace(BIGINT_PATTERN, '$1');
}

interface RecordedTransaction {
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

export interface SvmRpcServer {
  url: string;
  /** JSON-RPC calls seen, by method, for tests that prove what was (not) asked of the chain. */
  calls: Record<string, number>;
  /** Gives an account this many lamports (a system account when it does not exist yet). */
  setLamports(owner: string, lamports: bigint): void;
  /** The owner's associated USDC token account (classic Token program). */
  usdcAccountOf(owner: string): Promise<string>;
  /** Creates or overwrites the owner's USDC account with this balance; the mint's supply follows. */
  setUsdcBalance(owner: string, amount: bigint): Promise<void>;
  /** USDC atomic units in the owner's associated token account; 0 when it does not exist. */
  usdcBalance(owner: string): Promise<bigint>;
  /**
   * Moves to a new blockhash and past the old one's last valid block height, as ~150 blocks
   * would on a real cluster: transactions built on the old blockhash can no longer land.
   */
  expireBlockhash(): void;
  stop(): Promise<void>;
}

export async function startSvmRpc(options: { port?: number } = {}): Promise<SvmRpcServer> {
  const svm = new LiteSvm();
  const transactions = new Map<string, RecordedTransaction>();
  // A real cluster's status cache refuses a message it has already executed while its blockhash
  // is still valid, in simulation as in execution, whatever the signatures say. LiteSVM only
  // remembers signatures, and its simulation does not look at them at all.
  const landedMessages = new Set<string>();
  const alreadyProcessed = (wire: WireTransaction) =>
    landedMessages.has(wire.messageHash) &&
    toBase58(wire.bytes.subarray(wire.blockhashOffset, wire.blockhashOffset + 32)) === svm.latestBlockhash();
  const calls: Record<string, number> = {};

  const slot = () => svm.getClock().slot;
  const context = () => ({ slot: slot(), apiVersion: '2.2.0' });
  const advanceSlots = (count: bigint) => svm.warpToSlot(slot() + count);
  const latestBlockhash = () => ({ blockhash: svm.latestBlockhash(), lastValidBlockHeight: slot() + BLOCKHASH_VALIDITY_BLOCKS });

  const rentExempt = (size: number) => svm.minimumBalanceForRentExemption(BigInt(size));
  const usdcMintKey = toKey(SOLANA_USDC_MINT);
  const tokenProgramKey = toKey(TOKEN_PROGRAM);

  svm.setAccount(
    usdcMintKey,
    new Account(rentExempt(MINT_SIZE), encodeMint({ mintAuthority: null, supply: 0n, decimals: USDC_DECIMALS, freezeAuthority: null }), tokenProgramKey, false, U64_MAX),
  );

  const usdcAccountOf = async (owner: string): Promise<string> => {
    const [ata] = await getProgramDerivedAddress({
      programAddress: address(ASSOCIATED_TOKEN_PROGRAM),
      seeds: [toKey(owner), tokenProgramKey, usdcMintKey],
    });
    return ata;
  };

  const tokenAccountState = (key: Uint8Array): TokenAccountState | undefined => {
    const account = svm.getAccount(key);
    if (!account || fromKey(account.owner()) !== TOKEN_PROGRAM || account.data().length !== TOKEN_ACCOUNT_SIZE) return undefined;
    return decodeTokenAccount(account.data());
  };
  const mintDecimals = (mint: Uint8Array): number => {
    const account = svm.getAccount(mint);
    return account && account.data().length === MINT_SIZE ? decodeMint(account.data()).decimals : 0;
  };

  const setUsdcBalance = async (owner: string, amount: bigint) => {
    const ataKey = toKey(await usdcAccountOf(owner));
    const previous = tokenAccountState(ataKey)?.amount ?? 0n;
    const data = encodeTokenAccount({ mint: usdcMintKey, owner: toKey(owner), amount });
    svm.setAccount(ataKey, new Account(rentExempt(TOKEN_ACCOUNT_SIZE), data, tokenProgramKey, false, U64_MAX));
    const mintAccount = svm.getAccount(usdcMintKey);
    if (!mintAccount) throw new Error('the USDC mint disappeared');
    const mint = decodeMint(mintAccount.data());
    svm.setAccount(usdcMintKey, new Account(mintAccount.lamports(), encodeMint({ ...mint, supply: mint.supply - previous + amount }), tokenProgramKey, false, U64_MAX));
  };

  const setLamports = (owner: string, lamports: bigint) => {
    const key = toKey(owner);
    const existing = svm.getAccount(key);
    const account = existing
      ? new Account(lamports, existing.data(), existing.owner(), existing.executable(), existing.rentEpoch())
      : new Account(lamports, new Uint8Array(0), toKey(SYSTEM_PROGRAM), false, U64_MAX);
    svm.setAccount(key, account);
  };

  // -------------------------------------------------------------------------------------------
  // Account encodings

  const encodeAccount = (key: Uint8Array, encoding: string) => {
    const account = svm.getAccount(key);
    if (!account) return null;
    const data = account.data();
    const owner = fromKey(account.owner());
    const base = { executable: account.executable(), lamports: account.lamports(), owner, rentEpoch: account.rentEpoch(), space: BigInt(data.length) };
    if (encoding === 'jsonParsed') {
      const parsed = parseTokenData(owner, data);
      if (parsed) return { ...base, data: { program: 'spl-token', parsed, space: BigInt(data.length) } };
      return { ...base, data: [toBase64(data), 'base64'] };
    }
    if (encoding === 'base64') return { ...base, data: [toBase64(data), 'base64'] };
    if (encoding === 'base58') return { ...base, data: [toBase58(data), 'base58'] };
    throw new RpcError(-32602, `Invalid params: unsupported encoding ${encoding}`);
  };

  const parseTokenData = (owner: string, data: Uint8Array) => {
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
      const decimals = mintDecimals(account.mint);
      return {
        type: 'account',
        info: {
          isNative: account.isNative !== null,
          mint: fromKey(account.mint),
          owner: fromKey(account.owner),
          state: account.state === 2 ? 'frozen' : account.state === 1 ? 'initialized' : 'uninitialized',
          tokenAmount: tokenAmount(account.amount, decimals),
          ...(account.delegate ? { delegate: fromKey(account.delegate), delegatedAmount: tokenAmount(account.delegatedAmount, decimals) } : {}),
          ...(account.closeAuthority ? { closeAuthority: fromKey(account.closeAuthority) } : {}),
        },
      };
    }
    return undefined;
  };

  const tokenBalancesOf = (wire: WireTransaction) => {
    const balances: unknown[] = [];
    wire.staticKeys.forEach((key, accountIndex) => {
      const state = tokenAccountState(key);
      if (!state) return;
      balances.push({
        accountIndex,
        mint: fromKey(state.mint),
        owner: fromKey(state.owner),
        programId: TOKEN_PROGRAM,
        uiTokenAmount: tokenAmount(state.amount, mintDecimals(state.mint)),
      });
    });
    return balances;
  };

  // -------------------------------------------------------------------------------------------
  // Transactions

  const decodeWire = (encoded: unknown, encoding: unknown): WireTransaction => {
    if (typeof encoded !== 'string') throw new RpcError(-32602, 'Invalid params: transaction must be a string');
    const bytes = (encoding ?? 'base58') === 'base64' ? new Uint8Array(Buffer.from(encoded, 'base64')) : new Uint8Array(base58Encoder.encode(encoded));
    return parseTransaction(bytes);
  };

  const simulateWire = (wire: WireTransaction) =>
    wire.versioned ? svm.simulateVersionedTransaction(wire.bytes) : svm.simulateLegacyTransaction(wire.bytes);
  const sendWire = (wire: WireTransaction) =>
    wire.versioned ? svm.sendVersionedTransaction(wire.bytes) : svm.sendLegacyTransaction(wire.bytes);

  const compiledInnerInstructions = (inner: InnerInstruction[][]) =>
    inner.flatMap((instructions, index) =>
      instructions.length === 0
        ? []
        : [{
            index,
            instructions: instructions.map((entry) => {
              const instruction = entry.instruction();
              return {
                programIdIndex: instruction.programIdIndex(),
                accounts: Array.from(instruction.accounts()),
                data: toBase58(instruction.data()),
                stackHeight: entry.stackHeight(),
              };
            }),
          }],
    );

  const returnDataJson = (meta: TransactionMetadata) => {
    const returnData = meta.returnData();
    const data = returnData.data();
    return data.length === 0 ? null : { programId: fromKey(returnData.programId()), data: [toBase64(data), 'base64'] };
  };

  const simulate = (params: unknown[]) => {
    const config = (params[1] ?? {}) as { sigVerify?: boolean; replaceRecentBlockhash?: boolean; encoding?: string; innerInstructions?: boolean };
    if (config.sigVerify && config.replaceRecentBlockhash) {
      throw new RpcError(-32602, 'Invalid params: sigVerify may not be used with replaceRecentBlockhash');
    }
    let wire = decodeWire(params[0], config.encoding);
    let replacementBlockhash: ReturnType<typeof latestBlockhash> | null = null;
    if (config.replaceRecentBlockhash) {
      replacementBlockhash = latestBlockhash();
      const patched = wire.bytes.slice();
      patched.set(base58Encoder.encode(replacementBlockhash.blockhash), wire.blockhashOffset);
      wire = parseTransaction(patched);
    }
    if (alreadyProcessed(wire)) {
      return {
        context: context(),
        value: { err: 'AlreadyProcessed', logs: [], accounts: null, unitsConsumed: 0n, returnData: null, innerInstructions: null, replacementBlockhash, loadedAccountsDataSize: null },
      };
    }
    // A real RPC simulates without checking signatures unless asked to; the facilitator relies
    // on that, as the fee payer's signature slot is still empty when it verifies.
    const sigVerify = config.sigVerify ?? false;
    svm.setSigverify(sigVerify);
    let result: ReturnType<typeof simulateWire>;
    try {
      result = simulateWire(wire);
    } finally {
      svm.setSigverify(true);
    }
    const err = result instanceof FailedTransactionMetadata ? transactionErrorJson(result.err()) : null;
    const meta = result.meta();
    return {
      context: context(),
      value: {
        err,
        logs: meta.logs(),
        accounts: null,
        unitsConsumed: meta.computeUnitsConsumed(),
        returnData: returnDataJson(meta),
        innerInstructions: config.innerInstructions ? compiledInnerInstructions(meta.innerInstructions()) : null,
        replacementBlockhash,
        loadedAccountsDataSize: null,
      },
    };
  };

  const send = (params: unknown[]) => {
    const config = (params[1] ?? {}) as { encoding?: string; skipPreflight?: boolean };
    const wire = decodeWire(params[0], config.encoding);
    const signature = toBase58(wire.signatures[0]);
    const duplicate = alreadyProcessed(wire);
    if (!config.skipPreflight) {
      if (duplicate) {
        throw new RpcError(-32002, 'Transaction simulation failed: This transaction has already been processed', { err: 'AlreadyProcessed', logs: [], accounts: null, unitsConsumed: 0 });
      }
      svm.setSigverify(true);
      const preflight = simulateWire(wire);
      if (preflight instanceof FailedTransactionMetadata) {
        const err = transactionErrorJson(preflight.err());
        throw new RpcError(-32002, `Transaction simulation failed: ${toJson(err)}`, { err, logs: preflight.meta().logs(), accounts: null, unitsConsumed: preflight.meta().computeUnitsConsumed() });
      }
    }
    // Like a real cluster, an accepted send answers with the signature even when the leader then
    // drops the transaction (duplicate, unknown blockhash, unpayable fee): a duplicate keeps the
    // status of the transaction that landed first; a dropped one never gets a status.
    if (duplicate) return signature;
    const preBalances = wire.staticKeys.map((key) => svm.getBalance(key) ?? 0n);
    const preTokenBalances = tokenBalancesOf(wire);
    const result = sendWire(wire);
    const failed = result instanceof FailedTransactionMetadata;
    const err = failed ? transactionErrorJson(result.err()) : null;
    if (err === 'SignatureFailure') throw new RpcError(-32003, 'Transaction signature verification failure');
    if (err === 'SanitizeFailure') throw new RpcError(-32602, 'invalid transaction: Transaction failed to sanitize accounts offsets correctly');
    if (!landsOnChain(err)) return signature;
    landedMessages.add(wire.messageHash);
    const meta = failed ? result.meta() : result;
    const postBalances = wire.staticKeys.map((key) => svm.getBalance(key) ?? 0n);
    transactions.set(signature, {
      slot: slot(),
      wire,
      err,
      logs: meta.logs(),
      computeUnits: meta.computeUnitsConsumed(),
      innerInstructions: meta.innerInstructions(),
      fee: preBalances[0] - postBalances[0] > 0n ? preBalances[0] - postBalances[0] : 0n,
      preBalances,
      postBalances,
      preTokenBalances,
      postTokenBalances: tokenBalancesOf(wire),
    });
    advanceSlots(1n);
    return signature;
  };

  const signatureStatuses = (params: unknown[]) => {
    const signatures = params[0];
    if (!Array.isArray(signatures)) throw new RpcError(-32602, 'Invalid params: expected an array of signatures');
    return {
      context: context(),
      value: signatures.map((signature) => {
        const found = typeof signature === 'string' ? transactions.get(signature) : undefined;
        if (!found) return null;
        return {
          slot: found.slot,
          confirmations: null,
          err: found.err,
          status: found.err === null ? { Ok: null } : { Err: found.err },
          confirmationStatus: 'finalized',
        };
      }),
    };
  };

  const getTransaction = (params: unknown[]) => {
    const config = (typeof params[1] === 'string' ? { encoding: params[1] } : params[1] ?? {}) as { encoding?: string; maxSupportedTransactionVersion?: number };
    const found = typeof params[0] === 'string' ? transactions.get(params[0]) : undefined;
    if (!found) return null;
    const { wire } = found;
    if (wire.versioned && config.maxSupportedTransactionVersion === undefined) {
      throw new RpcError(-32015, 'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0');
    }
    const encoding = config.encoding ?? 'json';
    const keys = wire.staticKeys.map(fromKey);
    const parsed = encoding === 'jsonParsed';
    const { numRequiredSignatures, numReadonlySignedAccounts, numReadonlyUnsignedAccounts } = wire.header;
    const isWritable = (index: number) =>
      index < numRequiredSignatures ? index < numRequiredSignatures - numReadonlySignedAccounts : index < keys.length - numReadonlyUnsignedAccounts;
    const instructionJson = (instruction: { programIdIndex: number; accounts: number[]; data: string; stackHeight?: number | null }) =>
      parsed
        ? { programId: keys[instruction.programIdIndex], accounts: instruction.accounts.map((i) => keys[i]), data: instruction.data, stackHeight: instruction.stackHeight ?? null }
        : { ...instruction, stackHeight: instruction.stackHeight ?? null };
    let transaction: unknown;
    if (encoding === 'base64') transaction = [toBase64(wire.bytes), 'base64'];
    else if (encoding === 'base58') transaction = [toBase58(wire.bytes), 'base58'];
    else if (encoding === 'json' || parsed) {
      transaction = {
        signatures: wire.signatures.map(toBase58),
        message: {
          accountKeys: parsed
            ? keys.map((pubkey, index) => ({ pubkey, signer: index < numRequiredSignatures, writable: isWritable(index), source: 'transaction' }))
            : keys,
          header: wire.header,
          recentBlockhash: toBase58(wire.bytes.subarray(wire.blockhashOffset, wire.blockhashOffset + 32)),
          instructions: wire.instructions.map((instruction) =>
            instructionJson({ programIdIndex: instruction.programIdIndex, accounts: instruction.accounts, data: toBase58(instruction.data) }),
          ),
          ...(wire.versioned
            ? { addressTableLookups: wire.lookups.map((lookup) => ({ accountKey: fromKey(lookup.accountKey), writableIndexes: lookup.writableIndexes, readonlyIndexes: lookup.readonlyIndexes })) }
            : {}),
        },
      };
    } else throw new RpcError(-32602, `Invalid params: unsupported encoding ${encoding}`);
    return {
      slot: found.slot,
      blockTime: null,
      version: wire.versioned ? 0 : 'legacy',
      transaction,
      meta: {
        err: found.err,
        status: found.err === null ? { Ok: null } : { Err: found.err },
        fee: found.fee,
        preBalances: found.preBalances,
        postBalances: found.postBalances,
        innerInstructions: compiledInnerInstructions(found.innerInstructions).map((group) => ({ ...group, instructions: group.instructions.map(instructionJson) })),
        logMessages: found.logs,
        preTokenBalances: found.preTokenBalances,
        postTokenBalances: found.postTokenBalances,
        rewards: [],
        loadedAddresses: { writable: [], readonly: [] },
        computeUnitsConsumed: found.computeUnits,
      },
    };
  };

  // -------------------------------------------------------------------------------------------
  // Methods

  const addressParam = (value: unknown): Uint8Array => {
    try {
      return toKey(String(value));
    } catch {
      throw new RpcError(-32602, 'Invalid params: Invalid');
    }
  };
  const encodingOf = (config: unknown, fallback: string) => ((config ?? {}) as { encoding?: string }).encoding ?? fallback;

  const methods: Record<string, (params: unknown[]) => unknown> = {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': '2.2.0', 'feature-set': 0 }),
    getSlot: () => slot(),
    getBlockHeight: () => slot(),
    getEpochInfo: () => {
      const absoluteSlot = slot();
      return { absoluteSlot, blockHeight: absoluteSlot, epoch: absoluteSlot / SLOTS_PER_EPOCH, slotIndex: absoluteSlot % SLOTS_PER_EPOCH, slotsInEpoch: SLOTS_PER_EPOCH, transactionCount: BigInt(transactions.size) };
    },
    getLatestBlockhash: () => ({ context: context(), value: latestBlockhash() }),
    isBlockhashValid: (params) => ({ context: context(), value: params[0] === svm.latestBlockhash() }),
    getMinimumBalanceForRentExemption: (params) => rentExempt(Number(params[0] ?? 0)),
    getBalance: (params) => ({ context: context(), value: svm.getBalance(addressParam(params[0])) ?? 0n }),
    getAccountInfo: (params) => ({ context: context(), value: encodeAccount(addressParam(params[0]), encodingOf(params[1], 'base58')) }),
    getMultipleAccounts: (params) => {
      if (!Array.isArray(params[0])) throw new RpcError(-32602, 'Invalid params: expected an array of addresses');
      const encoding = encodingOf(params[1], 'base64');
      return { context: context(), value: params[0].map((entry) => encodeAccount(addressParam(entry), encoding)) };
    },
    getTokenAccountBalance: (params) => {
      const state = tokenAccountState(addressParam(params[0]));
      if (!state) throw new RpcError(-32602, 'Invalid param: not a Token account');
      return { context: context(), value: tokenAmount(state.amount, mintDecimals(state.mint)) };
    },
    simulateTransaction: simulate,
    sendTransaction: send,
    getSignatureStatuses: signatureStatuses,
    getTransaction,
  };

  const handle = (request: unknown) => {
    const { id = null, method, params = [] } = (request ?? {}) as { id?: unknown; method?: unknown; params?: unknown };
    try {
      if (typeof method !== 'string') throw new RpcError(-32600, 'Invalid request');
      calls[method] = (calls[method] ?? 0) + 1;
      const run = Object.hasOwn(methods, method) ? methods[method] : undefined;
      if (!run) throw new RpcError(-32601, 'Method not found');
      return { jsonrpc: '2.0', id, result: run(Array.isArray(params) ? params : [params]) };
    } catch (error) {
      if (error instanceof RpcError) return { jsonrpc: '2.0', id, error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
      return { jsonrpc: '2.0', id, error: { code: -32603, message: error instanceof Error ? error.message : 'Internal error' } };
    }
  };

  const server = http.createServer(async (req, res) => {
    const reply = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(toJson(body));
    };
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' });
      res.end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > MAX_REQUEST_BYTES) throw new Error('request too large');
        chunks.push(chunk as Buffer);
      }
    } catch {
      res.writeHead(413);
      res.end();
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      reply({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    reply(Array.isArray(body) ? body.map(handle) : handle(body));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    setLamports,
    usdcAccountOf,
    setUsdcBalance,
    usdcBalance: async (owner) => tokenAccountState(toKey(await usdcAccountOf(owner)))?.amount ?? 0n,
    expireBlockhash: () => {
      svm.expireBlockhash();
      advanceSlots(BLOCKHASH_VALIDITY_BLOCKS + 1n);
    },
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return stopped;
    },
  };
}
