// Pricing: the only place the price of a call is computed. Amounts are atomic USDC (6 decimals) as
// bigint, so no float rounding can make the paid retry disagree with the quote. Their conversion
// to and from US dollars is the core's (core/usd.ts), shared with the paying clients.
import type { Operation } from '../../operations/define.js';

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
