// The pre-payment checks of Office documents: the format from the bytes (ZIP packages by their
// directory and main part, OpenDocument by its mimetype, RTF, OLE2 compound files by their
// streams), a declared name or type that disagrees, what is not an Office document named, an
// encrypted package, and ZIP bombs bounded from the directory before anything is unpacked.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import {
  biff8Workbook, compoundFile, cryptoApiFilePass, declaringUnpackedSize, docx, workbookFile, xlsx, xorFilePass, zipOf,
} from '../../support/office-fixtures.js';
import { DEFAULT_XLS_PASSWORD, xorVerifier } from '../../../checks/xls-encryption.js';
import { inspectOffice, OFFICE_ZIP_LIMITS } from '../../../checks/office.js';
import { ServiceError } from '../../../core/errors.js';
import { realFile } from '../../support/real-files.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

/** The code and message a pre-payment check refuses the bytes with. */
async function refusal(
  bytes: Uint8Array, declared?: { extension?: string; mediaType?: string },
): Promise<{ code: string; message: string }> {
  try {
    await inspectOffice(bytes, declared);
  } catch (err) {
    if (err instanceof ServiceError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the bytes were accepted');
}

describe('the Office checks before payment', () => {
  it('a file whose name or declared type names another Office format is refused, naming both', async () => {
    const workbook = await xlsx();
    expect(await refusal(workbook, { extension: 'docx' })).to.equal({ code: 'UNSUPPORTED_TYPE', message: 'the file is not what it claims: its name (.docx) says a Word document (DOCX), but its bytes are an Excel workbook (XLSX); send it under its right name or type' });
    expect((await refusal(workbook, { mediaType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' })).message).to.match(/its declared type .* says a PowerPoint presentation \(PPTX\), but its bytes are an Excel workbook/);
    expect((await refusal(compoundFile(['WordDocument']), { extension: 'xls' })).message).to.match(/its name \(\.xls\) says an Excel 97-2003 workbook \(XLS\), but its bytes are a Word 97-2003 document \(DOC\)/);
    // Generic names and types claim nothing; a macro-enabled name for the plain format is the same family.
    expect(await inspectOffice(workbook, { extension: 'bin', mediaType: 'application/octet-stream' })).to.equal('xlsx');
    expect(await inspectOffice(workbook, { extension: 'xlsm' })).to.equal('xlsx');
  });

  it('what is not an Office document is named: a PDF, a plain ZIP, another OpenDocument kind, a package without its main part, an empty file', async () => {
    expect(await refusal(Buffer.from('%PDF-1.7\n'))).to.equal({ code: 'UNSUPPORTED_TYPE', message: 'the file is a PDF, not an Office document; send a DOCX, XLSX, PPTX, ODT, ODS, ODP, RTF, DOC, XLS or PPT file' });
    expect((await refusal(await zipOf([{ name: 'notes.txt', text: 'hello' }]))).message).to.match(/^the file is a ZIP archive \(neither an OOXML package/);
    expect((await refusal(await zipOf([{ name: 'mimetype', text: 'application/vnd.oasis.opendocument.graphics', store: true }, { name: 'content.xml', text: '<x/>' }]))).message)
      .to.match(/an OpenDocument file of a kind this service does not convert \(graphics\)/);
    const hollow = await zipOf([
      { name: '[Content_Types].xml', text: '<Types><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>' },
    ]);
    expect(await refusal(hollow)).to.equal({ code: 'CORRUPT_INPUT', message: 'the file says it is a Word document (DOCX) but does not hold its main part /word/document.xml: it is damaged' });
    const malformed = await zipOf([
      { name: '[Content_Types].xml', text: '<Types><Override PartName="/word/%zz.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>' },
    ]);
    expect(await refusal(malformed)).to.equal({ code: 'CORRUPT_INPUT', message: 'the file says it is a Word document (DOCX) but does not hold its main part /word/%zz.xml: it is damaged' });
    expect((await refusal(Buffer.alloc(0))).message).to.match(/^the file is empty, not an Office document/);
    expect((await refusal(compoundFile(['Contents']))).message).to.match(/an OLE2 compound file holding no Word, Excel or PowerPoint stream/);
  });

  it('encrypted documents are refused: an OOXML package encrypted into a compound file', async () => {
    expect(await refusal(compoundFile(['EncryptionInfo', 'EncryptedPackage']))).to.equal({
      code: 'UNSUPPORTED_TYPE',
      message: 'the document (an encrypted OOXML package) is password-protected (encrypted): it cannot be converted without its password; remove the protection and send it again',
    });
  });

  it('legacy encryption is refused before payment: Apache POI\'s RC4 CryptoAPI PowerPoint (its Current User token) and its encrypted Word document (the FIB flag)', async () => {
    const presentation = await realFile('Password_Protected-hello.ppt');
    expect(await refusal(presentation, { extension: 'ppt' })).to.equal({
      code: 'UNSUPPORTED_TYPE',
      message: 'the PowerPoint 97-2003 presentation (PPT) is password-protected (encrypted): it cannot be converted without its password; remove the protection and send it again',
    });
    // The same file with the Current User atom's token of an unencrypted presentation is taken: the token is what is read.
    const token = Buffer.from(presentation).indexOf(Buffer.from([0xdf, 0xc4, 0xd1, 0xf3]));
    expect(token).to.be.above(0);
    const cleared = Buffer.from(presentation);
    cleared.writeUInt32LE(0xe391c05f, token);
    expect(await inspectOffice(cleared, { extension: 'ppt' })).to.equal('ppt');
    expect(await refusal(await realFile('PasswordProtected.doc'))).to.equal({
      code: 'UNSUPPORTED_TYPE',
      message: 'the Word 97-2003 document (DOC) is password-protected (encrypted): it cannot be converted without its password; remove the protection and send it again',
    });
  });

  it('an encrypted XLS is refused (RC4 CryptoAPI, XOR obfuscation); one Excel\'s built-in password opens (write protection only) is taken', async () => {
    const message = 'the Excel 97-2003 workbook (XLS) is password-protected (encrypted): it cannot be converted without its password; remove the protection and send it again';
    for (const filePass of [cryptoApiFilePass('s3cret'), xorFilePass(xorVerifier('s3cret'))]) {
      expect(await refusal(workbookFile(biff8Workbook(filePass)), { extension: 'xls' })).to.equal({ code: 'UNSUPPORTED_TYPE', message });
    }
    for (const filePass of [cryptoApiFilePass(DEFAULT_XLS_PASSWORD), xorFilePass(xorVerifier(DEFAULT_XLS_PASSWORD))]) {
      expect(await inspectOffice(workbookFile(biff8Workbook(filePass)), { extension: 'xls' })).to.equal('xls');
    }
    expect(await inspectOffice(workbookFile(biff8Workbook()), undefined)).to.equal('xls');
  });

  it('Apache POI\'s presentation with a stray byte after the ZIP\'s end record is taken, as unzip and LibreOffice take it; cut short, or with more stray bytes than the bound, it is refused', async () => {
    const presentation = await realFile('au.asn.aes.www_conferences_2011_presentations_Fri_20Room4Level4_20930_20Maloney.pptx');
    const end = Buffer.from(presentation).lastIndexOf('PK\x05\x06');
    expect(presentation.length - (end + 22)).to.equal(1);
    expect(await inspectOffice(presentation, { extension: 'pptx' })).to.equal('pptx');
    const noDirectory = { code: 'CORRUPT_INPUT', message: 'the file starts like a ZIP package (OOXML or OpenDocument) but has no ZIP directory: it is cut short or damaged' };
    expect(await refusal(presentation.subarray(0, presentation.length - 20))).to.equal(noDirectory);
    expect(await refusal(presentation.subarray(0, presentation.length >> 1))).to.equal(noDirectory);
    const padded = Buffer.concat([presentation.subarray(0, end + 22), Buffer.alloc(OFFICE_ZIP_LIMITS.trailingBytes + 1)]);
    expect(await refusal(padded)).to.equal(noDirectory);
    expect(await inspectOffice(padded.subarray(0, padded.length - 1), undefined)).to.equal('pptx');
  });

  it('Apache POI\'s Word 6.0 document is told from Word 97 by its FIB (nFib 0x0065), declared as a .doc or not; its FIB\'s encryption flag is read as Word 97\'s', async () => {
    const word6 = await realFile('cn.orthodox.www_divenbog_APRIL_30-APRIL.DOC');
    expect(await inspectOffice(word6, { extension: 'doc', mediaType: 'application/msword' })).to.equal('doc6');
    expect(await inspectOffice(word6, undefined)).to.equal('doc6');
    expect((await refusal(word6, { extension: 'xls' })).message).to.match(/its name \(\.xls\) says an Excel 97-2003 workbook \(XLS\), but its bytes are a Word 6\.0\/95 document \(DOC\)/);
    // Its FIB starts the WordDocument stream (nFib at 2, the flags at 10): the last copy of its first
    // bytes in the file, as the nFib change below shows.
    const fib = Buffer.from(word6).lastIndexOf(Buffer.from([0xdc, 0xa5, 0x65, 0x00]));
    expect(fib).to.be.above(0);
    const encryptedWord6 = Buffer.from(word6);
    encryptedWord6.writeUInt16LE(encryptedWord6.readUInt16LE(fib + 10) | 0x0100, fib + 10);
    expect((await refusal(encryptedWord6)).message).to.equal('the Word 6.0/95 document (DOC) is password-protected (encrypted): it cannot be converted without its password; remove the protection and send it again');
    const word97 = Buffer.from(word6);
    word97.writeUInt16LE(0x00c1, fib + 2);
    expect(await inspectOffice(word97, undefined)).to.equal('doc');
  });

  it('ZIP bombs are bounded from the directory: declared unpacked size and number of parts', async () => {
    const bomb = declaringUnpackedSize(await docx(), 200 * 1024 * 1024);
    expect(await refusal(bomb)).to.equal({ code: 'LIMIT_EXCEEDED', message: 'the package\'s parts unpack to more than 512 MB, more than one conversion unpacks' });
    const crowded = await zipOf([
      { name: 'mimetype', text: 'application/vnd.oasis.opendocument.text', store: true },
      ...Array.from({ length: OFFICE_ZIP_LIMITS.entries }, (_, i) => ({ name: `Pictures/${i}.xml`, text: '' })),
    ]);
    expect(await refusal(crowded)).to.equal({ code: 'LIMIT_EXCEEDED', message: `the package holds ${OFFICE_ZIP_LIMITS.entries + 1} parts; at most ${OFFICE_ZIP_LIMITS.entries} are converted` });
  });

  it('hostile ZIP packages are refused from their directory, each precisely: cut short, a directory outside the file or damaged, a part inflating past its declared size, a part declaring too much', async () => {
    const document = await docx();
    expect(await refusal(document.subarray(0, document.length >> 1))).to.equal({ code: 'CORRUPT_INPUT', message: 'the file starts like a ZIP package (OOXML or OpenDocument) but has no ZIP directory: it is cut short or damaged' });
    const end = document.lastIndexOf('PK\x05\x06');
    const outside = Buffer.from(document);
    outside.writeUInt32LE(document.length + 4096, end + 16);
    expect(await refusal(outside)).to.equal({ code: 'CORRUPT_INPUT', message: 'the ZIP package\'s directory points outside the file: it is damaged' });
    const misplaced = Buffer.from(document);
    misplaced.writeUInt32LE(0, end + 16);
    expect(await refusal(misplaced)).to.equal({ code: 'CORRUPT_INPUT', message: 'the ZIP package\'s directory is damaged' });
    // [Content_Types].xml is the first part: its directory record is the first one.
    const types = document.indexOf('PK\x01\x02');
    const understated = Buffer.from(document);
    understated.writeUInt32LE(16, types + 24);
    expect(await refusal(understated)).to.equal({ code: 'CORRUPT_INPUT', message: 'the ZIP package\'s part [Content_Types].xml cannot be decompressed: the file is damaged' });
    const overstated = Buffer.from(document);
    overstated.writeUInt32LE(64 * 1024 * 1024, types + 24);
    expect(await refusal(overstated)).to.equal({ code: 'CORRUPT_INPUT', message: 'the ZIP package\'s part [Content_Types].xml is 67108864 bytes, far more than that part ever holds' });
  });

  it('hostile OLE2 compound files are refused without looping: cut short, a directory chain that cycles, a sector table that loops; a cycle in a stream\'s chain is never followed', async () => {
    const word = compoundFile(['WordDocument']);
    expect(await refusal(word.subarray(0, 300))).to.equal({ code: 'CORRUPT_INPUT', message: 'the file is an OLE2 compound file cut short' });
    expect(await refusal(word.subarray(0, 700))).to.equal({ code: 'CORRUPT_INPUT', message: 'the OLE2 compound file points outside itself: it is damaged' });
    // The FAT is sector 0 (after the 512-byte header); its entry 1, the directory's next sector, back to itself.
    const cycling = Buffer.from(word);
    cycling.writeUInt32LE(1, 512 + 4);
    expect(await refusal(cycling)).to.equal({ code: 'CORRUPT_INPUT', message: 'the OLE2 compound file\'s directory loops: it is damaged' });
    // The chain of DIFAT sectors starts at sector 2, whose last entry names sector 2 again.
    const difat = Buffer.alloc(512, 0xff);
    difat.writeUInt32LE(2, 508);
    const looping = Buffer.concat([word, difat]);
    looping.writeUInt32LE(2, 0x44);
    expect(await refusal(looping)).to.equal({ code: 'CORRUPT_INPUT', message: 'the OLE2 compound file\'s sector table loops: it is damaged' });
    // The Word stream (8 KB, so in the FAT's sectors) starts at sector 3 of a chain 2 → 3 → 2: its first sector is all the check reads.
    const streamCycle = Buffer.concat([word, Buffer.alloc(1024)]);
    streamCycle.writeUInt32LE(3, 512 + 2 * 4);
    streamCycle.writeUInt32LE(2, 512 + 3 * 4);
    streamCycle.writeUInt32LE(3, 1024 + 128 + 116);
    streamCycle.writeUInt32LE(8192, 1024 + 128 + 120);
    expect(await inspectOffice(streamCycle, undefined)).to.equal('doc');
  });
});
