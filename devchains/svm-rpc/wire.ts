// Solana's transaction wire format (signatures, then a legacy or v0 message), read into the
// parts the RPC methods answer with, and the key and byte encodings they use.
import { createHash } from 'node:crypto';
import { address, getAddressDecoder, getAddressEncoder, getBase58Decoder, getBase58Encoder } from '@solana/kit';
import { RpcError } from './json-rpc.js';

const addressEncoder = getAddressEncoder();
const addressDecoder = getAddressDecoder();
const base58Encoder = getBase58Encoder();
const base58Decoder = getBase58Decoder();

export const toKey = (base58Address: string): Uint8Array => new Uint8Array(addressEncoder.encode(address(base58Address)));
export const fromKey = (bytes: Uint8Array): string => addressDecoder.decode(bytes);
export const toBase58 = (bytes: Uint8Array): string => base58Decoder.decode(bytes);
export const toBase64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

function readShortVec(bytes: Uint8Array, offset: number): [value: number, next: number] {
  let value = 0;
  for (let i = 0; i < 3; i += 1) {
    const byte = bytes[offset + i];
    if (byte === undefined) throw new RpcError(-32602, 'invalid transaction: truncated length prefix');
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) return [value, offset + i + 1];
  }
  throw new RpcError(-32602, 'invalid transaction: bad length prefix');
}

export interface WireTransaction {
  bytes: Uint8Array;
  signatures: Uint8Array[];
  /** What the chain deduplicates on: base64 SHA-256 of the message bytes. */
  messageHash: string;
  versioned: boolean;
  header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
  staticKeys: Uint8Array[];
  blockhashOffset: number;
  instructions: { programIdIndex: number; accounts: number[]; data: Uint8Array }[];
  lookups: { accountKey: Uint8Array; writableIndexes: number[]; readonlyIndexes: number[] }[];
}

/** Solana's wire format: signatures, then the (legacy or v0) message. */
export function parseTransaction(bytes: Uint8Array): WireTransaction {
  const need = (offset: number, length: number) => {
    if (offset + length > bytes.length) throw new RpcError(-32602, 'invalid transaction: truncated');
  };
  /** A compact-u16 length and that many bytes; returns them and the offset after them. */
  const readLengthPrefixed = (offset: number): [Uint8Array, number] => {
    const [length, start] = readShortVec(bytes, offset);
    need(start, length);
    return [bytes.subarray(start, start + length), start + length];
  };
  let [count, at] = readShortVec(bytes, 0);
  if (count < 1) throw new RpcError(-32602, 'invalid transaction: no signatures');
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < count; i += 1, at += 64) {
    need(at, 64);
    signatures.push(bytes.subarray(at, at + 64));
  }
  need(at, 1);
  const messageHash = createHash('sha256').update(bytes.subarray(at)).digest('base64');
  const versioned = (bytes[at] & 0x80) !== 0;
  if (versioned) {
    if ((bytes[at] & 0x7f) !== 0) throw new RpcError(-32602, 'invalid transaction: unsupported version');
    at += 1;
  }
  need(at, 3);
  const header = { numRequiredSignatures: bytes[at], numReadonlySignedAccounts: bytes[at + 1], numReadonlyUnsignedAccounts: bytes[at + 2] };
  at += 3;
  let keyCount: number;
  [keyCount, at] = readShortVec(bytes, at);
  const staticKeys: Uint8Array[] = [];
  for (let i = 0; i < keyCount; i += 1, at += 32) {
    need(at, 32);
    staticKeys.push(bytes.subarray(at, at + 32));
  }
  need(at, 32);
  const blockhashOffset = at;
  at += 32;
  let instructionCount: number;
  [instructionCount, at] = readShortVec(bytes, at);
  const instructions: WireTransaction['instructions'] = [];
  for (let i = 0; i < instructionCount; i += 1) {
    need(at, 1);
    const programIdIndex = bytes[at];
    let accounts: Uint8Array;
    let data: Uint8Array;
    [accounts, at] = readLengthPrefixed(at + 1);
    [data, at] = readLengthPrefixed(at);
    instructions.push({ programIdIndex, accounts: Array.from(accounts), data });
  }
  const lookups: WireTransaction['lookups'] = [];
  if (versioned) {
    let lookupCount: number;
    [lookupCount, at] = readShortVec(bytes, at);
    for (let i = 0; i < lookupCount; i += 1) {
      need(at, 32);
      const accountKey = bytes.subarray(at, at + 32);
      let writable: Uint8Array;
      let readonly: Uint8Array;
      [writable, at] = readLengthPrefixed(at + 32);
      [readonly, at] = readLengthPrefixed(at);
      lookups.push({ accountKey, writableIndexes: Array.from(writable), readonlyIndexes: Array.from(readonly) });
    }
  }
  return { bytes, signatures, messageHash, versioned, header, staticKeys, blockhashOffset, instructions, lookups };
}

/** A transaction parameter as sent to sendTransaction or simulateTransaction (base58 unless told base64). */
export function decodeWireTransaction(encoded: unknown, encoding: unknown): WireTransaction {
  if (typeof encoded !== 'string') throw new RpcError(-32602, 'Invalid params: transaction must be a string');
  const bytes = (encoding ?? 'base58') === 'base64' ? new Uint8Array(Buffer.from(encoded, 'base64')) : new Uint8Array(base58Encoder.encode(encoded));
  return parseTransaction(bytes);
}

export function recentBlockhashOf(wire: WireTransaction): string {
  return toBase58(wire.bytes.subarray(wire.blockhashOffset, wire.blockhashOffset + 32));
}

/** A copy of the transaction with another recent blockhash (its signatures no longer match). */
export function withRecentBlockhash(wire: WireTransaction, blockhash: string): WireTransaction {
  const patched = wire.bytes.slice();
  patched.set(base58Encoder.encode(blockhash), wire.blockhashOffset);
  return parseTransaction(patched);
}
