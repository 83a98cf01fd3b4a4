// USDC amounts between atomic units (6 decimals, as bigint) and the US dollar strings people
// write and read. No float arithmetic, so a quote and its paid retry can never disagree by a
// rounding. Pure: the web page bundles it as it is.

export const USDC_DECIMALS = 6;

const UNIT = 10n ** BigInt(USDC_DECIMALS);

/** Atomic units as a US dollar string: 5000n → "0.005", 1500000n → "1.5". */
export function toUsd(amount: bigint): string {
  const whole = amount / UNIT;
  const frac = (amount % UNIT).toString().padStart(USDC_DECIMALS, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

/** A US dollar amount as written by a person ("0.10", "5") to atomic units; undefined when it is not one. */
export function fromUsd(usd: string): bigint | undefined {
  const m = /^(\d{1,12})(?:\.(\d{1,6}))?$/.exec(usd.trim());
  if (!m) return undefined;
  return BigInt(m[1]) * UNIT + BigInt((m[2] ?? '').padEnd(USDC_DECIMALS, '0'));
}
