// The official MCP conformance suite (@modelcontextprotocol/conformance) against /mcp on the real
// service. The suite needs Node 22 or later and the machine's Node may be older, so the test fetches
// the npm registry's Node binary package (node-<platform>-<arch>, an exact version) into the
// gitignored .cache/ folder once and runs the suite's CLI with that binary; the machine's Node is
// untouched and nothing lands in node_modules/.bin (where a `node` would shadow the machine's for
// every npm script). A failed fetch fails the tests with npm's own words: there is no skip.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { startTestService, type TestService } from '../support/service.js';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const suiteDir = path.join(root, 'node_modules', '@modelcontextprotocol', 'conformance');
const suiteCli = path.join(suiteDir, 'dist', 'index.js');

// Pinned so that every run (and CI) uses the same binary; any 22.x or later runs the suite.
const NODE_VERSION = '22.23.3';
const NODE_PACKAGE = `node-${process.platform}-${process.arch}`;
const nodeCache = path.join(root, '.cache', `${NODE_PACKAGE}-${NODE_VERSION}`);
const nodeBinary = path.join(nodeCache, 'node_modules', NODE_PACKAGE, 'bin', 'node');

/**
 * Every server scenario of the suite, classified. `applicable`: must pass against /mcp. `divergent`:
 * runs, and must fail exactly for the stated reason (the check below asserts that reason, so a
 * change on either side shows). `not-applicable`: not run, with why. The test compares this table
 * with the suite's own list, so a scenario added by a later version fails until it is classified.
 */
type Classification =
  | { kind: 'applicable'; checks: string[] }
  | { kind: 'divergent'; reason: string; failure: RegExp }
  | { kind: 'not-applicable'; reason: string };

const FIXTURE = 'calls a fixture tool of the SDKs\' reference "everything" server';
const SESSION = 'needs an Mcp-Session-Id: this server is stateless and issues none, so the scenario stops with a warning before testing anything';
const SCENARIOS: Record<string, Classification> = {
  'server-initialize': { kind: 'applicable', checks: ['server-initialize'] },
  ping: { kind: 'applicable', checks: ['ping'] },
  'tools-list': { kind: 'applicable', checks: ['tools-list'] },
  'dns-rebinding-protection': { kind: 'applicable', checks: ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted'] },
  'tools-call-error': {
    kind: 'divergent',
    reason: `${FIXTURE} (test_error_handling) and expects a tool result with isError; an unknown tool is a JSON-RPC -32602 protocol error here, as MCP 2025-11-25 says (tool errors with isError are covered in mcp.test.ts)`,
    failure: /MCP error -32602: no tool named "test_error_handling"/,
  },
  'logging-set-level': { kind: 'not-applicable', reason: 'the server declares no logging capability (it sends no log notifications)' },
  'completion-complete': { kind: 'not-applicable', reason: 'completions complete prompt and resource-template arguments; the server offers neither' },
  'tools-call-simple-text': { kind: 'not-applicable', reason: `${FIXTURE} (test_simple_text)` },
  'tools-call-image': { kind: 'not-applicable', reason: `${FIXTURE} (test_image_content); image results are covered in mcp.test.ts` },
  'tools-call-audio': { kind: 'not-applicable', reason: `${FIXTURE} (test_audio_content); no tool returns audio` },
  'tools-call-embedded-resource': { kind: 'not-applicable', reason: `${FIXTURE} (test_embedded_resource); PDF and ZIP results as embedded resources are covered in mcp.test.ts` },
  'tools-call-mixed-content': { kind: 'not-applicable', reason: `${FIXTURE} (test_multiple_content_types)` },
  'tools-call-with-logging': { kind: 'not-applicable', reason: `${FIXTURE} (test_tool_with_logging); the server sends no log notifications` },
  'tools-call-with-progress': { kind: 'not-applicable', reason: `${FIXTURE} (test_tool_with_progress); progress on long paid calls is covered in mcp.test.ts` },
  'tools-call-sampling': { kind: 'not-applicable', reason: `${FIXTURE} (test_sampling) that asks the client for LLM sampling (sampling/createMessage): no tool here asks the client for anything; every input comes as an argument` },
  'tools-call-elicitation': { kind: 'not-applicable', reason: `${FIXTURE} (test_elicitation) that asks the client for input (elicitation/create): no tool here asks the client for anything; every input comes as an argument` },
  'elicitation-sep1034-defaults': { kind: 'not-applicable', reason: `${FIXTURE} (test_elicitation_sep1034_defaults) that elicits input from the client; no tool here asks the client for anything` },
  'elicitation-sep1330-enums': { kind: 'not-applicable', reason: `${FIXTURE} (test_elicitation_sep1330_enums) that elicits input from the client; no tool here asks the client for anything` },
  'json-schema-2020-12': { kind: 'not-applicable', reason: `${FIXTURE} (json_schema_2020_12_tool) whose inputSchema carries $schema, $defs and additionalProperties; pending in the suite` },
  'server-sse-polling': { kind: 'not-applicable', reason: `${FIXTURE} (test_reconnection) that closes its SSE stream mid-call for a GET resumption with Last-Event-ID; ${SESSION}; GET is 405 here; pending in the suite` },
  'server-sse-multiple-streams': { kind: 'not-applicable', reason: SESSION },
  'resources-list': { kind: 'not-applicable', reason: 'no resources: the server offers tools only' },
  'resources-read-text': { kind: 'not-applicable', reason: 'no resources: the server offers tools only' },
  'resources-read-binary': { kind: 'not-applicable', reason: 'no resources: the server offers tools only' },
  'resources-templates-read': { kind: 'not-applicable', reason: 'no resources: the server offers tools only' },
  'resources-subscribe': { kind: 'not-applicable', reason: 'no resources, and subscriptions need a session: the server is stateless and offers tools only' },
  'resources-unsubscribe': { kind: 'not-applicable', reason: 'no resources, and subscriptions need a session: the server is stateless and offers tools only' },
  'prompts-list': { kind: 'not-applicable', reason: 'no prompts: the server offers tools only' },
  'prompts-get-simple': { kind: 'not-applicable', reason: 'no prompts: the server offers tools only' },
  'prompts-get-with-args': { kind: 'not-applicable', reason: 'no prompts: the server offers tools only' },
  'prompts-get-embedded-resource': { kind: 'not-applicable', reason: 'no prompts: the server offers tools only' },
  'prompts-get-with-image': { kind: 'not-applicable', reason: 'no prompts: the server offers tools only' },
};

interface Check { id: string; name: string; description: string; status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string; errorMessage?: string; details?: unknown }

function runProcess(
  cmd: string, args: string[], options: { cwd: string; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Asynchronous on purpose: the service under test runs in this same process and must keep answering.
    const child = spawn(cmd, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

const tail = (text: string) => text.trim().split('\n').slice(-15).join('\n');

async function nodeVersionOf(binary: string): Promise<string | undefined> {
  if (!existsSync(binary)) return undefined;
  const r = await runProcess(binary, ['--version'], { cwd: root, timeoutMs: 30_000 }).catch(() => undefined);
  return r?.code === 0 ? r.stdout.trim() : undefined;
}

/** The cached Node binary, fetched from the npm registry on first use. Throws with the reason when it cannot be had. */
async function node22(): Promise<{ binary: string; fetchedMs?: number }> {
  if (await nodeVersionOf(nodeBinary) === `v${NODE_VERSION}`) return { binary: nodeBinary };
  const started = performance.now();
  // Into a folder of its own, renamed into place only once complete, so that an interrupted
  // fetch never leaves a half-written binary that later runs would trust.
  await mkdir(path.dirname(nodeCache), { recursive: true });
  const partial = await mkdtemp(`${nodeCache}.partial-`);
  try {
    const npm = await runProcess('npm', ['install', '--prefix', partial, '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', `${NODE_PACKAGE}@${NODE_VERSION}`], { cwd: partial, timeoutMs: 280_000 });
    if (npm.code !== 0) {
      throw new Error(`could not fetch Node ${NODE_VERSION} for the MCP conformance suite: "npm install ${NODE_PACKAGE}@${NODE_VERSION}" exited with ${npm.code}\n${tail(npm.stderr || npm.stdout)}`);
    }
    const fetched = path.join(partial, 'node_modules', NODE_PACKAGE, 'bin', 'node');
    const version = await nodeVersionOf(fetched);
    if (version !== `v${NODE_VERSION}`) throw new Error(`the fetched ${NODE_PACKAGE}@${NODE_VERSION} does not run: ${fetched} --version gave ${version ?? 'nothing'}`);
    await rm(nodeCache, { recursive: true, force: true });
    await rename(partial, nodeCache);
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  return { binary: nodeBinary, fetchedMs: Math.round(performance.now() - started) };
}

describe('MCP conformance (the official @modelcontextprotocol/conformance suite against /mcp)', () => {
  let t: TestService;
  let node: string;
  let results: string;

  before({ timeout: 300_000 }, async () => {
    const got = await node22();
    node = got.binary;
    // The fetch time goes to the test output, for whoever watches how long the suite takes.
    console.log(got.fetchedMs === undefined ? `conformance: Node ${NODE_VERSION} from ${path.relative(root, nodeCache)}` : `conformance: fetched Node ${NODE_VERSION} into ${path.relative(root, nodeCache)} in ${got.fetchedMs} ms`);
    results = await mkdtemp(path.join(os.tmpdir(), 'paydoc-conformance-'));
    t = await startTestService();
  });
  after(async () => {
    await t?.stop();
    if (results) await rm(results, { recursive: true, force: true });
  });

  /** Runs one server scenario with the suite's CLI and returns the checks it recorded. */
  async function scenario(name: string): Promise<{ checks: Check[]; code: number | null; output: string; ms: number }> {
    const out = await mkdtemp(path.join(results, `${name}-`));
    const started = performance.now();
    const r = await runProcess(node, [suiteCli, 'server', '--url', `${t.url}/mcp`, '--scenario', name, '--output-dir', out], { cwd: out, timeoutMs: 100_000 });
    const ms = Math.round(performance.now() - started);
    const dirs = await readdir(out);
    if (dirs.length !== 1) throw new Error(`conformance ${name}: expected one result folder, found ${JSON.stringify(dirs)} (exit ${r.code})\n${tail(r.stderr || r.stdout)}`);
    const checks = JSON.parse(await readFile(path.join(out, dirs[0], 'checks.json'), 'utf8')) as Check[];
    return { checks, code: r.code, output: r.stdout + r.stderr, ms };
  }

  it('every server scenario of the installed suite is classified here, and no classified one is gone', { timeout: 60_000 }, async () => {
    const version = (JSON.parse(readFileSync(path.join(suiteDir, 'package.json'), 'utf8')) as { version: string }).version;
    const listed = await runProcess(node, [suiteCli, 'list', '--server'], { cwd: root, timeoutMs: 50_000 });
    expect(listed.code, tail(listed.stderr)).to.equal(0);
    // Lines "  - <name> [<spec versions>]" under "Server scenarios".
    const names = [...listed.stdout.matchAll(/^\s+- (\S+)(?: \[[^\]]*\])?$/gm)].map((m) => m[1]);
    expect(names.length, listed.stdout).to.be.above(20);
    const unclassified = names.filter((n) => !(n in SCENARIOS));
    const gone = Object.keys(SCENARIOS).filter((n) => !names.includes(n));
    expect(unclassified, `@modelcontextprotocol/conformance ${version} has server scenarios not classified in test/system/mcp-conformance.test.ts: ${unclassified.join(', ')}`).to.equal([]);
    expect(gone, `classified but no longer in @modelcontextprotocol/conformance ${version}: ${gone.join(', ')}`).to.equal([]);
  });

  for (const [name, classification] of Object.entries(SCENARIOS)) {
    if (classification.kind === 'applicable') {
      it(`${name} passes: ${classification.checks.join(', ')}`, { timeout: 120_000 }, async () => {
        const { checks, code, output, ms } = await scenario(name);
        console.log(`conformance: ${name} ${ms} ms, ${checks.map((c) => `${c.id} ${c.status}`).join(', ')}`);
        const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
        // Each failing check with the suite's own message (the CLI's output after it is the scenario's description).
        expect(bad.map((c) => `${c.status} ${c.id}: ${c.description}${c.errorMessage ? ` — ${c.errorMessage}` : ''}`), `conformance ${name} failed`).to.equal([]);
        // The checks this scenario is known to make, each a success: a scenario that silently
        // stopped checking (no checks at all, or fewer) fails here instead of passing vacuously.
        expect(checks.filter((c) => c.status === 'SUCCESS').map((c) => c.id).sort()).to.equal([...classification.checks].sort());
        expect(code, tail(output)).to.equal(0);
      });
    } else if (classification.kind === 'divergent') {
      it(`${name} runs and fails only for the classified reason: ${classification.reason}`, { timeout: 120_000 }, async () => {
        const { checks, output, ms } = await scenario(name);
        console.log(`conformance: ${name} ${ms} ms, ${checks.map((c) => `${c.id} ${c.status}: ${c.errorMessage ?? ''}`).join(', ')}`);
        const failures = checks.filter((c) => c.status === 'FAILURE');
        expect(failures.length, tail(output)).to.equal(1);
        expect(failures[0].errorMessage ?? '').to.match(classification.failure);
        expect(checks.filter((c) => c.status === 'WARNING')).to.equal([]);
      });
    }
  }
});
