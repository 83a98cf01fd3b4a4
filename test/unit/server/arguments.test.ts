// server/arguments.ts: MCP tool arguments and JSON bodies read into the raw request the multipart
// form gives. The edges a service test does not walk: base64 that is not standard, the size read
// from the base64 before decoding (one byte past the limit), a file given both ways, "file" and
// "files" swapped, and delivery and deliver_to together.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { operationById } from '../../../operations/index.js';
import { readArguments, takeDelivery } from '../../../server/arguments.js';
import { MCP_MAX_DECODED_BYTES } from '../../../core/protocol.js';
import { ServiceError } from '../../../core/errors.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const split = operationById('pdf.split');
const merge = operationById('pdf.merge');

function refusal(work: () => unknown): [string, number, string, string | undefined] {
  const err = expect(work).to.throw(ServiceError) as ServiceError;
  return [err.code, err.status, err.message, err.extra.field];
}

describe('server/arguments', () => {
  it('a file as standard base64 with its media type, the fields as given, inline by default', () => {
    const raw = readArguments(split, { file: { data: 'JVBERi0xLjc=', mediaType: 'Application/PDF' }, ranges: '1-2' });
    expect([Buffer.from(raw.uploads[0] as Uint8Array).toString(), raw.fields, raw.delivery, raw.declared])
      .to.equal(['%PDF-1.7', { ranges: '1-2' }, { kind: 'inline' }, [{ mediaType: 'application/pdf' }]]);
    const byUrl = readArguments(merge, { files: [{ url: 'https://example.com/a.pdf' }, { data: 'JVBERg==' }], delivery: 'link' });
    expect([byUrl.uploads[0], byUrl.delivery, byUrl.declared])
      .to.equal([{ url: 'https://example.com/a.pdf', field: 'files[0].url' }, { kind: 'link' }, [undefined, undefined]]);
  });

  it('base64 that is not standard is refused naming the argument: URL-safe, unpadded, with whitespace', () => {
    for (const data of ['JVBERi0xLjc', 'JVBERi0x_jc=', 'JVBE Ri0xLjc=', 'JVBERi0xLjc=\n', '====']) {
      expect(refusal(() => readArguments(split, { file: { data } })), JSON.stringify(data)).to.equal(['FIELD_INVALID', 422,
        'file.data is not standard base64 (RFC 4648 alphabet with padding, no whitespace or URL-safe characters)', 'file']);
    }
  });

  it('the size is read from the base64 before decoding: the limit passes, one byte more is 413 naming both', () => {
    const base64Of = (bytes: number) => {
      const whole = Math.floor(bytes / 3) * 4;
      const rest = bytes % 3;
      return 'A'.repeat(whole) + (rest === 0 ? '' : rest === 1 ? 'AA==' : 'AAA=');
    };
    const atLimit = readArguments(split, { file: { data: base64Of(MCP_MAX_DECODED_BYTES) } }).uploads[0] as Uint8Array;
    expect(atLimit.length).to.equal(MCP_MAX_DECODED_BYTES);
    expect(refusal(() => readArguments(split, { file: { data: base64Of(MCP_MAX_DECODED_BYTES + 1) } }))).to.equal(['PAYLOAD_TOO_LARGE', 413,
      `file decodes to ${MCP_MAX_DECODED_BYTES + 1} bytes; a call takes at most ${MCP_MAX_DECODED_BYTES} bytes of base64 files: give larger files as { "url": … }`, 'file']);
    const half = base64Of(MCP_MAX_DECODED_BYTES / 2 + 1);
    expect(refusal(() => readArguments(merge, { files: [{ data: half }, { data: half }] }))).to.equal(['PAYLOAD_TOO_LARGE', 413,
      `the files decode to ${MCP_MAX_DECODED_BYTES + 2} bytes; a call takes at most ${MCP_MAX_DECODED_BYTES} bytes of base64 files: give larger files as { "url": … }`, 'files']);
  });

  it('a file given both ways or neither, "file" for a merge and "files" for one file are refused naming the argument', () => {
    const shape = 'must be an object { "data": <standard base64>, "mediaType"? } or { "url": "https://…" }';
    expect(refusal(() => readArguments(split, { file: { data: 'JVBERg==', url: 'https://example.com/a.pdf' } })))
      .to.equal(['FIELD_INVALID', 422, `file ${shape}`, 'file']);
    expect(refusal(() => readArguments(split, { file: 'JVBERg==' }))).to.equal(['FIELD_INVALID', 422, `file ${shape}`, 'file']);
    expect(refusal(() => readArguments(merge, { files: [{ data: 'JVBERg==' }, [1]] })))
      .to.equal(['FIELD_INVALID', 422, `files[1] ${shape}`, 'files[1]']);
    expect(refusal(() => readArguments(merge, { file: { data: 'JVBERg==' } }))).to.equal(['FIELD_INVALID', 422, 'svc_pdf_merge takes "files" (an array), not "file"', 'file']);
    expect(refusal(() => readArguments(merge, { files: { data: 'JVBERg==' } }))).to.equal(['FIELD_INVALID', 422, '"files" must be an array of { data } or { url } objects', 'files']);
    expect(refusal(() => readArguments(split, { files: [] }))).to.equal(['FIELD_INVALID', 422, 'svc_pdf_split takes one "file", not "files"', 'files']);
    expect(readArguments(split, undefined).uploads).to.equal([]);
  });

  it('delivery and deliver_to: taken out of the fields; an unknown delivery, a URL that is not a string, or both together are refused', () => {
    const fields: Record<string, unknown> = { ranges: '1', delivery: '', deliver_to: 'https://bucket.example/put' };
    expect(takeDelivery(fields)).to.equal({ kind: 'push', url: 'https://bucket.example/put' });
    expect(fields).to.equal({ ranges: '1' });
    expect(takeDelivery({ delivery: 'inline', deliver_to: '' })).to.equal({ kind: 'inline' });
    expect(refusal(() => takeDelivery({ delivery: 'email' }))).to.equal(['FIELD_INVALID', 422, '"delivery" must be one of "inline", "link"; received "email"', 'delivery']);
    expect(refusal(() => takeDelivery({ delivery: 3 }))).to.equal(['FIELD_INVALID', 422, '"delivery" must be one of "inline", "link"; received number', 'delivery']);
    expect(refusal(() => takeDelivery({ deliver_to: { url: 'x' } }))).to.equal(['FIELD_INVALID', 422, '"deliver_to" must be an https URL the result is PUT to', 'deliver_to']);
    expect(refusal(() => takeDelivery({ delivery: 'link', deliver_to: 'https://bucket.example/put' }))).to.equal(['FIELD_INVALID', 422,
      '"deliver_to" and "delivery": "link" cannot be combined: the result is either pushed to your URL or kept for a link', 'deliver_to']);
  });
});
