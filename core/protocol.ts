// What the service and its clients (the paying CLI and MCP bridge, agents using the standard x402
// packages) agree on beyond x402 itself. The service reads these same constants, so the two sides
// cannot drift.

/** Where an MCP tools/call carries the x402 PaymentPayload: params._meta["x402/payment"]. */
export const PAYMENT_META_KEY = 'x402/payment';

/** Where a paid MCP result carries the settlement receipt: result._meta["x402/payment-response"]. */
export const RECEIPT_META_KEY = 'x402/payment-response';

/** The most base64 file bytes (decoded) one MCP call may carry; larger files go as { "url" }. */
export const MCP_MAX_DECODED_BYTES = 73_400_320;

/** Where a buyer sends a payment channel's refund payload (x402's batch-settlement client asks it with GET). */
export const CHANNEL_REFUND_PATH = '/v1/channels/refund';
