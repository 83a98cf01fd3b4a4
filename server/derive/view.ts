// What the derived documents (catalog, OpenAPI, 402 resources) may read of the running
// service: a few settings and the chains offered, nothing else of the app.
import type { Config } from '../config.js';
import type { ChainConfig, ChannelTerms } from '../payment/gate.js';

export interface PublicView {
  config: Pick<Config, 'baseUrl' | 'urlInputs' | 'resultLinkTtlS' | 'ocrEngine' | 'ocrLanguages' | 'markdownOcr' | 'tablesEngine' | 'modelBaseUrl' | 'modelApiKey'>;
  gate: { chains: readonly ChainConfig[]; channelTerms?: ChannelTerms | undefined };
}

/** The ways to pay each call, in the order every 402 offers them: exact on each chain, then a channel. */
export function paymentSchemes(app: PublicView): Array<{ scheme: string; network: string }> {
  const channel = app.gate.channelTerms;
  const exact = app.gate.chains.map((c) => ({ scheme: 'exact', network: c.network }));
  return channel ? [...exact, { scheme: 'batch-settlement', network: channel.network }] : exact;
}

/** One sentence on the payment channels for the documents people and agents read; empty when none are offered. */
export function channelSentence(app: PublicView): string {
  const channel = app.gate.channelTerms;
  if (!channel) return '';
  return `Payment channels (x402 batch-settlement) on ${channel.network}: deposit once, then sign an off-chain voucher per call (no transaction, no wait for a block); `
    + `the service claims vouchers in batches; GET ${app.config.baseUrl}${channel.refundPath} with x402's refund payload returns the rest of the deposit; `
    + `a timed withdrawal takes ${channel.withdrawDelay} s (receiverAuthorizer ${channel.receiverAuthorizer}).`;
}
