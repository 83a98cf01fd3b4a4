// tools/engines/pdf-dates-and-xmp.ts: PDF dates to ISO 8601, the PDF/A claim of an
// XMP packet, and the packet edit that keeps Info and XMP alike. The MuPDF.js parts run in
// service/operations/pdf-forms and pdf-metadata.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { isoDate, pdfaClaim, pdfDate, updatedPacket } from '../../../../tools/engines/pdf-dates-and-xmp.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('PDF dates', () => {
  it('become ISO 8601 with the time zone they give, and none when they give none', () => {
    expect(isoDate("D:20230102030405+05'30'")).to.equal('2023-01-02T03:04:05+05:30');
    expect(isoDate("D:20230102030405-08'00")).to.equal('2023-01-02T03:04:05-08:00');
    expect(isoDate('D:20230102030405Z')).to.equal('2023-01-02T03:04:05Z');
    expect(isoDate("D:20230102030405Z00'00'")).to.equal('2023-01-02T03:04:05Z');
    expect(isoDate('D:20230102030405')).to.equal('2023-01-02T03:04:05');
    expect(isoDate('D:2023')).to.equal('2023-01-01T00:00:00');
    expect(isoDate('20230102')).to.equal('2023-01-02T00:00:00');
    expect(isoDate('D:20231302')).to.equal(null);
    expect(isoDate('yesterday')).to.equal(null);
    expect(isoDate(undefined)).to.equal(null);
  });

  it('are written in UTC', () => {
    expect(pdfDate('2026-11-28T19:02:17.123Z')).to.equal('D:20261128190217Z');
  });
});

describe('the PDF/A claim', () => {
  it('reads part and conformance as attributes or elements, under any prefix bound to the namespace', () => {
    expect(pdfaClaim('<x xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" pdfaid:part="2" pdfaid:conformance="B"/>')).to.equal('2B');
    expect(pdfaClaim('<x xmlns:a="http://www.aiim.org/pdfa/ns/id/"><a:part>3</a:part><a:conformance>u</a:conformance></x>')).to.equal('3U');
    expect(pdfaClaim('<x xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"><pdfaid:part>4</pdfaid:part></x>')).to.equal('4');
    expect(pdfaClaim('<x xmlns:pdfaid="urn:other" pdfaid:part="2"/>')).to.equal(null);
    expect(pdfaClaim(null)).to.equal(null);
  });
});

describe('the packet edit', () => {
  const packet = '<x:xmpmeta xmlns:x="adobe:ns:meta/"><r:RDF xmlns:r="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
    + '<r:Description r:about="" xmlns:xap="http://ns.adobe.com/xap/1.0/" xap:CreatorTool="Old" xap:ModifyDate="2020-01-01"/>'
    + '<r:Description r:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title><r:Alt><r:li xml:lang="x-default">Old</r:li></r:Alt></dc:title><dc:format>application/pdf</dc:format></r:Description>'
    + '</r:RDF></x:xmpmeta>';
  const properties = '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>New</dc:title></rdf:Description>';

  it('removes the owned properties under the packet\'s own prefixes, keeps the rest, and writes the new ones with its rdf prefix', () => {
    const edited = updatedPacket(packet, properties)!;
    expect(edited).to.not.contain('Old');
    expect(edited).to.not.contain('2020-01-01');
    expect(edited).to.contain('<dc:format>application/pdf</dc:format>');
    expect(edited).to.contain('<r:Description r:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>New</dc:title></r:Description>');
  });

  it('gives up on a packet without rdf:RDF', () => {
    expect(updatedPacket('<x:xmpmeta xmlns:x="adobe:ns:meta/"/>', properties)).to.equal(undefined);
  });
});
