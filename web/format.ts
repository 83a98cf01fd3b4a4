// How amounts, addresses and the service's phrases are written on the page.
// The amounts as the CLI, the bridge and the service write them: the client layer's conversion
// (pure, so it bundles for the browser as it is).
import { toUsd } from '../core/usd.js';

/** Atomic USDC (6 decimals) as a plain decimal: 5000 -> "0.005", 1500000 -> "1.5". */
export const formatUsdc = (atomic: string | bigint): string => toUsd(BigInt(atomic));

export const shortAddress = (address: string) => (address.length > 14 ? `${address.slice(0, 8)}…${address.slice(-6)}` : address);

export function sentence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return trimmed;
  const capital = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}
