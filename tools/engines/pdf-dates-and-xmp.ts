// PDF dates and XMP packets as text: PDF date strings to ISO 8601 and back, the PDF/A claim of a
// packet, and the edit that writes set-metadata's properties into a packet (or a new one) while
// keeping the rest of it. Pure string work, used by the MuPDF.js child (./mupdf-js-forms.ts).
import type { MetadataKey } from './mupdf-js.js';

/**
 * A PDF date string (D:YYYYMMDDHHmmSSOHH'mm', every part after the year optional; Z00'00' as some write it) as ISO 8601,
 * with its time zone when it gives one; null when it is not a date.
 */
export function isoDate(pdfDate: string | undefined): string | null {
  if (!pdfDate) return null;
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz])(?:00'?(?:00)?'?)?|([+-])(\d{2})'?(\d{2})?'?)?\s*$/.exec(pdfDate.trim());
  if (!m) return null;
  const [, year, month = '01', day = '01', hour = '00', minute = '00', second = '00', zulu, sign, tzHour, tzMinute = '00'] = m;
  const ranges: [string, number, number][] = [[month, 1, 12], [day, 1, 31], [hour, 0, 23], [minute, 0, 59], [second, 0, 59]];
  if (ranges.some(([v, lo, hi]) => Number(v) < lo || Number(v) > hi)) return null;
  const zone = zulu ? 'Z' : sign ? `${sign}${tzHour}:${tzMinute}` : '';
  return `${year}-${month}-${day}T${hour}:${minute}:${second}${zone}`;
}

/** The date as PDF writes it, in UTC. */
export function pdfDate(iso: string): string {
  return `D:${iso.replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

/** The packet's text: UTF-8 unless it starts with a UTF-16 byte order mark. */
export function decodePacket(bytes: Uint8Array): string {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  return new TextDecoder('utf-8').decode(bytes);
}

const NS = {
  dc: 'http://purl.org/dc/elements/1.1/', pdf: 'http://ns.adobe.com/pdf/1.3/', xmp: 'http://ns.adobe.com/xap/1.0/',
  pdfaid: 'http://www.aiim.org/pdfa/ns/id/', rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
} as const;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The prefixes the packet binds to a namespace (xap: and xmp: both name the XMP basic namespace in the wild). */
function prefixesOf(xmp: string, namespace: string): string[] {
  const found = [...xmp.matchAll(new RegExp(`xmlns:([A-Za-z_][\\w.-]*)\\s*=\\s*["']${escapeRegExp(namespace)}["']`, 'g'))].map((m) => m[1]);
  return [...new Set(found)];
}

/** A simple property's value, written as an attribute or as an element. */
function simpleProperty(xmp: string, namespace: string, local: string): string | undefined {
  for (const prefix of prefixesOf(xmp, namespace)) {
    const name = escapeRegExp(`${prefix}:${local}`);
    const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(xmp) ?? new RegExp(`<${name}(?:\\s[^>]*)?>([^<]*)</${name}>`).exec(xmp);
    if (m) return (m[1] ?? m[2]).trim();
  }
  return undefined;
}

/** "2B" from pdfaid:part 2 and pdfaid:conformance B; null when the packet claims no PDF/A part. */
export function pdfaClaim(xmp: string | null): string | null {
  if (!xmp) return null;
  const part = simpleProperty(xmp, NS.pdfaid, 'part');
  if (!part || !/^\d+$/.test(part)) return null;
  return `${part}${(simpleProperty(xmp, NS.pdfaid, 'conformance') ?? '').toUpperCase()}`;
}

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The XMP properties set-metadata writes, in XMP's own shapes (language alternatives, ordered lists). */
export function xmpProperties(values: Record<MetadataKey, string | null>, now: string): string {
  const alt = (s: string) => `<rdf:Alt><rdf:li xml:lang="x-default">${escapeXml(s)}</rdf:li></rdf:Alt>`;
  const lines = [
    values.title !== null ? `<dc:title>${alt(values.title)}</dc:title>` : '',
    values.author !== null ? `<dc:creator><rdf:Seq><rdf:li>${escapeXml(values.author)}</rdf:li></rdf:Seq></dc:creator>` : '',
    values.subject !== null ? `<dc:description>${alt(values.subject)}</dc:description>` : '',
    values.keywords !== null ? `<pdf:Keywords>${escapeXml(values.keywords)}</pdf:Keywords>` : '',
    values.creator !== null ? `<xmp:CreatorTool>${escapeXml(values.creator)}</xmp:CreatorTool>` : '',
    `<xmp:ModifyDate>${now}</xmp:ModifyDate>`, `<xmp:MetadataDate>${now}</xmp:MetadataDate>`,
  ].filter(Boolean);
  return `<rdf:Description rdf:about="" xmlns:dc="${NS.dc}" xmlns:pdf="${NS.pdf}" xmlns:xmp="${NS.xmp}">\n${lines.join('\n')}\n</rdf:Description>`;
}

/** The properties set-metadata owns, under whatever prefixes the packet binds their namespaces to. */
const OWNED: Array<[string, string]> = [
  [NS.dc, 'title'], [NS.dc, 'creator'], [NS.dc, 'description'], [NS.pdf, 'Keywords'],
  [NS.xmp, 'CreatorTool'], [NS.xmp, 'ModifyDate'], [NS.xmp, 'MetadataDate'],
];

/**
 * The packet with the owned properties removed wherever they stand (attributes, empty elements,
 * elements with content) and written once, in a description of their own inside rdf:RDF; the
 * rest of the packet (a PDF/A claim among it) stays as it was. undefined when it has no rdf:RDF.
 */
export function updatedPacket(xmp: string, properties: string): string | undefined {
  let text = xmp;
  for (const [namespace, local] of OWNED) {
    for (const prefix of prefixesOf(text, namespace)) {
      const name = escapeRegExp(`${prefix}:${local}`);
      text = text.replace(new RegExp(`<${name}(?:\\s[^>]*)?/>`, 'g'), '')
        .replace(new RegExp(`<${name}(?:\\s[^>]*)?>[\\s\\S]*?</${name}>`, 'g'), '')
        .replace(new RegExp(`\\s${name}\\s*=\\s*(?:"[^"]*"|'[^']*')`, 'g'), '');
    }
  }
  const rdfPrefix = prefixesOf(text, NS.rdf)[0];
  if (rdfPrefix === undefined) return undefined;
  const open = new RegExp(`<${escapeRegExp(rdfPrefix)}:RDF(?:\\s[^>]*)?>`).exec(text);
  if (!open) return undefined;
  const described = rdfPrefix === 'rdf' ? properties : properties.replace(/(<\/?)rdf:/g, `$1${rdfPrefix}:`).replace(/\srdf:about/g, ` ${rdfPrefix}:about`);
  const at = open.index + open[0].length;
  return `${text.slice(0, at)}\n${described}${text.slice(at)}`;
}

export function newPacket(properties: string): string {
  return `<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n<x:xmpmeta xmlns:x="adobe:ns:meta/">\n`
    + `<rdf:RDF xmlns:rdf="${NS.rdf}">\n${properties}\n</rdf:RDF>\n</x:xmpmeta>\n<?xpacket end="w"?>`;
}
