// The embedded channel store for one process: a JSON file per channel under CHANNEL_STORE_DIR,
// each update written to a temporary file and renamed over the old one before it returns; one
// that changes what was charged or claimed is flushed to the disk first, and the folder after. So
// a voucher the service has charged is on the disk before the answer leaves, and survives a
// SIGKILL, a restart and a power cut. A request's reservation alone is not flushed: a reopened
// store clears reservations anyway.
// x402's own file store keeps a lock file per update that a killed process leaves behind (the
// channel then waits for it forever) and does not flush; replicas share channels through Redis.
import { closeSync, rmSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, unlinkSync, writeFileSync, constants } from 'node:fs';
import path from 'node:path';
import type { Channel, ChannelStorage, ChannelUpdateResult } from '@x402/evm/batch-settlement/server';

const CHANNEL_ID = /^0x[0-9a-f]{64}$/;
const OWNER_FILE = '.owner';

export class ChannelStoreInUseError extends Error {}

export class FileChannelStore implements ChannelStorage {
  // Updates of one channel run one after another; x402's scheme reserves a channel for one
  // request at a time inside such an update.
  private readonly queues = new Map<string, Promise<unknown>>();

  private constructor(private readonly dir: string, private readonly removeOnClose: boolean) {}

  /**
   * Opens the folder for this process alone: a live process already using it is refused. What a
   * killed process left (temporary files, reservations of requests that died with it) is cleared.
   */
  static open(dir: string, options: { removeOnClose?: boolean } = {}): FileChannelStore {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    claimOwnership(dir);
    const store = new FileChannelStore(dir, options.removeOnClose ?? false);
    for (const name of readdirSync(dir)) {
      if (name.endsWith('.tmp')) unlinkSync(path.join(dir, name));
    }
    for (const channel of store.readAll()) {
      if (channel.pendingRequest) store.write(channel.channelId, { ...channel, pendingRequest: undefined });
    }
    return store;
  }

  async get(channelId: string): Promise<Channel | undefined> {
    return this.read(idOf(channelId));
  }

  async list(): Promise<Channel[]> {
    return this.readAll();
  }

  updateChannel(channelId: string, update: (current: Channel | undefined) => Channel | undefined): Promise<ChannelUpdateResult> {
    const id = idOf(channelId);
    const previous = this.queues.get(id) ?? Promise.resolve();
    const next = previous.then(() => this.apply(id, update));
    const settled = next.catch(() => undefined);
    this.queues.set(id, settled);
    void settled.then(() => { if (this.queues.get(id) === settled) this.queues.delete(id); });
    return next;
  }

  /** Gives the folder up (at shutdown), so the next process takes it at once; a dev run's folder goes with its chain. */
  close(): void {
    if (this.removeOnClose) rmSync(this.dir, { recursive: true, force: true });
    else rmSync(path.join(this.dir, OWNER_FILE), { force: true });
  }

  private apply(id: string, update: (current: Channel | undefined) => Channel | undefined): ChannelUpdateResult {
    const current = this.read(id);
    const next = update(current);
    if (next === current) return { channel: current, status: 'unchanged' };
    if (!next) {
      if (!current) return { channel: undefined, status: 'unchanged' };
      unlinkSync(this.file(id));
      fsyncDir(this.dir);
      return { channel: undefined, status: 'deleted' };
    }
    this.write(id, next, charges(current) !== charges(next));
    return { channel: next, status: 'updated' };
  }

  /**
   * Writes the record whole (a temporary file renamed over it). What it owes is flushed to the
   * disk first; a request's reservation alone is not, as a reopened store clears reservations.
   */
  private write(id: string, channel: Channel, flush = true): void {
    const temporary = path.join(this.dir, `${id}.${process.pid}.tmp`);
    const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600);
    try {
      writeFileSync(fd, JSON.stringify(channel));
      if (flush) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.file(id));
    if (flush) fsyncDir(this.dir);
  }

  private read(id: string): Channel | undefined {
    try {
      return JSON.parse(readFileSync(this.file(id), 'utf8')) as Channel;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  private readAll(): Channel[] {
    return readdirSync(this.dir)
      .filter((name) => name.endsWith('.json') && CHANNEL_ID.test(name.slice(0, -5)))
      .map((name) => this.read(name.slice(0, -5)))
      .filter((channel): channel is Channel => channel !== undefined);
  }

  private file(id: string): string {
    return path.join(this.dir, `${id}.json`);
  }
}

/**
 * What a record says was charged and claimed, the part that must never be lost (a charge is
 * written together with the voucher that covers it).
 */
function charges(channel: Channel | undefined): string {
  return channel ? `${channel.chargedCumulativeAmount} ${channel.totalClaimed}` : '';
}

function idOf(channelId: string): string {
  const id = channelId.toLowerCase();
  if (!CHANNEL_ID.test(id)) throw new Error('a channel id is 32 bytes in hex');
  return id;
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY);
  try { fsyncSync(fd); } finally { closeSync(fd); }
}

/** Records this process as the folder's owner; a live owner (another process) refuses it. */
function claimOwnership(dir: string): void {
  const owner = path.join(dir, OWNER_FILE);
  let recorded: number | undefined;
  try {
    recorded = Number(readFileSync(owner, 'utf8'));
  } catch { /* no owner yet */ }
  if (recorded && recorded !== process.pid && alive(recorded)) {
    throw new ChannelStoreInUseError(`the channel store ${dir} is in use by process ${recorded}; one process owns an embedded store (replicas share channels through REDIS_URL)`);
  }
  writeFileSync(owner, String(process.pid), { mode: 0o600 });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
