// A Solana JSON-RPC endpoint on loopback, backed by an in-process LiteSVM, answering what the
// unmodified @x402/svm client and facilitator ask a real cluster. No Solana validator ships on
// npm or Debian; LiteSVM (npm, native addon) already holds the SPL Token, Associated Token
// Account, Compute Budget and Memo programs, and accounts can be placed at any address, so the
// USDC mint sits at its mainnet address and payers sign exactly what they would sign on mainnet.
//
// The parts: chain.ts (LiteSVM and what a node remembers), token.ts (SPL token accounts),
// wire.ts (the transaction format), methods.ts (the method table), json-rpc.ts (the envelope);
// this file serves them over HTTP.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LocalSolanaChain } from './chain.js';
import { answerRequest, toJson } from './json-rpc.js';
import { createRpcMethods } from './methods.js';
import { TokenAccounts } from './token.js';

const MAX_REQUEST_BYTES = 5 * 1024 * 1024;

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
  const chain = new LocalSolanaChain();
  const tokens = new TokenAccounts(chain);
  const methods = createRpcMethods(chain, tokens);
  const calls: Record<string, number> = {};
  const handle = (request: unknown) => answerRequest(methods, calls, request);

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
    setLamports: (owner, lamports) => chain.setLamports(owner, lamports),
    usdcAccountOf: (owner) => tokens.usdcAccountOf(owner),
    setUsdcBalance: (owner, amount) => tokens.setUsdcBalance(owner, amount),
    usdcBalance: (owner) => tokens.usdcBalance(owner),
    expireBlockhash: () => chain.expireBlockhash(),
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return stopped;
    },
  };
}
