// The MCP tasks (2025-11-25) of task-augmented tools/call, kept for the SDK's tasks/get and
// tasks/result handlers: in this process's memory only, bounded in count and in time, never on disk.
// The MCP endpoint is stateless (no sessions), so a task id is the only key to its task and result:
// 256 random bits, kept only as its hash, and tasks/list names none of them.
import { randomBytes } from 'node:crypto';
import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import type { Request, RequestId, Result, Task } from '@modelcontextprotocol/sdk/types.js';
import { HELD_RESULT_LIMITS } from './payment/held-results.js';
import { RECEIPT_META_KEY } from '../core/protocol.js';
import { ExpiringStore, tokenKey } from './expiring-store.js';

/** A task without its id (the key is the id's hash) and, once it ended, its result (whose strings are the entry's bytes). */
interface StoredTask {
  task: Omit<Task, 'taskId'>;
  result?: Result;
}

export interface ToolTaskLimits {
  /** A task's lifetime from its creation (the `ttl` every task is given, whatever the client asked). */
  ttlMs: number;
  /** How often a client is told to poll tasks/get. */
  pollIntervalMs: number;
  maxCount?: number;
  /** Bytes of results held at once; a result larger than what is left is refused before settlement (see roomForResult). */
  maxBytes?: number;
  /**
   * How long a task whose call charged nothing (a quote, a refusal, a failure) is kept once it
   * ended: its place is soon free again, so that unpaid calls cannot hold the store for long.
   */
  unchargedKeepMs?: number;
}

// Long enough to read the quote or the error with tasks/result right after tasks/get says it ended.
const UNCHARGED_KEEP_MS = 60_000;

/** Strings in a tool result (text, base64 data and blobs): what holding it costs, near enough. */
export function resultBytes(result: Result): number {
  let bytes = 0;
  const visit = (value: unknown): void => {
    if (typeof value === 'string') bytes += value.length;
    else if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') Object.values(value).forEach(visit);
  };
  visit(result);
  return bytes;
}

export class ToolTasks implements TaskStore {
  private readonly tasks = new ExpiringStore<StoredTask>();
  private readonly maxCount: number;
  private readonly maxBytes: number;

  constructor(private readonly limits: ToolTaskLimits) {
    this.maxCount = limits.maxCount ?? HELD_RESULT_LIMITS.maxCount;
    this.maxBytes = limits.maxBytes ?? HELD_RESULT_LIMITS.maxBytes;
  }

  /** Whether another task fits now. */
  hasRoom(): boolean {
    return this.tasks.size.count < this.maxCount;
  }

  /** The largest result that can still be held, for the inline limit of a task's call (checked before settlement). */
  roomForResult(): number {
    return Math.max(0, this.maxBytes - this.tasks.size.bytes);
  }

  // The requested ttl is overridden (as the specification allows): every task lives limits.ttlMs.
  async createTask(_options: CreateTaskOptions, _requestId: RequestId, _request: Request): Promise<Task> {
    if (!this.hasRoom()) {
      throw new Error('the service holds as many tasks as it can right now; retry in a minute, or call the tool without a task; nothing was charged');
    }
    const now = Date.now();
    const createdAt = new Date(now).toISOString();
    const task: Task = {
      taskId: randomBytes(32).toString('base64url'), status: 'working', ttl: this.limits.ttlMs,
      createdAt, lastUpdatedAt: createdAt, pollInterval: this.limits.pollIntervalMs,
    };
    const { taskId, ...kept } = task;
    this.tasks.set(tokenKey(taskId), { task: kept }, 0, now + this.limits.ttlMs);
    return { ...task };
  }

  async getTask(taskId: string): Promise<Task | null> {
    const stored = this.tasks.get(tokenKey(taskId))?.value;
    return stored ? { ...stored.task, taskId } : null;
  }

  /** Always kept once paid for (the inline limit made room before settlement); a task that expired meanwhile is gone. */
  async storeTaskResult(taskId: string, status: 'completed' | 'failed', result: Result): Promise<void> {
    const entry = this.tasks.get(tokenKey(taskId));
    if (!entry) throw new Error('Task not found: it has expired');
    const { task } = entry.value;
    if (task.status !== 'working') throw new Error(`the task is already ${task.status}`);
    entry.value.result = result;
    const now = Date.now();
    task.status = status;
    task.lastUpdatedAt = new Date(now).toISOString();
    if (status === 'failed') task.statusMessage = statusMessageOf(result);
    let { expiresAt } = entry;
    if (!(result._meta as Record<string, unknown> | undefined)?.[RECEIPT_META_KEY]) {
      // Nothing was charged: kept briefly, and its ttl (counted from creation) says so.
      expiresAt = Math.min(expiresAt, now + (this.limits.unchargedKeepMs ?? UNCHARGED_KEEP_MS));
      task.ttl = expiresAt - Date.parse(task.createdAt);
    }
    this.tasks.update(tokenKey(taskId), { bytes: resultBytes(result), expiresAt });
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const stored = this.tasks.get(tokenKey(taskId))?.value;
    if (!stored?.result) throw new Error('Task not found, or it has no result yet');
    return stored.result;
  }

  /**
   * Only the task's own outcome sets its status. Cancelling is not offered (no tasks.cancel
   * capability): a job stopped during its settlement could be charged and still show "cancelled".
   */
  async updateTaskStatus(_taskId: string, status: Task['status']): Promise<void> {
    throw new Error(`a task's status is set by its outcome only; "${status}" is not accepted`
      + ' (tasks cannot be cancelled here: a task ends by its deadline, uncharged when it fails)');
  }

  /** Nothing: without sessions, listing would hand one buyer's task ids to another. */
  async listTasks(): Promise<{ tasks: Task[] }> {
    return { tasks: [] };
  }

  get size(): { count: number; bytes: number } {
    return this.tasks.size;
  }

  clear(): void {
    this.tasks.clear();
  }
}

/** A failed task's status message: the error's code and message, or that payment is required. */
function statusMessageOf(result: Result): string {
  const structured = (result as { structuredContent?: Record<string, unknown> }).structuredContent;
  const error = structured?.error as { code?: unknown; message?: unknown } | string | undefined;
  if (structured && Array.isArray(structured.accepts)) {
    return `payment required${typeof error === 'string' ? `: ${error}` : ''}; the quote is the task's result (tasks/result)`;
  }
  if (error && typeof error === 'object') return `${String(error.code)}: ${String(error.message)}`;
  return 'the tool call failed; its error is the task\'s result (tasks/result)';
}
