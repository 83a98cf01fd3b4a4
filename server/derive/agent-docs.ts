// What agents and x402 crawlers read first: the discovery document at /.well-known/x402 (the
// paid resources as full URLs) and /llms.txt (the service, its prices and how to pay, in
// Markdown). Both derived from the operation table, like the catalog and OpenAPI.
import { operations } from '../../operations/index.js';
import { priceRange } from '../payment/pricing.js';
import { toUsd } from '../../core/usd.js';
import { resolveContent } from '../content-route.js';
import { channelSentence, type PublicView } from './view.js';

export function wellKnownX402(app: PublicView): { version: 1; resources: string[]; instructions?: string } {
  const channels = channelSentence(app);
  const resources = operations.map((op) => `${app.config.baseUrl}${op.path}`);
  return channels ? { version: 1, resources, instructions: channels } : { version: 1, resources };
}

export function llmsTxt(app: PublicView): string {
  const base = app.config.baseUrl;
  // URL_INPUTS=off turns off files by URL and pushes to deliver_to.
  const urls = app.config.urlInputs === 'on';
  const price = (op: (typeof operations)[number]) => {
    const { min, max } = priceRange(op);
    return op.price.model === 'flat' ? `${toUsd(min)} USD per call` : `${toUsd(min)} USD per page${max !== undefined ? ` (at most ${toUsd(max)} USD)` : ''}`;
  };
  // Whether the file leaves this server is what a buyer of the four model operations needs to know.
  const where = (op: (typeof operations)[number]) => {
    const { forProvider, sendsContent } = resolveContent(app.config, op);
    return !forProvider ? '' : sendsContent ? ' Sends the file\'s content to a third-party model provider.' : ' Runs on this server: the file\'s content is sent to no third party.';
  };
  return [
    '# paydoc',
    '',
    `> Pay-per-call image, PDF and Office document processing: ${operations.length} operations over HTTP (JSON or multipart/form-data) and MCP, each call paid on its own with x402 version 2 in USDC. No accounts and no API keys; files are never stored or logged.`,
    '',
    '## How to call',
    '',
    urls
      ? '- Every operation is a POST to its URL below. Send JSON in the shape of the MCP tool\'s arguments: `{"file": {"url": "https://…"}, "<field>": value, …}` (the service fetches the file), or `{"file": {"data": "<standard base64>"}}` for a file you hold; the merges take `"files": [ … ]`, in order.'
      : '- Every operation is a POST to its URL below. Send JSON in the shape of the MCP tool\'s arguments: `{"file": {"data": "<standard base64>"}, "<field>": value, …}`; the merges take `"files": [ … ]`, in order.',
    `- Or send multipart/form-data: a \`file\` part (repeated for the merges)${urls ? ', or a `file_url` field in its place,' : ''} and the fields as text.`,
    `- The result comes back in the answer (\`delivery\`: \`inline\`, the default). With \`"delivery": "link"\` the answer is JSON \`{"result": {"url", "mediaType", "bytes", "sha256", "expiresAt"}}\`: GET the url once within ${app.config.resultLinkTtlS} s.`,
    ...(urls ? ['- With `"deliver_to": "<https URL>"` (a presigned upload URL, say) the result is PUT there and the answer is `{"delivered": {"status", "bytes", "sha256", "mediaType"}}`; the call is charged only after that URL accepted it.'] : []),
    '',
    '## How to pay',
    '',
    `- POST the request without payment: every check runs first (sizes, fields, file type, page and pixel limits), then a 402 answers with a PAYMENT-REQUIRED header (base64 JSON PaymentRequired) offering ${app.gate.chains.map((c) => c.network).join(' and ')}.`,
    '- Sign one offer and send the identical request again with the PAYMENT-SIGNATURE header; any standard x402 v2 client (for example `wrapFetchWithPayment` from `@x402/fetch`) does both steps.',
    '- A 200 carries the result and a PAYMENT-RESPONSE receipt. Nothing is charged for a request that fails, and a client that leaves before settlement is not charged.',
    ...(channelSentence(app) ? [`- ${channelSentence(app)} Register x402's batch-settlement client scheme (\`@x402/evm/batch-settlement/client\`) beside exact.`] : []),
    '- A POST with no body (or the JSON {}) is a price probe: a 402 with the minimum price.',
    `- Long jobs: add the header \`Prefer: respond-async\` to the paid request and it is answered 202 once the payment is verified, with \`Location: ${base}/v1/jobs/<token>\`; GET that until \`job.state\` is \`done\` (with \`job.result\`, a one-time link) or \`failed\` (with \`job.error\`, nothing charged). Over MCP, add \`"task": {}\` to tools/call and read tasks/get and tasks/result.`,
    `- MCP: \`${base}/mcp\` (stateless streamable HTTP); the payment goes in \`_meta["x402/payment"]\` of tools/call.`,
    '',
    '## Operations',
    '',
    ...operations.map((op) => `- [${op.title}](${base}${op.path}): ${price(op)}. MCP tool \`${op.tool}\`.${where(op)}`),
    '',
    '## More',
    '',
    `- [OpenAPI](${base}/openapi.json): every field, bound, default and status.`,
    `- [Catalog](${base}/v1/discovery): the paid endpoints with their live prices.`,
    `- [x402 discovery](${base}/.well-known/x402)`,
    '',
  ].join('\n');
}
