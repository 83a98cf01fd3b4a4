// The MCP task store (server/mcp-tasks.ts) the SDK's tasks/get and tasks/result read: every task
// gets the service's ttl, ids are unguessable, a result is stored once with its status, nothing
// is listed or cancelled, the store is bounded in count and in result bytes, and tasks expire.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { ToolTasks, resultBytes } from '../../../server/mcp-tasks.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const request = { method: 'tools/call', params: {} };

describe('MCP task store', () => {
  it('a task starts working with the service\'s ttl, whatever was asked; its result is stored once', async () => {
    const tasks = new ToolTasks({ ttlMs: 90_000, pollIntervalMs: 1000 });
    const task = await tasks.createTask({ ttl: 10 }, 1, request);
    expect(task).to.include({ status: 'working', ttl: 90_000, pollInterval: 1000 });
    expect(Buffer.from(task.taskId, 'base64url').length).to.equal(32);
    const result = { content: [{ type: 'text', text: 'hello' }] };
    await tasks.storeTaskResult(task.taskId, 'completed', result);
    expect((await tasks.getTask(task.taskId))!.status).to.equal('completed');
    expect(await tasks.getTaskResult(task.taskId)).to.equal(result);
    const again = await tasks.storeTaskResult(task.taskId, 'failed', result).then(() => undefined, (e: unknown) => e);
    expect((again as Error).message).to.include('already completed');
    expect(tasks.size).to.equal({ count: 1, bytes: 9 });
  });

  it('a failed task says why: the error\'s code and message, or that payment is required', async () => {
    const tasks = new ToolTasks({ ttlMs: 60_000, pollIntervalMs: 1000 });
    const failed = await tasks.createTask({}, 1, request);
    await tasks.storeTaskResult(failed.taskId, 'failed', { isError: true, content: [], structuredContent: { error: { code: 'CORRUPT_INPUT', status: 422, message: 'cannot decode' } } });
    expect((await tasks.getTask(failed.taskId))!.statusMessage).to.equal('CORRUPT_INPUT: cannot decode');
    const quoted = await tasks.createTask({}, 2, request);
    await tasks.storeTaskResult(quoted.taskId, 'failed', { isError: true, content: [], structuredContent: { x402Version: 2, accepts: [] } });
    expect((await tasks.getTask(quoted.taskId))!.statusMessage!).to.startWith('payment required');
  });

  it('nothing is listed, nothing can be cancelled; an unknown id finds nothing', async () => {
    const tasks = new ToolTasks({ ttlMs: 60_000, pollIntervalMs: 1000 });
    const task = await tasks.createTask({}, 1, request);
    expect(await tasks.listTasks()).to.equal({ tasks: [] });
    const cancel = await tasks.updateTaskStatus(task.taskId, 'cancelled').then(() => undefined, (e: unknown) => e);
    expect((cancel as Error).message).to.include('cannot be cancelled');
    expect((await tasks.getTask(task.taskId))!.status).to.equal('working');
    expect(await tasks.getTask('A'.repeat(43))).to.be.null();
  });

  it('bounded: no task past maxCount, the room for results shrinks as results are held, tasks expire after their ttl', async () => {
    const tasks = new ToolTasks({ ttlMs: 40, pollIntervalMs: 1000, maxCount: 2, maxBytes: 100 });
    const first = await tasks.createTask({}, 1, request);
    await tasks.createTask({}, 2, request);
    const refused = await tasks.createTask({}, 3, request).then(() => undefined, (e: unknown) => e);
    expect((refused as Error).message).to.include('nothing was charged');
    await tasks.storeTaskResult(first.taskId, 'completed', { content: [{ type: 'text', text: 'x'.repeat(60) }] });
    expect(tasks.roomForResult()).to.equal(100 - 64);
    await new Promise((r) => setTimeout(r, 60));
    expect(await tasks.getTask(first.taskId)).to.be.null();
    expect(tasks.size).to.equal({ count: 0, bytes: 0 });
    expect(tasks.hasRoom()).to.be.true();
  });

  it('a task whose call charged nothing is kept only unchargedKeepMs after it ended, and its ttl says so; a paid one its whole ttl', async () => {
    const tasks = new ToolTasks({ ttlMs: 60_000, pollIntervalMs: 1000, unchargedKeepMs: 30 });
    const unpaid = await tasks.createTask({}, 1, request);
    const paid = await tasks.createTask({}, 2, request);
    await tasks.storeTaskResult(unpaid.taskId, 'failed', { isError: true, content: [], structuredContent: { x402Version: 2, accepts: [] } });
    await tasks.storeTaskResult(paid.taskId, 'completed', { content: [], _meta: { 'x402/payment-response': { success: true } } });
    expect((await tasks.getTask(unpaid.taskId))!.ttl!).to.be.below(1000);
    expect((await tasks.getTask(paid.taskId))!.ttl).to.equal(60_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(await tasks.getTask(unpaid.taskId)).to.be.null();
    expect(await tasks.getTask(paid.taskId)).to.not.be.null();
  });

  it('a result\'s bytes are the strings it carries', () => {
    expect(resultBytes({ content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] })).to.equal('image'.length + 4 + 'image/png'.length);
  });
});
