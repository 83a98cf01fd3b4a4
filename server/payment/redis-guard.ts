// The payment guard shared by replicas: SET NX with an expiry is atomic across instances.
// If Redis cannot be reached, claim() throws and the gate answers 503 rather than risk a
// payment being used twice.
import { createClient, type RedisClientType } from 'redis';
import type { PaymentGuard } from './guard.js';

const KEY_PREFIX = 'paydoc:payment:';

export class RedisGuard implements PaymentGuard {
  private constructor(private readonly client: RedisClientType) {}

  static async connect(url: string): Promise<RedisGuard> {
    const client: RedisClientType = createClient({
      url,
      // Fail fast instead of queueing commands while disconnected: a paid request must not hang.
      disableOfflineQueue: true,
      socket: { connectTimeout: 2000, reconnectStrategy: (retries) => Math.min(retries * 200, 2000) },
    });
    // Connection errors surface through the commands that fail; the event only needs a listener.
    client.on('error', () => undefined);
    await client.connect();
    return new RedisGuard(client);
  }

  async claim(id: string, ttlSeconds: number): Promise<boolean> {
    const reply = await withTimeout(this.client.set(KEY_PREFIX + id, '1', { NX: true, EX: ttlSeconds }), 2000);
    return reply === 'OK';
  }

  async release(id: string): Promise<void> {
    await withTimeout(this.client.del(KEY_PREFIX + id), 2000);
  }

  async close(): Promise<void> {
    try { await this.client.quit(); } catch { this.client.destroy(); }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis timed out')), ms);
    promise.then((v) => { clearTimeout(timer); resolve(v); }, (e) => { clearTimeout(timer); reject(e); });
  });
}
