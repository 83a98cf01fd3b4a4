// Which of the upstream's payment offers the bridge signs: only canonical USDC on a configured network,
// by the exact scheme (EIP-3009 transfers on EVM) or, with CHANNEL_DEPOSIT_USD, through a channel on Base.
// The upstream is not trusted: anything else is refused with what it offered, bounded.
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { Refusal, shown } from './refusal.js';
import { BASE_MAINNET, CHANNEL_SCHEME, type BridgeSettings, type Payable } from './settings.js';

export function isPaymentRequired(value: unknown): value is PaymentRequired {
  return typeof value === 'object' && value !== null && Array.isArray((value as PaymentRequired).accepts)
    && typeof (value as PaymentRequired).x402Version === 'number';
}

/** One offer as a person reads it: amount, asset, network, and a transfer method or scheme when not the usual. */
export function describeOffer(offer: PaymentRequirements): string {
  const method = (offer.extra as { assetTransferMethod?: unknown } | undefined)?.assetTransferMethod;
  const by = method !== undefined ? ` (by ${shown(method)})` : '';
  const scheme = offer.scheme !== 'exact' ? ` (scheme ${shown(offer.scheme)})` : '';
  return `${shown(offer.amount)} of ${shown(offer.asset)} on ${shown(offer.network)}${by}${scheme}`;
}

type OfferSettings = Pick<BridgeSettings, 'networks' | 'channelDeposit'>;

/** The offer to sign: the exact scheme, in canonical USDC, on a configured network (the first listed that is offered). */
export function chooseOffer(pr: PaymentRequired, settings: OfferSettings): PaymentRequirements {
  const signable = (offer: PaymentRequirements, to: Payable) => {
    // With CHANNEL_DEPOSIT_USD, Base is paid through a payment channel only.
    const scheme = settings.channelDeposit !== undefined && to.network === BASE_MAINNET ? CHANNEL_SCHEME : 'exact';
    if (offer.scheme !== scheme || offer.network !== to.network || !/^\d{1,30}$/.test(String(offer.amount))) return false;
    const canonical = typeof offer.asset === 'string' && offer.asset.toLowerCase() === to.usdc.toLowerCase();
    if (scheme === CHANNEL_SCHEME) return canonical;
    if (to.family === 'svm') return offer.asset === to.usdc;
    // EIP-3009 only (no Permit2 approvals): its authorizations are the ones the chain can be asked about.
    const method = (offer.extra as { assetTransferMethod?: unknown } | undefined)?.assetTransferMethod;
    return canonical && (method === undefined || method === 'eip3009');
  };
  const accepts = pr.accepts.filter((a): a is PaymentRequirements => typeof a === 'object' && a !== null);
  if (pr.x402Version === 2) {
    for (const to of settings.networks) {
      const offer = accepts.find((a) => signable(a, to));
      if (offer) return offer;
    }
  }
  const offered = pr.x402Version === 2
    ? accepts.slice(0, 5).map(describeOffer).join('; ') || 'none'
    : `x402 version ${shown(pr.x402Version)}`;
  const channelled = (n: Payable) => settings.channelDeposit !== undefined && n.network === BASE_MAINNET;
  const through = (n: Payable) => (channelled(n) ? ' through a payment channel (CHANNEL_DEPOSIT_USD)' : '');
  const signs = settings.networks.map((n) => `USDC (${n.usdc}) on ${n.network}${through(n)}`).join(' or ');
  throw new Refusal(`the service offers only payments this bridge does not sign: ${offered}; `
    + `this bridge signs ${signs} only (PAYDOC_NETWORKS). Nothing was signed or paid.`);
}
