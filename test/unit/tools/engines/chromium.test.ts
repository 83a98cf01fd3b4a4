// The Chromium engine: what interception would miss (a page loaded with no route at all, loopback
// included) reaches only the refusing proxy, which counts it, and never the server it was meant
// for; the browser is found by its profile and killed with its process group.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromiumFlags, killChromiumUsing, launchChromium, startRefusingProxy } from '../../../../tools/engines/chromium.js';
import { inScratch } from './support.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('the Chromium engine', () => {
  it('sends everything to the proxy, loopback included, and turns off prefetching and background traffic', () => {
    const flags = chromiumFlags(4321);
    expect(flags).to.include(['--proxy-server=http://127.0.0.1:4321', '--proxy-bypass-list=<-loopback>', '--dns-prefetch-disable',
      '--disable-background-networking', '--disable-component-update']);
  });

  it('a page with no interception reaches only the refusing proxy; the browser is killed by its profile', { timeout: 60_000 }, async () => {
    let reached = 0;
    const target = http.createServer((_req, res) => res.end('<p>reached</p>'));
    target.on('connection', () => { reached += 1; });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const port = (target.address() as AddressInfo).port;
    const proxy = await startRefusingProxy();
    try {
      await inScratch(async (dir) => {
        const profileDir = path.join(dir, 'profile');
        const context = await launchChromium({ profileDir, proxyPort: proxy.port, javascript: true, timeoutMs: 30_000 });
        const page = context.pages()[0] ?? await context.newPage();
        const failure = await page.goto(`http://127.0.0.1:${port}/`, { timeout: 20_000 }).then(() => undefined, (err: Error) => err.message);
        expect(failure).to.match(/ERR_TUNNEL_CONNECTION_FAILED|ERR_PROXY|ERR_HTTP_RESPONSE_CODE_FAILURE|ERR_INVALID_RESPONSE/);
        expect(await killChromiumUsing(profileDir)).to.be.at.least(1);
        expect(await killChromiumUsing(profileDir)).to.equal(0);
      });
      expect(reached).to.equal(0);
      expect(proxy.refused()).to.be.at.least(1);
    } finally {
      await proxy.close();
      target.closeAllConnections();
      await new Promise((resolve) => target.close(resolve));
    }
  });
});
