// Whether a legacy Excel workbook (BIFF5/BIFF8) needs a password to be read: its FILEPASS record
// (MS-XLS 2.4.117), right after the workbook's BOF, says it is encrypted, but Excel also encrypts
// with its built-in password "VelvetSweatshop" (a workbook only protected against changes), and
// LibreOffice opens those without asking. So the record's verifier is checked against that password
// for each of the three schemes (MS-OFFCRYPTO 2.3.6 XOR obfuscation, 2.3.6.2 RC4, 2.3.5 RC4
// CryptoAPI), as LibreOffice does before it asks for a password.
import { createHash } from 'node:crypto';

/** Excel's built-in password (MS-OFFCRYPTO 2.3.6.4, MS-XLS 2.2.10). */
export const DEFAULT_XLS_PASSWORD = 'VelvetSweatshop';

const BOF = 0x0809;
const FILEPASS = 0x002f;
/** BOF may be followed by WriteProtect, then FilePass (MS-XLS 2.1.7.20.1): FilePass is within the first few records. */
const RECORDS_BEFORE_FILEPASS = 3;

export type XlsProtection = 'none' | 'default-password' | 'password';

/**
 * What the start of a Workbook (BIFF8) or Book (BIFF5) stream says: no FILEPASS, one the default
 * password opens, or one that needs the user's password. A FILEPASS cut short by `head` or of an
 * unknown scheme counts as needing a password (LibreOffice cannot open it without one either).
 */
export function xlsProtection(head: Buffer): XlsProtection {
  let at = 0;
  for (let record = 0; record <= RECORDS_BEFORE_FILEPASS && at + 4 <= head.length; record += 1) {
    const type = head.readUInt16LE(at);
    const size = head.readUInt16LE(at + 2);
    if (record === 0 && type !== BOF) return 'none';
    if (type === FILEPASS) {
      const body = head.subarray(at + 4, at + 4 + size);
      return body.length === size && defaultPasswordOpens(body) ? 'default-password' : 'password';
    }
    at += 4 + size;
  }
  return 'none';
}

function defaultPasswordOpens(filePass: Buffer): boolean {
  // BIFF5 knows only XOR obfuscation, without the scheme field: key and verifier.
  if (filePass.length === 4) return filePass.readUInt16LE(2) === xorVerifier(DEFAULT_XLS_PASSWORD);
  if (filePass.length < 6) return false;
  const scheme = filePass.readUInt16LE(0);
  if (scheme === 0) return filePass.length >= 6 && filePass.readUInt16LE(4) === xorVerifier(DEFAULT_XLS_PASSWORD);
  if (scheme !== 1) return false;
  const major = filePass.readUInt16LE(2);
  const minor = filePass.readUInt16LE(4);
  if (major === 1 && minor === 1) return rc4Opens(filePass.subarray(6), DEFAULT_XLS_PASSWORD);
  if (major >= 2 && major <= 4 && minor === 2) return cryptoApiOpens(filePass.subarray(6), DEFAULT_XLS_PASSWORD);
  return false;
}

/** The password's 16-bit verifier of XOR obfuscation (MS-OFFCRYPTO 2.3.7.1, CreatePasswordVerifier_Method1). */
export function xorVerifier(password: string): number {
  const bytes = [...password.slice(0, 15)].map((c) => (c.charCodeAt(0) & 0xff) || (c.charCodeAt(0) >> 8));
  let verifier = 0;
  for (const byte of [bytes.length, ...bytes].reverse()) {
    verifier = ((((verifier & 0x4000) ? 1 : 0) | ((verifier << 1) & 0x7fff)) ^ byte);
  }
  return verifier ^ 0xce4b;
}

/** RC4 (MS-OFFCRYPTO 2.3.6.2): salt, then the verifier and its MD5, encrypted with block 0's key. */
function rc4Opens(info: Buffer, password: string): boolean {
  if (info.length < 48) return false;
  const salt = info.subarray(0, 16);
  const h0 = md5(Buffer.from(password, 'utf16le')).subarray(0, 5);
  const intermediate = md5(Buffer.concat(Array.from({ length: 16 }, () => Buffer.concat([h0, salt])))).subarray(0, 5);
  const key = md5(Buffer.concat([intermediate, uint32(0)]));
  const plain = rc4(key, info.subarray(16, 48));
  return md5(plain.subarray(0, 16)).equals(plain.subarray(16, 32));
}

/**
 * RC4 CryptoAPI (MS-OFFCRYPTO 2.3.5): flags, the header's size, the header (its key size at 16),
 * then the verifier: the salt's size and salt, the verifier and its SHA-1, encrypted with block 0's key.
 */
function cryptoApiOpens(info: Buffer, password: string): boolean {
  if (info.length < 8) return false;
  const headerSize = info.readUInt32LE(4);
  const header = info.subarray(8, 8 + headerSize);
  const verifier = info.subarray(8 + headerSize);
  if (header.length < 20 || header.length !== headerSize || verifier.length < 4) return false;
  const keyBits = header.readUInt32LE(16) || 40;
  const saltSize = verifier.readUInt32LE(0);
  if (saltSize !== 16 || verifier.length < 4 + 16 + 16 + 4 + 20) return false;
  const salt = verifier.subarray(4, 20);
  const h0 = sha1(Buffer.concat([salt, Buffer.from(password, 'utf16le')]));
  // A 40-bit key is used as 128 bits with the rest zero (MS-OFFCRYPTO 2.3.5.2).
  const key = Buffer.alloc(Math.max(16, keyBits / 8));
  sha1(Buffer.concat([h0, uint32(0)])).copy(key, 0, 0, keyBits / 8);
  const plain = rc4(key, Buffer.concat([verifier.subarray(20, 36), verifier.subarray(40, 60)]));
  return sha1(plain.subarray(0, 16)).equals(plain.subarray(16, 36));
}

function md5(data: Buffer): Buffer {
  return createHash('md5').update(data).digest();
}

function sha1(data: Buffer): Buffer {
  return createHash('sha1').update(data).digest();
}

function uint32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(value);
  return out;
}

/** RC4 itself (OpenSSL 3 keeps it in its legacy provider, which Node does not load). */
export function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i += 1) {
    j = (j + s[i]! + key[i % key.length]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n += 1) {
    i = (i + 1) & 0xff;
    j = (j + s[i]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 0xff]!;
  }
  return out;
}
