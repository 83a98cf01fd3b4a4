// What the page remembers between events: the operations, the chosen one, its current quote and
// whether a payment is under way. One shared object, so every module reads the latest values.
import type { DevPayer, Operation, Quote } from './service-types.js';

export const state: {
  operations: Operation[];
  current?: Operation;
  quote?: Quote;
  quoteSequence: number;
  /** A price is being asked for, or will be once typing pauses. */
  quoting: boolean;
  /** Why the service gave no price for the form as it stands, in the words shown. */
  quoteRefusal?: string;
  devPayer?: DevPayer;
  resultUrl?: string;
  busy: boolean;
  /** The service relays the Solana reads a wallet payment needs (GET /web/solana-rpc answered). */
  solanaRelay: boolean;
} = { operations: [], quoteSequence: 0, quoting: false, busy: false, solanaRelay: false };
