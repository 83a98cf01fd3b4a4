// What the page remembers between events: the operations, the chosen one, its current quote and
// whether a payment is under way. One shared object, so every module reads the latest values.
import type { DevPayer, Operation, Quote } from './service-types.js';

export const state: {
  operations: Operation[];
  current?: Operation;
  quote?: Quote;
  quoteSequence: number;
  devPayer?: DevPayer;
  resultUrl?: string;
  busy: boolean;
  /** The service relays the Solana reads a wallet payment needs (GET /web/solana-rpc answered). */
  solanaRelay: boolean;
} = { operations: [], quoteSequence: 0, busy: false, solanaRelay: false };
