// How amounts, addresses and the service's phrases are written on the page.

/** Atomic USDC (6 decimals) as a plain decimal: 5000 -> "0.005", 1500000 -> "1.5". */
export function formatUsdc(atomic: string | bigint): string {
  const value = BigInt(atomic);
  const whole = value / 1_000_000n;
  const fraction = (value % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

export const shortAddress = (address: string) => (address.length > 14 ? `${address.slice(0, 8)}…${address.slice(-6)}` : address);

export function sentence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return trimmed;
  const capital = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}
