// Reads the x402 headers of the service's answers (the price in a 402, the receipt) and writes the
// payment header. No payment scheme is registered on it, so it can never sign.
import { x402Client, x402HTTPClient } from '@x402/core/client';

export const paymentHeaders = new x402HTTPClient(new x402Client());
