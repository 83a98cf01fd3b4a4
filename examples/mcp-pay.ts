// An agent's paid MCP call, end to end, with only the official MCP SDK client and the standard
// x402 client: list the tools, get a quote (the unpaid call), sign it, call again with the
// payment in _meta["x402/payment"], read the receipt from result._meta["x402/payment-response"].
//
//   npm start                                   # in another terminal: the service + local chains
//   node dist/examples/mcp-pay.js               # uses the embedded default's demo payer
//   BASE_URL=https://… PAYER_KEY=0x… node dist/examples/mcp-pay.js
import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { privateKeyToAccount } from 'viem/accounts';

// Anvil's well-known dev account #1: the embedded default's demo payer. Never a real key.
const DEMO_PAYER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

async function main() {
  const baseUrl = (process.env.BASE_URL ?? 'http://localhost:8080').replace(/\/$/, '');
  const client = new Client({ name: 'paydoc-example', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`)));

  const { tools } = await client.listTools();
  console.log(`${tools.length} tools: ${tools.map((t) => t.name).join(', ')}`);

  const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#2a6f97' } }).jpeg().toBuffer();
  const args = { file: { data: photo.toString('base64'), mediaType: 'image/jpeg' }, width: 320, format: 'webp' };

  // 1. Unpaid call: the result is a tool error whose structuredContent is the x402 PaymentRequired.
  const quote = await client.callTool({ name: 'svc_image_resize', arguments: args });
  const paymentRequired = quote.structuredContent as unknown as PaymentRequired;
  const offer = paymentRequired.accepts.find((a) => a.network.startsWith('eip155:'))!;
  console.log(`quote: ${offer.amount} atomic USDC on ${offer.network} to ${offer.payTo}`);

  // 2. Sign with the standard x402 client (Base only here) and call again with the payload in _meta.
  const payer = new x402Client();
  registerExactEvmScheme(payer, { signer: privateKeyToAccount((process.env.PAYER_KEY ?? DEMO_PAYER_KEY) as `0x${string}`) });
  const payment = await payer.createPaymentPayload({ ...paymentRequired, accepts: [offer] });
  const paid = await client.callTool({ name: 'svc_image_resize', arguments: args, _meta: { 'x402/payment': payment } });
  if (paid.isError) throw new Error(`the paid call failed: ${JSON.stringify(paid.structuredContent)}`);

  const receipt = paid._meta?.['x402/payment-response'] as SettleResponse;
  const image = (paid.content as Array<{ type: string; data: string; mimeType: string }>)[0];
  const meta = await sharp(Buffer.from(image.data, 'base64')).metadata();
  console.log(`result: ${image.mimeType} ${meta.width}x${meta.height}`);
  console.log(`receipt: ${receipt.success ? 'settled' : 'NOT settled'} on ${receipt.network}, transaction ${receipt.transaction}`);
  await client.close();
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
