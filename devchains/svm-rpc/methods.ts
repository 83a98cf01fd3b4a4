// The JSON-RPC methods the local Solana chain answers, by name: what the unmodified @x402/svm
// client and facilitator ask a real cluster (blockhash, accounts, balances, simulate, send,
// statuses, transactions, an address's signatures), in the shapes a real RPC node answers with.
import {
  FailedTransactionMetadata,
  type InnerInstruction,
  type TransactionMetadata,
} from 'litesvm/dist/internal.js';
import type { LocalSolanaChain } from './chain.js';
import { RpcError, toJson, type RpcMethod } from './json-rpc.js';
import { tokenAmount, type TokenAccounts } from './token.js';
import { landsOnChain, transactionErrorJson } from './transaction-errors.js';
import { decodeWireTransaction, fromKey, recentBlockhashOf, toBase58, toBase64, toKey, withRecentBlockhash, type WireTransaction } from './wire.js';

const SLOTS_PER_EPOCH = 432_000n;

export function createRpcMethods(chain: LocalSolanaChain, tokens: TokenAccounts): Record<string, RpcMethod> {
  const encodeAccount = (key: Uint8Array, encoding: string) => {
    const account = chain.svm.getAccount(key);
    if (!account) return null;
    const data = account.data();
    const owner = fromKey(account.owner());
    const base = {
      executable: account.executable(), lamports: account.lamports(), owner, rentEpoch: account.rentEpoch(), space: BigInt(data.length),
    };
    if (encoding === 'jsonParsed') {
      const parsed = tokens.parsedData(owner, data);
      if (parsed) return { ...base, data: { program: 'spl-token', parsed, space: BigInt(data.length) } };
      return { ...base, data: [toBase64(data), 'base64'] };
    }
    if (encoding === 'base64') return { ...base, data: [toBase64(data), 'base64'] };
    if (encoding === 'base58') return { ...base, data: [toBase58(data), 'base58'] };
    throw new RpcError(-32602, `Invalid params: unsupported encoding ${encoding}`);
  };

  const simulateWire = (wire: WireTransaction) =>
    wire.versioned ? chain.svm.simulateVersionedTransaction(wire.bytes) : chain.svm.simulateLegacyTransaction(wire.bytes);
  const sendWire = (wire: WireTransaction) =>
    wire.versioned ? chain.svm.sendVersionedTransaction(wire.bytes) : chain.svm.sendLegacyTransaction(wire.bytes);

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
    const config = (params[1] ?? {}) as {
      sigVerify?: boolean; replaceRecentBlockhash?: boolean; encoding?: string; innerInstructions?: boolean;
    };
    if (config.sigVerify && config.replaceRecentBlockhash) {
      throw new RpcError(-32602, 'Invalid params: sigVerify may not be used with replaceRecentBlockhash');
    }
    let wire = decodeWireTransaction(params[0], config.encoding);
    let replacementBlockhash: ReturnType<LocalSolanaChain['latestBlockhash']> | null = null;
    if (config.replaceRecentBlockhash) {
      replacementBlockhash = chain.latestBlockhash();
      wire = withRecentBlockhash(wire, replacementBlockhash.blockhash);
    }
    if (chain.alreadyProcessed(wire)) {
      return {
        context: chain.context(),
        value: { err: 'AlreadyProcessed', logs: [], accounts: null, unitsConsumed: 0n, returnData: null, innerInstructions: null, replacementBlockhash, loadedAccountsDataSize: null },
      };
    }
    // A real RPC simulates without checking signatures unless asked to; the facilitator relies
    // on that, as the fee payer's signature slot is still empty when it verifies.
    const sigVerify = config.sigVerify ?? false;
    chain.svm.setSigverify(sigVerify);
    let result: ReturnType<typeof simulateWire>;
    try {
      result = simulateWire(wire);
    } finally {
      chain.svm.setSigverify(true);
    }
    const err = result instanceof FailedTransactionMetadata ? transactionErrorJson(result.err()) : null;
    const meta = result.meta();
    return {
      context: chain.context(),
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
    const wire = decodeWireTransaction(params[0], config.encoding);
    const signature = toBase58(wire.signatures[0]);
    const duplicate = chain.alreadyProcessed(wire);
    if (!config.skipPreflight) {
      if (duplicate) {
        throw new RpcError(-32002, 'Transaction simulation failed: This transaction has already been processed', { err: 'AlreadyProcessed', logs: [], accounts: null, unitsConsumed: 0 });
      }
      chain.svm.setSigverify(true);
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
    const preBalances = wire.staticKeys.map((key) => chain.svm.getBalance(key) ?? 0n);
    const preTokenBalances = tokens.balancesAmong(wire.staticKeys);
    const result = sendWire(wire);
    const failed = result instanceof FailedTransactionMetadata;
    const err = failed ? transactionErrorJson(result.err()) : null;
    if (err === 'SignatureFailure') throw new RpcError(-32003, 'Transaction signature verification failure');
    if (err === 'SanitizeFailure') throw new RpcError(-32602, 'invalid transaction: Transaction failed to sanitize accounts offsets correctly');
    if (!landsOnChain(err)) return signature;
    const meta = failed ? result.meta() : result;
    const postBalances = wire.staticKeys.map((key) => chain.svm.getBalance(key) ?? 0n);
    chain.recordLanded(signature, {
      slot: chain.slot(),
      wire,
      err,
      logs: meta.logs(),
      computeUnits: meta.computeUnitsConsumed(),
      innerInstructions: meta.innerInstructions(),
      fee: preBalances[0] - postBalances[0] > 0n ? preBalances[0] - postBalances[0] : 0n,
      preBalances,
      postBalances,
      preTokenBalances,
      postTokenBalances: tokens.balancesAmong(wire.staticKeys),
    });
    chain.advanceSlots(1n);
    return signature;
  };

  const signatureStatuses = (params: unknown[]) => {
    const signatures = params[0];
    if (!Array.isArray(signatures)) throw new RpcError(-32602, 'Invalid params: expected an array of signatures');
    return {
      context: chain.context(),
      value: signatures.map((signature) => {
        const found = typeof signature === 'string' ? chain.transactions.get(signature) : undefined;
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

  // Newest first, as a real node answers; only what the local chain can know (no memo, no block time).
  const signaturesForAddress = (params: unknown[]) => {
    const address = fromKey(addressParam(params[0]));
    const { limit = 1000, before, until } = (params[1] ?? {}) as { limit?: number; before?: string; until?: string };
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new RpcError(-32602, 'Invalid params: limit must be between 1 and 1000');
    const newestFirst = [...chain.transactions].reverse();
    const start = before === undefined ? 0 : newestFirst.findIndex(([signature]) => signature === before) + 1;
    const found = [];
    for (const [signature, recorded] of newestFirst.slice(start)) {
      if (signature === until || found.length === limit) break;
      if (!recorded.wire.staticKeys.some((key) => fromKey(key) === address)) continue;
      found.push({ signature, slot: recorded.slot, err: recorded.err, memo: null, blockTime: null, confirmationStatus: 'finalized' });
    }
    return found;
  };

  const getTransaction = (params: unknown[]) => {
    const config = (typeof params[1] === 'string' ? { encoding: params[1] } : params[1] ?? {}) as { encoding?: string; maxSupportedTransactionVersion?: number };
    const found = typeof params[0] === 'string' ? chain.transactions.get(params[0]) : undefined;
    if (!found) return null;
    const { wire } = found;
    if (wire.versioned && config.maxSupportedTransactionVersion === undefined) {
      throw new RpcError(-32015, 'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0');
    }
    const encoding = config.encoding ?? 'json';
    const keys = wire.staticKeys.map(fromKey);
    const parsed = encoding === 'jsonParsed';
    const { numRequiredSignatures, numReadonlySignedAccounts, numReadonlyUnsignedAccounts } = wire.header;
    const isWritable = (index: number) => index < numRequiredSignatures
      ? index < numRequiredSignatures - numReadonlySignedAccounts
      : index < keys.length - numReadonlyUnsignedAccounts;
    const instructionJson = (instruction: { programIdIndex: number; accounts: number[]; data: string; stackHeight?: number | null }) =>
      parsed
        ? {
            programId: keys[instruction.programIdIndex], accounts: instruction.accounts.map((i) => keys[i]),
            data: instruction.data, stackHeight: instruction.stackHeight ?? null,
          }
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
          recentBlockhash: recentBlockhashOf(wire),
          instructions: wire.instructions.map((instruction) =>
            instructionJson({
              programIdIndex: instruction.programIdIndex, accounts: instruction.accounts, data: toBase58(instruction.data),
            }),
          ),
          ...(wire.versioned
            ? {
                addressTableLookups: wire.lookups.map((lookup) => ({
                  accountKey: fromKey(lookup.accountKey), writableIndexes: lookup.writableIndexes, readonlyIndexes: lookup.readonlyIndexes,
                })),
              }
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
        innerInstructions: compiledInnerInstructions(found.innerInstructions)
          .map((group) => ({ ...group, instructions: group.instructions.map(instructionJson) })),
        logMessages: found.logs,
        preTokenBalances: found.preTokenBalances,
        postTokenBalances: found.postTokenBalances,
        rewards: [],
        loadedAddresses: { writable: [], readonly: [] },
        computeUnitsConsumed: found.computeUnits,
      },
    };
  };

  const addressParam = (value: unknown): Uint8Array => {
    try {
      return toKey(String(value));
    } catch {
      throw new RpcError(-32602, 'Invalid params: Invalid');
    }
  };
  const encodingOf = (config: unknown, fallback: string) => ((config ?? {}) as { encoding?: string }).encoding ?? fallback;

  return {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': '2.2.0', 'feature-set': 0 }),
    getSlot: () => chain.slot(),
    getBlockHeight: () => chain.slot(),
    getEpochInfo: () => {
      const absoluteSlot = chain.slot();
      return {
        absoluteSlot, blockHeight: absoluteSlot, epoch: absoluteSlot / SLOTS_PER_EPOCH, slotIndex: absoluteSlot % SLOTS_PER_EPOCH,
        slotsInEpoch: SLOTS_PER_EPOCH, transactionCount: BigInt(chain.transactions.size),
      };
    },
    getLatestBlockhash: () => ({ context: chain.context(), value: chain.latestBlockhash() }),
    isBlockhashValid: (params) => ({ context: chain.context(), value: params[0] === chain.svm.latestBlockhash() }),
    getMinimumBalanceForRentExemption: (params) => chain.rentExempt(Number(params[0] ?? 0)),
    getBalance: (params) => ({ context: chain.context(), value: chain.svm.getBalance(addressParam(params[0])) ?? 0n }),
    getAccountInfo: (params) => ({ context: chain.context(), value: encodeAccount(addressParam(params[0]), encodingOf(params[1], 'base58')) }),
    getMultipleAccounts: (params) => {
      if (!Array.isArray(params[0])) throw new RpcError(-32602, 'Invalid params: expected an array of addresses');
      const encoding = encodingOf(params[1], 'base64');
      return { context: chain.context(), value: params[0].map((entry) => encodeAccount(addressParam(entry), encoding)) };
    },
    getTokenAccountBalance: (params) => {
      const state = tokens.tokenAccountState(addressParam(params[0]));
      if (!state) throw new RpcError(-32602, 'Invalid param: not a Token account');
      return { context: chain.context(), value: tokenAmount(state.amount, tokens.mintDecimals(state.mint)) };
    },
    simulateTransaction: simulate,
    sendTransaction: send,
    getSignatureStatuses: signatureStatuses,
    getSignaturesForAddress: signaturesForAddress,
    getTransaction,
  };
}
