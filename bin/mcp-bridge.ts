#!/usr/bin/env node
// A paying MCP bridge over stdio, for MCP hosts (desktop chat apps, IDE agents) that cannot pay
// and should not move megabytes of base64 through a conversation. It serves the service's tools
// with the official SDK; a file argument may be a local { path } inside one folder; every call is
// quoted first and paid from the configured wallet only in canonical USDC on the configured
// networks and within two caps; results that are files are written into OUTPUT_DIR and returned
// as their paths. The upstream is not trusted: what it names, offers and answers is checked here.
// Its logic is in client/bridge/ (docs/mcp.md describes it); this entry serves it over stdio.
//
//   PAYDOC_URL=https://… PAYER_KEY=0x… node dist/bin/mcp-bridge.js
//   PAYDOC_URL=https://… SVM_PAYER_KEY=… SVM_RPC_URL=https://… node dist/bin/mcp-bridge.js
//   PAYDOC_URL=https://… PAYER_KEY=0x… CHANNEL_DEPOSIT_USD=1 node dist/bin/mcp-bridge.js   (through a channel on Base)
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
// Only the client layer and the core: the bridge ships as paydoc-mcp and loads nothing of the
// service (test/layers.test.ts walks its imports).
import { createBridgeServer } from '../client/bridge/server.js';

async function startBridge(): Promise<void> {
  const { server, started } = await createBridgeServer(process.env);
  await server.connect(new StdioServerTransport());
  process.stderr.write(`paydoc-mcp: ${started}\n`);
}

startBridge().catch((err) => {
  process.stderr.write(`paydoc-mcp: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
