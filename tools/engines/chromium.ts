// Chromium: typesets web pages as PDF (/v1/pdf/from-html), driven by playwright-core. One browser
// per job, its profile inside the job directory; it leads a process group of its own (Playwright
// starts it detached), killed whole at the job's deadline.
//
// The browser reaches nothing by itself. Every request of the page is intercepted (the caller's
// route) and answered or refused there; and because interception alone does not stop Chromium's
// own traffic (preconnects, DNS prefetch, background services, web sockets), the browser is also
// given a proxy of ours on loopback that refuses and counts every connection, and its host
// resolver is told that no name exists.
import { readdir, readFile } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import { chromium, type BrowserContext } from 'playwright-core';
import { declareEngine } from './declare.js';

export const CHROMIUM = declareEngine({ name: 'Chromium', commands: ['chromium'], package: 'chromium' });

/** Debian's launcher script: it adds the flags of /etc/chromium.d and runs the browser in its place (same pid). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The V8 heap of a page, in MB: a page's scripts cannot take more than this. */
export const PAGE_HEAP_MB = 512;

/** Flags beside Playwright's own defaults, each with its reason. */
export function chromiumFlags(proxyPort: number): string[] {
  return [
    // Everything the network stack sends goes to the refusing proxy, loopback included
    // (<-loopback> removes Chromium's implicit bypass for localhost and 127.0.0.1).
    `--proxy-server=http://127.0.0.1:${proxyPort}`,
    '--proxy-bypass-list=<-loopback>',
    // No host name resolves: nothing is looked up, even by a prefetch that slipped past the proxy.
    '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    '--dns-prefetch-disable',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-domain-reliability',
    '--disable-client-side-phishing-detection',
    '--disable-sync',
    '--disable-default-apps',
    '--disable-extensions',
    '--no-pings',
    '--no-first-run',
    '--disable-quic',
    '--disable-features=NetworkPrediction,NetworkServiceInProcess2,MediaRouter,OptimizationHints,Translate,AutofillServerCommunication',
    // Containers give /dev/shm 64 MB; the profile's directory takes the shared memory files instead.
    '--disable-dev-shm-usage',
    '--disable-gpu',
    // One renderer: a page cannot multiply the browser's memory by opening frames of other sites.
    '--renderer-process-limit=1',
    `--js-flags=--max-old-space-size=${PAGE_HEAP_MB}`,
  ];
}

/** A loopback proxy that refuses every connection with 403 and counts them. */
export interface RefusingProxy {
  port: number;
  /** Connections the browser made to it (each refused). */
  refused(): number;
  close(): Promise<void>;
}

export async function startRefusingProxy(): Promise<RefusingProxy> {
  let refused = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    refused += 1;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => { /* the browser hung up first */ });
    socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    refused: () => refused,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      for (const socket of open) socket.destroy();
    }),
  };
}

export interface LaunchOptions {
  /** The browser's profile, inside the job directory: killChromiumUsing finds the browser by it. */
  profileDir: string;
  proxyPort: number;
  javascript: boolean;
  /** The whole launch's deadline. */
  timeoutMs: number;
}

/** A browser with one empty context: no service workers, no downloads, JavaScript as asked. */
export async function launchChromium(options: LaunchOptions): Promise<BrowserContext> {
  return chromium.launchPersistentContext(options.profileDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    // Chromium's sandbox needs user namespaces, which containers usually withhold; the browser
    // reaches nothing (the proxy and resolver rules above) and runs with the service's rights.
    chromiumSandbox: false,
    args: chromiumFlags(options.proxyPort),
    env: { PATH: '/usr/bin:/bin', HOME: options.profileDir, LANG: 'C.UTF-8', TMPDIR: options.profileDir },
    javaScriptEnabled: options.javascript,
    serviceWorkers: 'block',
    acceptDownloads: false,
    bypassCSP: false,
    offline: false,
    timeout: options.timeoutMs,
    // Playwright's own signal handlers would outlive the job; the job kills the browser itself.
    handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false,
  });
}

/**
 * Kills every browser process started with this profile, and its process group: the job's
 * deadline and a worker's teardown use it. Found by the profile on their command line, since
 * Playwright does not say which process it started. Returns how many processes it killed.
 */
export async function killChromiumUsing(profileDir: string): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return 0;
  }
  const marker = `--user-data-dir=${profileDir}`;
  let killed = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = await readFile(`/proc/${entry}/cmdline`, 'latin1');
    } catch {
      continue;
    }
    if (!cmdline.split('\0').includes(marker)) continue;
    const pid = Number(entry);
    try { process.kill(-pid, 'SIGKILL'); } catch { /* not a group leader */ }
    try { process.kill(pid, 'SIGKILL'); killed += 1; } catch { /* already gone */ }
  }
  return killed;
}
