// Pricing: the only place money is computed. Amounts are atomic USDC (6 decimals) as bigint,
// so no float rounding can make the paid retry disagree with the quote.
import type { Operation } from '../../operations/define.js';

export const USDC_DECIMALS = 6;

/** The exact price of one call: the flat rate, or the rate times the pages of all inputs. */
export function priceOf(op: Operation, pageCounts: readonly number[]): bigint {
  const rate = BigInt(op.price.rate);
  if (op.price.model === 'flat') return rate;
  const pages = pageCounts.reduce((sum, n) => sum + n, 0);
  if (!Number.isSafeInteger(pages) || pages < 1) throw new Error('a per-page price needs at least one page');
  return rate * BigInt(pages);
}

/** The advertised dynamic range: one page at the rate, up to the specification's maximum where it gives one. */
export function priceRange(op: Operation): { min: bigint; max?: bigint } {
  const min = BigInt(op.price.rate);
  if (op.price.model === 'flat') return { min, max: min };
  return { min, ...(op.maxAmount !== undefined ? { max: BigInt(op.maxAmount) } : {}) };
}

/** Atomic units as a US dollar string without float arithmetic: 5000n → "0.005". */
export function toUsd(amount: bigint): string {
  const whole = amount / 10n ** BigInt(USDC_DECIMALS);
  const frac = (amount % 10n ** BigInt(USDC_DECIMALS)).toString().padStart(USDC_DECIMALS, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

/** A US dollar amount as written by a person ("0.10", "5") to atomic units; undefined when it is not one. */
export function fromUsd(usd: string): bigint | undefined {
  const m = /^(\d{1,12})(?:\.(\d{1,6}))?$/.exec(usd.trim());
  if (!m) return undefined;
  return BigInt(m[1]) * 10n ** BigInt(USDC_DECIMALS) + BigInt((m[2] ?? '').padEnd(USDC_DECIMALS, '0'));
}
