// Which legacy Excel workbooks need a password: a FILEPASS record that Excel's built-in password
// ("VelvetSweatshop", write protection only) opens is not one; each of the three schemes is
// checked against records made here for that password and for another.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { DEFAULT_XLS_PASSWORD, rc4, xlsProtection, xorVerifier } from '../../../checks/xls-encryption.js';
import { biff8Workbook, biffRecord, cryptoApiFilePass, rc4FilePass, xorFilePass } from '../../support/office-fixtures.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('xlsProtection: the FILEPASS record of a legacy workbook', () => {
  it('known answers: RC4 of "Plaintext" under "Key", and the XOR verifier of the built-in password', () => {
    expect(rc4(Buffer.from('Key'), Buffer.from('Plaintext')).toString('hex')).to.equal('bbf316e8d940af0ad3');
    // The value Excel writes for "VelvetSweatshop" (MS-OFFCRYPTO's method 1 verifier).
    expect(xorVerifier(DEFAULT_XLS_PASSWORD)).to.equal(0x9a0a);
  });

  it('no FILEPASS, or a stream that does not start with a BOF: none', () => {
    expect(xlsProtection(biff8Workbook())).to.equal('none');
    expect(xlsProtection(biff8Workbook(biffRecord(0x0086, Buffer.alloc(0))))).to.equal('none');
    expect(xlsProtection(Buffer.from('not a workbook'))).to.equal('none');
  });

  for (const [scheme, make] of [
    ['XOR obfuscation', (password: string) => xorFilePass(xorVerifier(password))],
    ['RC4', rc4FilePass],
    ['RC4 CryptoAPI', cryptoApiFilePass],
  ] as const) {
    it(`${scheme}: the built-in password opens it (default-password), another needs its password`, () => {
      expect(xlsProtection(biff8Workbook(make(DEFAULT_XLS_PASSWORD)))).to.equal('default-password');
      expect(xlsProtection(biff8Workbook(make('correct horse')))).to.equal('password');
      // After a WriteProtect record, as Excel writes a workbook protected both ways.
      expect(xlsProtection(biff8Workbook(biffRecord(0x0086, Buffer.alloc(0)), make('correct horse')))).to.equal('password');
    });
  }

  it('a FILEPASS cut short, or of an unknown scheme, needs a password', () => {
    const whole = biff8Workbook(cryptoApiFilePass(DEFAULT_XLS_PASSWORD));
    expect(xlsProtection(whole.subarray(0, 60))).to.equal('password');
    expect(xlsProtection(biff8Workbook(biffRecord(0x002f, Buffer.from([1, 0, 9, 0, 9, 0]))))).to.equal('password');
    // BIFF5's FILEPASS: key and verifier only.
    expect(xlsProtection(biff8Workbook(biffRecord(0x002f, Buffer.from([0x34, 0x12, 0x0a, 0x9a]))))).to.equal('default-password');
    expect(xlsProtection(biff8Workbook(biffRecord(0x002f, Buffer.from([0x34, 0x12, 0x0b, 0x9a]))))).to.equal('password');
  });
});
