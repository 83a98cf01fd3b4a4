// Every response the page asks for is read to its end or cancelled. Chromium keeps a request open
// while nobody reads its body, so one answer the page only looked at the status of (the Solana
// relay's, say) left the page never reaching network idle, and held a connection for nothing.

/** Ends a response the page does not need the body of (one already read is left as it is). */
export function discard(response: Response | undefined): void {
  if (!response?.body || response.bodyUsed) return;
  response.body.cancel().catch(() => undefined);
}
