// The bridge as an MCP server: configured from the environment, connected to the service's /mcp, it
// offers the service's tools (bridged: local paths, paid here) and answers each call through a Bridge.
// The caller connects it to a transport (bin/mcp-bridge.ts: stdio).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { toUsd } from '../../core/usd.js';
import { VERSION } from '../../core/version.js';
import { channelOptions, createPayer } from '../payer.js';
import { Bridge, type Payers, type Progress } from './bridge.js';
import { evmChainFor } from './chain.js';
import { FilesRoot } from './local-files.js';
import { shown, toolError } from './refusal.js';
import { readSettings } from './settings.js';
import { bridgedTool } from './tools.js';

export interface BridgeServer {
  server: Server;
  /** The line the bridge logs once serving: where from, on what, within which caps. */
  started: string;
  /** Closes the connection to the service (the server is closed by its transport's owner). */
  close(): Promise<void>;
}

/** Reads the environment, connects to the service and makes the server; throws a message naming what is wrong. */
export async function createBridgeServer(env: NodeJS.ProcessEnv = process.env): Promise<BridgeServer> {
  const settings = readSettings(env);
  const root = await FilesRoot.open(settings.filesRoot);
  const families = new Set(settings.networks.map((n) => n.family));
  // The standard client's own per-payment cap, which defaults to 1 USD, follows MAX_USD_PER_CALL.
  const maxUsd = toUsd(settings.perCall);
  // x402's channel scheme asks the bridge before it signs a deposit; the bridge is made below.
  let bridge: Bridge | undefined;
  const channel = settings.channelDeposit === undefined ? undefined : {
    ...channelOptions(settings.channelDeposit, env), approveDeposit: (deposit: bigint) => bridge!.approveDeposit(deposit),
  };
  const payers: Payers = {
    ...(families.has('evm')
      ? { evm: await createPayer({ chain: 'base', evmKey: env.PAYER_KEY, maxUsd, ...(channel ? { channel } : {}) }) }
      : {}),
    ...(families.has('svm')
      ? { svm: await createPayer({ chain: 'solana', svmKey: env.SVM_PAYER_KEY, svmRpcUrl: env.SVM_RPC_URL, maxUsd }) }
      : {}),
  };
  const upstream = new Client({ name: 'paydoc-mcp', version: VERSION });
  try {
    await upstream.connect(new StreamableHTTPClientTransport(new URL(`${settings.url}/mcp`)));
  } catch (err) {
    throw new Error(`cannot reach the service at ${settings.url}/mcp: ${err instanceof Error ? err.message : String(err)}`);
  }
  const { tools } = await upstream.listTools();
  const offered = tools.map(bridgedTool);
  bridge = new Bridge(settings, root, upstream, payers, await evmChainFor(settings.networks, env));
  const networks = settings.networks.map((n) => n.network).join(', ');
  const paysFor = `This bridge pays for you from its own wallet, in USDC on ${networks}: call a tool once, with local files as `
    + `{ "path": "…" } inside ${root.name}. It quotes first and refuses, without signing anything, a price above `
    + `${toUsd(settings.perCall)} USD per call or beyond ${toUsd(settings.total)} USD in all. File results are written to a `
    + 'local folder and returned as paths.';

  const server = new Server(
    { name: 'paydoc-mcp', version: VERSION, title: 'paydoc through a paying bridge' },
    {
      capabilities: { tools: {} },
      instructions: [
        upstream.getInstructions() ?? '',
        paysFor,
        ...(settings.channelDeposit !== undefined
          ? [`On Base it pays through a payment channel: a deposit of ${toUsd(settings.channelDeposit)} USD when the channel runs short `
            + '(counted in the total), then a signed voucher per call, with no transaction.']
          : []),
      ].filter(Boolean).join('\n\n'),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: offered }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const tool = offered.find((t) => t.name === req.params.name);
    if (!tool) return toolError(`no tool named "${req.params.name.slice(0, 40)}"`);
    const token = req.params._meta?.progressToken;
    const forward: Progress | undefined = token === undefined ? undefined : (p) => {
      void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...p } }).catch(() => undefined);
    };
    const started = Date.now();
    try {
      const result = await bridge.call(req.params.name, tool.outputSchema === undefined, req.params.arguments, forward);
      const outcome = result.isError ? 'refused or failed' : 'ok';
      process.stderr.write(`paydoc-mcp: ${shown(req.params.name)} ${outcome} in ${Date.now() - started} ms\n`);
      return result;
    } catch (err) {
      return toolError(`the call failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  const through = channel ? ` (on Base through a channel, deposits of ${toUsd(channel.deposit)} USD, state in ${channel.directory})` : '';
  const started = `${tools.length} tools from ${settings.url}, paying in USDC on ${networks}${through} `
    + `up to ${toUsd(settings.perCall)} USD per call and ${toUsd(settings.total)} USD in all; files read from ${root.name}`;
  return { server, started, close: () => upstream.close() };
}
