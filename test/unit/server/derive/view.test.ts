// server/derive/view.ts: the ways to pay every discovery document lists, in the order every 402
// offers them, and the one sentence on payment channels, on deployments with and without channels.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { channelSentence, paymentSchemes } from '../../../../server/derive/view.js';
import { CHANNEL_TERMS, publicView } from '../../../support/public-view.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('server/derive/view', () => {
  it('exact on each chain in the configured order, then the channel scheme when channels are offered', () => {
    expect(paymentSchemes(publicView())).to.equal([
      { scheme: 'exact', network: 'eip155:84532' },
      { scheme: 'exact', network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1' },
    ]);
    expect(paymentSchemes(publicView({}, CHANNEL_TERMS))).to.equal([
      { scheme: 'exact', network: 'eip155:84532' },
      { scheme: 'exact', network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1' },
      { scheme: 'batch-settlement', network: 'eip155:84532' },
    ]);
  });

  it('the channel sentence names the refund URL on this deployment, the withdrawal delay and the receiver authorizer; none without channels', () => {
    expect(channelSentence(publicView())).to.equal('');
    expect(channelSentence(publicView({ baseUrl: 'https://docs.example/' }, { ...CHANNEL_TERMS, withdrawDelay: 3600 }))).to.equal(
      'Payment channels (x402 batch-settlement) on eip155:84532: deposit once, then sign an off-chain voucher per call (no transaction, no wait for a block); '
      + 'the service claims vouchers in batches; GET https://docs.example/v1/channels/refund with x402\'s refund payload returns the rest of the deposit; '
      + 'a timed withdrawal takes 3600 s (receiverAuthorizer 0x2222222222222222222222222222222222222222).',
    );
  });
});
