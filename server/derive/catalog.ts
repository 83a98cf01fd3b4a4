// GET /v1/discovery: the catalog in the specification's shape, with live prices from the
// operation table and the configured chains.
import { operations } from '../../operations/index.js';
import type { Operation } from '../../operations/define.js';
import { formJsonSchema } from './fields.js';
import { outputMediaTypes } from './resources.js';
import { priceRange } from '../payment/pricing.js';
import { toUsd } from '../../core/usd.js';
import { PAYMENT_META_KEY } from '../../core/protocol.js';
import { MAX_TIMEOUT_SECONDS } from '../payment/gate.js';
import { resolveContent } from '../content-route.js';
import { operationDescription } from './descriptions.js';
import { channelSentence, paymentSchemes, type PublicView } from './view.js';

export const MCP_PROTOCOL_VERSION = '2025-11-25';

function pricingNote(op: Operation): string | undefined {
  const parts: string[] = [];
  if (op.price.model === 'per-page') {
    const { max } = priceRange(op);
    parts.push(`amount is per page; the charge is ${toUsd(BigInt(op.price.rate))} USD times the page count${op.input.count.max > 1 ? ' summed over all files' : ''}`);
    if (max !== undefined) parts.push(`at most ${toUsd(max)} USD`);
  }
  if (op.price.note) parts.push(op.price.note);
  return parts.length ? parts.join('; ') : undefined;
}

/** For an operation declared for the model provider: whether content leaves here, to what, and whether it runs. */
export function thirdPartyInfo(op: Operation, app: PublicView): Record<string, unknown> | undefined {
  const { forProvider, localEngine, available } = resolveContent(app.config, op);
  if (!forProvider) return undefined;
  return localEngine
    ? { sendsContent: false, ...localEngine.named(app.config), available }
    : { sendsContent: true, provider: 'OpenAI-compatible model provider', available, ...(available ? {} : { unavailableReason: 'the model provider is not configured on this deployment (answers 503)' }) };
}

/** For an operation that can read scanned pages: whether this deployment does, and with what. */
export function scannedPagesInfo(op: Operation, app: PublicView): Record<string, unknown> | undefined {
  const { scans } = resolveContent(app.config, op);
  if (!scans) return undefined;
  return scans.engine
    ? { read: true, sendsContent: false, ...scans.engine.named(app.config) }
    : { read: false, note: 'each page without a text layer is answered with a note that OCR is needed' };
}

export function catalogItem(op: Operation, app: PublicView): Record<string, unknown> {
  const rate = BigInt(op.price.rate);
  const thirdParty = thirdPartyInfo(op, app);
  const note = pricingNote(op);
  const channel = app.gate.channelTerms;
  return {
    accepts: paymentSchemes(app).map(({ scheme, network }) => ({
      amount: rate.toString(),
      asset: 'USDC',
      maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
      network,
      payTo: app.gate.chains.find((chain) => chain.network === network)!.payTo,
      scheme,
      ...(scheme === 'batch-settlement' && channel ? { extra: { receiverAuthorizer: channel.receiverAuthorizer, withdrawDelay: channel.withdrawDelay } } : {}),
    })),
    category: op.category,
    metadata: {
      bodyType: 'multipart/form-data',
      description: operationDescription(op, app),
      inputSchema: formJsonSchema(op),
      // Image outputs already name their types in the description.
      output: op.output.mediaType === 'image' ? op.output.description : `${op.output.description} (${outputMediaTypes(op).join(', ')})`,
      priceUsd: toUsd(rate),
      pricingModel: op.price.model,
      ...(note ? { pricingNote: note } : {}),
      ...(thirdParty ? { thirdParty } : {}),
      ...(scannedPagesInfo(op, app) ? { scannedPages: scannedPagesInfo(op, app) } : {}),
      // The JSON beside a file result, and the response header that carries it.
      ...(op.output.report ? { report: { header: op.output.report.header, description: op.output.report.description } } : {}),
      mcpTool: op.tool,
    },
    method: 'POST',
    resource: `${app.config.baseUrl}${op.path}`,
    type: 'http',
    x402Version: 2,
  };
}

export function catalog(app: PublicView): Record<string, unknown> {
  const channel = app.gate.channelTerms;
  return {
    x402Version: 2,
    service: {
      name: 'paydoc',
      description: `Pay-per-call image, PDF and Office document processing: ${operations.length} operations over HTTP (multipart or JSON) and MCP, each paid on its own with x402 v2 in USDC. No accounts, no API keys; files are never stored or logged.`,
      // The ways a file comes in and a result goes out, on every operation (docs/files.md).
      inputs: {
        multipart: 'the file part(s), or file_url fields in their place',
        json: '{ "file": { "data": <base64> } | { "url": <https URL> }, ...fields } ("files": [...] for merges)',
        url: app.config.urlInputs === 'on',
      },
      deliveries: {
        inline: 'the result in the answer (default)',
        link: `delivery=link: a one-time download link, valid ${app.config.resultLinkTtlS} s`,
        ...(app.config.urlInputs === 'on' ? { push: 'deliver_to=<https URL>: the result is PUT there; charged only after a 2xx' } : {}),
      },
      documentation: `${app.config.baseUrl}/openapi.json`,
      network: app.gate.chains[0]?.network,
      networks: app.gate.chains.map((c) => c.network),
      schemes: paymentSchemes(app),
      ...(channel ? { channels: { ...channel, refund: `${app.config.baseUrl}${channel.refundPath}`, about: channelSentence(app) } } : {}),
      mcp: {
        paymentMetaKey: PAYMENT_META_KEY,
        protocolVersion: MCP_PROTOCOL_VERSION,
        stateless: true,
        tools: operations.map((op) => op.tool),
        transport: 'streamable-http',
        url: `${app.config.baseUrl}/mcp`,
      },
    },
    items: operations.map((op) => catalogItem(op, app)),
  };
}
