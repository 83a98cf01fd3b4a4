// The embedded channel store: what an update writes is on the disk when it returns, a second
// process cannot take a folder a live one owns, and what a killed process left (its temporary
// files, the reservations of its requests) is cleared when the folder is opened again.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Channel } from '@x402/evm/batch-settlement/server';
import { ChannelStoreInUseError, FileChannelStore } from '../../../../../server/payment/channels/file-store.js';

export const lab = Lab.script();
const { describe, it, beforeEach, afterEach } = lab;
const { expect } = Code;

const ID = `0x${'ab'.repeat(32)}`;
const channel = (charged: string, pending?: Channel['pendingRequest']): Channel => ({
  channelId: ID,
  channelConfig: {
    payer: '0x1111111111111111111111111111111111111111', payerAuthorizer: '0x1111111111111111111111111111111111111111',
    receiver: '0x2222222222222222222222222222222222222222', receiverAuthorizer: '0x3333333333333333333333333333333333333333',
    token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', withdrawDelay: 900, salt: `0x${'00'.repeat(32)}`,
  },
  chargedCumulativeAmount: charged, signedMaxClaimable: charged, signature: '0x00', balance: '100000', totalClaimed: '0',
  withdrawRequestedAt: 0, refundNonce: 0, lastRequestTimestamp: 1, ...(pending ? { pendingRequest: pending } : {}),
});

describe('server/payment/channels/file-store', () => {
  let dir: string;
  beforeEach(async () => { dir = await mkdtemp(path.join(os.tmpdir(), 'paydoc-store-')); });
  afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

  it('an update is a whole file on the disk when it returns; reading it back gives the same record; a deletion removes it', async () => {
    const store = FileChannelStore.open(dir);
    const written = await store.updateChannel(ID.toUpperCase().replace('0X', '0x'), () => channel('5000'));
    expect(written.status).to.equal('updated');
    expect(JSON.parse(await readFile(path.join(dir, `${ID}.json`), 'utf8'))).to.equal(channel('5000'));
    expect(await FileChannelStore.open(dir).get(ID)).to.equal(channel('5000'));
    expect((await store.updateChannel(ID, (current) => current)).status).to.equal('unchanged');
    expect((await store.updateChannel(ID, () => undefined)).status).to.equal('deleted');
    expect(await store.list()).to.equal([]);
    expect((await readdir(dir)).filter((name) => !name.startsWith('.'))).to.equal([]);
  });

  it('updates of one channel run one after another: 50 concurrent increments all count', async () => {
    const store = FileChannelStore.open(dir);
    await store.updateChannel(ID, () => channel('0'));
    const chargeOneMore = (c: Channel | undefined) => ({ ...c!, chargedCumulativeAmount: String(BigInt(c!.chargedCumulativeAmount) + 1n) });
    await Promise.all(Array.from({ length: 50 }, () => store.updateChannel(ID, chargeOneMore)));
    expect((await store.get(ID))!.chargedCumulativeAmount).to.equal('50');
  });

  it('refuses a folder a live process owns, and takes over one whose owner died, clearing its temporary files and reservations', async () => {
    const owner = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    await writeFile(path.join(dir, '.owner'), String(owner.pid));
    expect(() => FileChannelStore.open(dir)).to.throw(ChannelStoreInUseError, /in use by process/);
    owner.kill('SIGKILL');
    await once(owner, 'exit');
    await writeFile(path.join(dir, `${ID}.json`), JSON.stringify(channel('10000', { pendingId: 'p', signedMaxClaimable: '15000', expiresAt: Date.now() + 300_000 })));
    await writeFile(path.join(dir, `${ID}.999.tmp`), '{"half');
    const store = FileChannelStore.open(dir);
    const reopened = await store.get(ID);
    expect(reopened!.chargedCumulativeAmount).to.equal('10000');
    expect(reopened!.pendingRequest).to.be.undefined();
    expect((await readdir(dir)).some((name) => name.endsWith('.tmp'))).to.be.false();
  });

  it('refuses a channel id that is not 32 bytes in hex (no path can be made of it)', async () => {
    const store = FileChannelStore.open(dir);
    await expect(store.get('../../etc/passwd')).to.reject(/32 bytes in hex/);
  });
});
