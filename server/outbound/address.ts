// Which IP addresses the service refuses to connect to on a buyer's behalf. A buyer's URL must
// not reach this host, its network, or its cloud's metadata service, so only public unicast
// addresses pass. Addresses arrive already normalised (the WHATWG URL parser turns 2130706433,
// 0177.0.0.1, 0x7f.1 and 127.1 into 127.0.0.1; resolvers answer in standard notation).
import { isIPv4, isIPv6 } from 'node:net';

interface Range {
  bytes: Uint8Array;
  prefixBits: number;
  /** Words for an error message: "a private address (RFC 1918)". */
  refused: string;
}

/** IPv6 ranges that carry an IPv4 address: it is the embedded address that gets vetted. */
interface Embedding {
  range: Range;
  /** Where the IPv4 address sits in the 16 bytes. */
  offset: number;
}

const PRIVATE = 'a private address (RFC 1918)';
const DOCUMENTATION = 'a documentation address';

// First match wins, so narrower ranges come before the ranges that contain them.
const IPV4_REFUSED: readonly Range[] = [
  ['0.0.0.0/8', 'an unspecified address (0.0.0.0/8, which reaches this host)'],
  ['10.0.0.0/8', PRIVATE],
  ['100.64.0.0/10', 'a carrier-grade NAT address (100.64.0.0/10)'],
  ['127.0.0.0/8', 'a loopback address'],
  ['169.254.0.0/16', 'a link-local address (169.254.0.0/16, where cloud metadata services answer)'],
  ['172.16.0.0/12', PRIVATE],
  ['192.0.0.0/24', 'an IETF protocol assignment (192.0.0.0/24)'],
  ['192.0.2.0/24', `${DOCUMENTATION} (192.0.2.0/24)`],
  ['192.88.99.0/24', 'a deprecated 6to4 relay address (192.88.99.0/24)'],
  ['192.168.0.0/16', PRIVATE],
  ['198.18.0.0/15', 'a benchmarking address (198.18.0.0/15)'],
  ['198.51.100.0/24', `${DOCUMENTATION} (198.51.100.0/24)`],
  ['203.0.113.0/24', `${DOCUMENTATION} (203.0.113.0/24)`],
  ['224.0.0.0/4', 'a multicast address'],
  ['255.255.255.255/32', 'the broadcast address'],
  ['240.0.0.0/4', 'a reserved address (240.0.0.0/4)'],
].map(([cidr, refused]) => range(cidr, refused));

const IPV6_EMBEDDING: readonly Embedding[] = [
  { range: range('::ffff:0:0/96', 'an IPv4-mapped form'), offset: 12 },
  { range: range('64:ff9b::/96', 'a NAT64 form'), offset: 12 },
  { range: range('2002::/16', 'a 6to4 form'), offset: 2 },
];

const IPV6_REFUSED: readonly Range[] = [
  ['::/128', 'the unspecified address (::, which reaches this host)'],
  ['::1/128', 'the loopback address'],
  ['64:ff9b:1::/48', 'a local-use NAT64 address (64:ff9b:1::/48)'],
  ['100::/64', 'a discard-only address (100::/64)'],
  ['2001::/32', 'a Teredo tunnel address (2001::/32)'],
  ['2001:2::/48', 'a benchmarking address (2001:2::/48)'],
  ['2001:db8::/32', `${DOCUMENTATION} (2001:db8::/32)`],
  ['2001::/23', 'an IETF protocol assignment (2001::/23)'],
  ['3fff::/20', `${DOCUMENTATION} (3fff::/20)`],
  ['fc00::/7', 'a unique-local address (fc00::/7)'],
  ['fe80::/10', 'a link-local address (fe80::/10)'],
  ['fec0::/10', 'a deprecated site-local address (fec0::/10)'],
  ['ff00::/8', 'a multicast address'],
].map(([cidr, refused]) => range(cidr, refused));

// Only 2000::/3 is allocated for global unicast; whatever lies outside it and is not named
// above (IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d, unassigned space) is refused too.
const IPV6_GLOBAL_UNICAST = range('2000::/3', '');

/**
 * Why the service refuses to connect to this address, in words for an error message
 * ("a private address (RFC 1918)"); undefined for a public address it may connect to.
 */
export function refusedAddressClass(address: string): string | undefined {
  const v4 = ipv4Bytes(address);
  if (v4) return IPV4_REFUSED.find((r) => contains(r, v4))?.refused;
  const v6 = ipv6Bytes(address);
  if (!v6) return 'not an IP address';
  for (const { range: form, offset } of IPV6_EMBEDDING) {
    if (!contains(form, v6)) continue;
    const embedded = v6.subarray(offset, offset + 4);
    const refused = IPV4_REFUSED.find((r) => contains(r, embedded))?.refused;
    return refused && `${form.refused} of ${embedded.join('.')}, ${refused}`;
  }
  const named = IPV6_REFUSED.find((r) => contains(r, v6))?.refused;
  if (named) return named;
  return contains(IPV6_GLOBAL_UNICAST, v6) ? undefined : 'not a global unicast address (outside 2000::/3)';
}

function range(cidr: string, refused: string): Range {
  const [address, bits] = cidr.split('/');
  const bytes = ipv4Bytes(address) ?? ipv6Bytes(address);
  if (!bytes) throw new Error(`not an address range: ${cidr}`);
  return { bytes, prefixBits: Number(bits), refused };
}

function contains(r: Range, bytes: Uint8Array): boolean {
  if (bytes.length !== r.bytes.length) return false;
  for (let bit = 0; bit < r.prefixBits; bit += 8) {
    const mask = (0xff << Math.max(0, 8 - (r.prefixBits - bit))) & 0xff;
    if ((bytes[bit / 8] & mask) !== (r.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

/** Dotted-decimal IPv4 only: every other notation was normalised before it got here. */
function ipv4Bytes(text: string): Uint8Array | undefined {
  return isIPv4(text) ? Uint8Array.from(text.split('.'), Number) : undefined;
}

function ipv6Bytes(text: string): Uint8Array | undefined {
  if (!isIPv6(text)) return undefined;
  let groups = text.split('%')[0];
  // A dotted IPv4 tail (::ffff:127.0.0.1) stands for the last two 16-bit groups.
  const lastColon = groups.lastIndexOf(':');
  const tail = ipv4Bytes(groups.slice(lastColon + 1));
  if (tail) groups = `${groups.slice(0, lastColon + 1)}${((tail[0] << 8) | tail[1]).toString(16)}:${((tail[2] << 8) | tail[3]).toString(16)}`;
  const [head, rest] = groups.split('::');
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest ? rest.split(':') : [];
  const all = rest === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - restGroups.length).fill('0'), ...restGroups];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  });
  return bytes;
}
