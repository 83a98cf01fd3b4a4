// The pdf.js that unpdf bundles (5.x; the Markdown benchmark's pdf2md peer and the stamp test's
// independent reader) calls ArrayBuffer.prototype.transferToFixedLength, which Node gains only in
// version 21: on Node 20 every operator list fails and no font is ever loaded. A stand-in that
// copies lets pdf.js run as it would on a newer Node.
export function letPdfjsRunOnNode20(): void {
  if ('transferToFixedLength' in ArrayBuffer.prototype) return;
  Object.defineProperty(ArrayBuffer.prototype, 'transferToFixedLength', {
    configurable: true, writable: true,
    value(this: ArrayBuffer, length = this.byteLength) {
      const copy = new ArrayBuffer(length);
      new Uint8Array(copy).set(new Uint8Array(this, 0, Math.min(length, this.byteLength)));
      return copy;
    },
  });
}
