// The pre-payment checks of Office documents: the format from the bytes (ZIP packages by their
// directory and main part, OpenDocument by its mimetype, RTF, OLE2 compound files by their
// streams), a declared name or type that disagrees, what is not an Office document named, an
// encrypted package, and ZIP bombs bounded from the directory before anything is unpacked.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { compoundFile, declaringUnpackedSize, docx, xlsx, zipOf } from '../../support/office-fixtures.js';
import { inspectOffice, OFFICE_ZIP_LIMITS } from '../../../checks/office.js';
import { ServiceError } from '../../../core/errors.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

/** The code and message a pre-payment check refuses the bytes with. */
function refusal(bytes: Uint8Array, declared?: { extension?: string; mediaType?: string }): { code: string; message: string } {
  try {
    inspectOffice(bytes, declared);
  } catch (err) {
    if (err instanceof ServiceError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the bytes were accepted');
}

describe('the Office checks before payment', () => {
  it('a file whose name or declared type names another Office format is refused, naming both', async () => {
    const workbook = await xlsx();
    expect(refusal(workbook, { extension: 'docx' })).to.equal({ code: 'UNSUPPORTED_TYPE', message: 'the file is not what it claims: its name (.docx) says a Word document (DOCX), but its bytes are an Excel workbook (XLSX); send it under its right name or type' });
    expect(refusal(workbook, { mediaType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' }).message).to.match(/its declared type .* says a PowerPoint presentation \(PPTX\), but its bytes are an Excel workbook/);
    expect(refusal(compoundFile(['WordDocument']), { extension: 'xls' }).message).to.match(/its name \(\.xls\) says an Excel 97-2003 workbook \(XLS\), but its bytes are a Word 97-2003 document \(DOC\)/);
    // Generic names and types claim nothing; a macro-enabled name for the plain format is the same family.
    expect(inspectOffice(workbook, { extension: 'bin', mediaType: 'application/octet-stream' })).to.equal('xlsx');
    expect(inspectOffice(workbook, { extension: 'xlsm' })).to.equal('xlsx');
  });

  it('what is not an Office document is named: a PDF, a plain ZIP, another OpenDocument kind, a package without its main part, an empty file', async () => {
    expect(refusal(Buffer.from('%PDF-1.7\n'))).to.equal({ code: 'UNSUPPORTED_TYPE', message: 'the file is a PDF, not an Office document; send a DOCX, XLSX, PPTX, ODT, ODS, ODP, RTF, DOC, XLS or PPT file' });
    expect(refusal(await zipOf([{ name: 'notes.txt', text: 'hello' }])).message).to.match(/^the file is a ZIP archive \(neither an OOXML package/);
    expect(refusal(await zipOf([{ name: 'mimetype', text: 'application/vnd.oasis.opendocument.graphics', store: true }, { name: 'content.xml', text: '<x/>' }])).message)
      .to.match(/an OpenDocument file of a kind this service does not convert \(graphics\)/);
    const hollow = await zipOf([
      { name: '[Content_Types].xml', text: '<Types><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>' },
    ]);
    expect(refusal(hollow)).to.equal({ code: 'CORRUPT_INPUT', message: 'the file says it is a Word document (DOCX) but does not hold its main part /word/document.xml: it is damaged' });
    expect(refusal(Buffer.alloc(0)).message).to.match(/^the file is empty, not an Office document/);
    expect(refusal(compoundFile(['Contents'])).message).to.match(/an OLE2 compound file holding no Word, Excel or PowerPoint stream/);
  });

  it('encrypted documents are refused: an OOXML package encrypted into a compound file', () => {
    expect(refusal(compoundFile(['EncryptionInfo', 'EncryptedPackage']))).to.equal({
      code: 'UNSUPPORTED_TYPE',
      message: 'the document (an encrypted OOXML package) is password-protected (encrypted): it cannot be converted without its password; remove the protection and send it again',
    });
  });

  it('ZIP bombs are bounded from the directory: declared unpacked size and number of parts', async () => {
    const bomb = declaringUnpackedSize(await docx(), 200 * 1024 * 1024);
    expect(refusal(bomb)).to.equal({ code: 'LIMIT_EXCEEDED', message: 'the package\'s parts unpack to more than 512 MB, more than one conversion unpacks' });
    const crowded = await zipOf([
      { name: 'mimetype', text: 'application/vnd.oasis.opendocument.text', store: true },
      ...Array.from({ length: OFFICE_ZIP_LIMITS.entries }, (_, i) => ({ name: `Pictures/${i}.xml`, text: '' })),
    ]);
    expect(refusal(crowded)).to.equal({ code: 'LIMIT_EXCEEDED', message: `the package holds ${OFFICE_ZIP_LIMITS.entries + 1} parts; at most ${OFFICE_ZIP_LIMITS.entries} are converted` });
  });
});
