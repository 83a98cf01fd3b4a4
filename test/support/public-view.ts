// What the derived documents read of a running service (server/derive/view.ts), built from the
// real configuration loader for the derive unit tests: settings as a deployment sets them, two
// chains, and the payment channels' terms when a test offers them.
import { loadConfig, type Config } from '../../server/config.js';
import type { ChainConfig, ChannelTerms } from '../../server/payment/gate.js';
import type { PublicView } from '../../server/derive/view.js';

export const BASE_URL = 'https://paydoc.example';

export const CHAINS: readonly ChainConfig[] = [
  { network: 'eip155:84532', asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', payTo: '0x1111111111111111111111111111111111111111', facilitatorUrl: 'http://127.0.0.1:1' },
  { network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', asset: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', payTo: 'PayToSo1anaAddress11111111111111111111111111', facilitatorUrl: 'http://127.0.0.1:1' },
];

export const CHANNEL_TERMS: ChannelTerms = {
  network: 'eip155:84532', receiverAuthorizer: '0x2222222222222222222222222222222222222222', withdrawDelay: 900, refundPath: '/v1/channels/refund',
};

/** A deployment's view: MARKDOWN_OCR defaults to off here, so no test depends on tesseract being installed. */
export function publicView(settings: Partial<Config> = {}, channelTerms?: ChannelTerms): PublicView {
  return {
    config: loadConfig({ baseUrl: BASE_URL, markdownOcr: 'off', ...settings }, {}),
    gate: { chains: CHAINS, ...(channelTerms ? { channelTerms } : {}) },
  };
}
