// A local x402 facilitator over HTTP (/supported, /verify, /settle), built on x402's own
// facilitator classes. The embedded default (PAYMENTS=dev) runs one per chain, as production
// settles each chain through its own facilitator. `faults` lets tests make it fail on purpose.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { x402Facilitator } from '@x402/core/facilitator';

export interface FacilitatorServer {
  url: string;
  /**
   * 'down' closes the connection without an answer (unreachable); 'error' answers 500.
   * For settle only: 'lost' settles on chain and then closes the connection (the answer is
   * lost); 'pending' answers settlement_pending without settling; 'hang' never answers.
   * `settleDelayMs` waits before settling (a client can leave meanwhile).
   */
  faults: { verify?: 'down' | 'error'; settle?: 'down' | 'error' | 'lost' | 'pending' | 'hang'; settleDelayMs?: number };
  /** Calls seen, for tests that prove what was (not) verified or settled. */
  calls: { verify: number; settle: number };
  stop(): Promise<void>;
}

// Settle results carry BigInt values (Solana); JSON.stringify cannot write them.
const json = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1024 * 1024) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

export async function serveFacilitator(
  facilitator: x402Facilitator,
  options: { port?: number; host?: string } = {},
): Promise<FacilitatorServer> {
  const faults: FacilitatorServer['faults'] = {};
  const calls = { verify: 0, settle: 0 };
  const server = http.createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(json(body));
    };
    try {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method === 'GET' && path === '/supported') return send(200, facilitator.getSupported());
      if (req.method === 'POST' && (path === '/verify' || path === '/settle')) {
        const action = path.slice(1) as 'verify' | 'settle';
        calls[action] += 1;
        const fault = faults[action];
        if (fault === 'down') { req.socket.destroy(); return; }
        if (fault === 'error') return send(500, { error: 'injected fault' });
        if (fault === 'hang') return;
        const body = (await readBody(req)) as { paymentPayload: never; paymentRequirements: never };
        if (action === 'verify') return send(200, await facilitator.verify(body.paymentPayload, body.paymentRequirements));
        if (fault === 'pending') {
          const network = (body.paymentRequirements as { network: string }).network;
          return send(200, { success: false, errorReason: 'settlement_pending', transaction: `0x${'ab'.repeat(32)}`, network });
        }
        if (faults.settleDelayMs) await new Promise((resolve) => setTimeout(resolve, faults.settleDelayMs));
        const result = await facilitator.settle(body.paymentPayload, body.paymentRequirements);
        if (fault === 'lost') { req.socket.destroy(); return; }
        return send(200, result);
      }
      send(404, { error: 'not found' });
    } catch (err) {
      send(500, { error: err instanceof Error ? err.message : 'facilitator error' });
    }
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    faults,
    calls,
    stop: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
