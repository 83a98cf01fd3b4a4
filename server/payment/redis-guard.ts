// The payment guard shared by replicas: SET NX with an expiry is atomic across instances.
// If Redis cannot be reached, claim() throws and the gate answers 503 rather than risk a
// payment being used twice.
import { createClient, type RedisClientType } from 'redis';
import { RedisChannelStorage, type RedisChannelStorageClient } from '@x402/evm/batch-settlement/server/redis-storage';
import { CLAIMED, type PaymentGuard } from './guard.js';

const KEY_PREFIX = 'paydoc:payment:';
const CONNECT_WAIT_MS = 2000;

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
    // Boot does not wait for Redis: a replica that starts before Redis (or while it restarts)
    // serves free endpoints and quotes, and refuses paid requests with 503 until it connects.
    const connecting = client.connect();
    connecting.catch(() => undefined);
    await Promise.race([connecting, new Promise((resolve) => setTimeout(resolve, CONNECT_WAIT_MS).unref())]);
    return new RedisGuard(client);
  }

  /**
   * The payment channels' state, shared by the replicas on the same connection: x402's Redis store
   * writes each update with a compare-and-set, so one channel serves one request at a time across
   * the replicas.
   */
  channelStorage(): RedisChannelStorage {
    return new RedisChannelStorage({ client: this.client as unknown as RedisChannelStorageClient, keyPrefix: 'paydoc:channel:' });
  }

  async claim(id: string, ttlSeconds: number, value = CLAIMED): Promise<boolean> {
    const reply = await withTimeout(this.client.set(KEY_PREFIX + id, value, { NX: true, EX: ttlSeconds }), 2000);
    return reply === 'OK';
  }

  async record(id: string, value: string, ttlSeconds: number): Promise<void> {
    await withTimeout(this.client.set(KEY_PREFIX + id, value, { EX: ttlSeconds }), 2000);
  }

  async lookup(id: string): Promise<string | undefined> {
    return (await withTimeout(this.client.get(KEY_PREFIX + id), 2000)) ?? undefined;
  }

  async release(id: string): Promise<void> {
    await withTimeout(this.client.del(KEY_PREFIX + id), 2000);
  }

  // 'ready' follows every connection, the first one included: the first time is not a reconnect.
  onReconnect(listener: () => void): void {
    let connectedBefore = this.client.isReady;
    this.client.on('ready', () => {
      if (connectedBefore) listener();
      connectedBefore = true;
    });
  }

  async close(): Promise<void> {
    // Stops the reconnect loop too when Redis was never reached.
    if (!this.client.isReady) { this.client.destroy(); return; }
    try { await withTimeout(this.client.close(), 2000); } catch { this.client.destroy(); }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis timed out')), ms);
    promise.then((v) => { clearTimeout(timer); resolve(v); }, (e) => { clearTimeout(timer); reject(e); });
  });
}
