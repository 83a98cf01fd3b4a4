// The JSON-RPC 2.0 envelope the local Solana chain answers in: errors with codes, u64 numbers
// written as bare JSON numbers, and one request dispatched to its method.

export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

export type RpcMethod = (params: unknown[]) => unknown;

// Real RPC answers carry u64 numbers (lamports, rentEpoch) that do not fit a double; @solana/kit
// parses every integer as a BigInt, so write them as bare JSON numbers.
const BIGINT_MARK = '__svm_rpc_bigint__';
const BIGINT_PATTERN = new RegExp(`"${BIGINT_MARK}(-?\\d+)"`, 'g');
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${BIGINT_MARK}${v}` : v)).replace(BIGINT_PATTERN, '$1');
}

/** Answers one request object; `calls` counts every named method asked for, known or not. */
export function answerRequest(methods: Record<string, RpcMethod>, calls: Record<string, number>, request: unknown) {
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
}
