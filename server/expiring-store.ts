// What the in-memory stores of results have in common (result links, long jobs, MCP tasks): entries
// under a key until they expire, with the bytes each holds counted, so that each store bounds its
// count and bytes the same way. Each store keeps its own rules (lifetimes, refusals).
import { createHash } from 'node:crypto';

/** The key a token is kept under, here and in the shared registry: its hash, never the token. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

interface StoredEntry<V> {
  value: V;
  /** What the entry holds in memory, counted in `size.bytes`. */
  bytes: number;
  /** When it is dropped; Infinity for an entry that does not expire by itself (a running job). */
  expiresAt: number;
}

export class ExpiringStore<V> {
  private readonly entries = new Map<string, StoredEntry<V>>();
  private bytes = 0;

  /** The entry under the key, unless it has expired. */
  get(key: string): StoredEntry<V> | undefined {
    this.sweep();
    return this.entries.get(key);
  }

  set(key: string, value: V, bytes: number, expiresAt: number): void {
    this.delete(key);
    this.entries.set(key, { value, bytes, expiresAt });
    this.bytes += bytes;
  }

  /** Changes what an entry holds (its result arrived) and when it expires. */
  update(key: string, change: Partial<StoredEntry<V>>): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes += (change.bytes ?? entry.bytes) - entry.bytes;
    Object.assign(entry, change);
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  /** Entries and bytes held now, expired ones dropped first. */
  get size(): { count: number; bytes: number } {
    this.sweep();
    return { count: this.entries.size, bytes: this.bytes };
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) this.delete(key);
    }
  }
}
