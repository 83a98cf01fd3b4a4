// The address classes a buyer's URL may not reach (server/outbound/address.ts): every non-public
// IPv4 and IPv6 range, named in the refusal, the IPv4-mapped, NAT64 and 6to4 forms of refused IPv4
// addresses, and the numeric host spellings that the URL parser turns into a refused address.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { refusedAddressClass } from '../../../../server/outbound/address.js';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('outbound: the address classes', () => {
  it('refuses every non-public IPv4 class, naming it', () => {
    const cases: [string, string][] = [
      ['127.0.0.1', 'a loopback address'],
      ['127.255.255.254', 'a loopback address'],
      ['10.0.0.5', 'a private address (RFC 1918)'],
      ['172.16.0.1', 'a private address (RFC 1918)'],
      ['172.31.255.255', 'a private address (RFC 1918)'],
      ['192.168.1.1', 'a private address (RFC 1918)'],
      ['169.254.169.254', 'a link-local address (169.254.0.0/16, where cloud metadata services answer)'],
      ['100.64.0.1', 'a carrier-grade NAT address (100.64.0.0/10)'],
      ['100.127.255.255', 'a carrier-grade NAT address (100.64.0.0/10)'],
      ['0.0.0.0', 'an unspecified address (0.0.0.0/8, which reaches this host)'],
      ['0.1.2.3', 'an unspecified address (0.0.0.0/8, which reaches this host)'],
      ['224.0.0.1', 'a multicast address'],
      ['239.255.255.250', 'a multicast address'],
      ['255.255.255.255', 'the broadcast address'],
      ['240.0.0.1', 'a reserved address (240.0.0.0/4)'],
      ['192.0.0.170', 'an IETF protocol assignment (192.0.0.0/24)'],
      ['192.0.2.1', 'a documentation address (192.0.2.0/24)'],
      ['198.51.100.7', 'a documentation address (198.51.100.0/24)'],
      ['203.0.113.9', 'a documentation address (203.0.113.0/24)'],
      ['198.18.0.1', 'a benchmarking address (198.18.0.0/15)'],
      ['198.19.255.255', 'a benchmarking address (198.18.0.0/15)'],
      ['192.88.99.1', 'a deprecated 6to4 relay address (192.88.99.0/24)'],
    ];
    for (const [address, refused] of cases) expect(refusedAddressClass(address), address).to.equal(refused);
  });

  it('refuses the IPv6 classes, and the IPv4-mapped, NAT64 and 6to4 forms of refused IPv4 addresses', () => {
    const cases: [string, string][] = [
      ['::1', 'the loopback address'],
      ['0:0:0:0:0:0:0:1', 'the loopback address'],
      ['::', 'the unspecified address (::, which reaches this host)'],
      ['fc00::1', 'a unique-local address (fc00::/7)'],
      ['fd12:3456:789a::1', 'a unique-local address (fc00::/7)'],
      ['fe80::1', 'a link-local address (fe80::/10)'],
      ['fe80::1%eth0', 'a link-local address (fe80::/10)'],
      ['febf::1', 'a link-local address (fe80::/10)'],
      ['fec0::1', 'a deprecated site-local address (fec0::/10)'],
      ['ff02::1', 'a multicast address'],
      ['2001:db8::1', 'a documentation address (2001:db8::/32)'],
      ['3fff::1', 'a documentation address (3fff::/20)'],
      ['2001:2::1', 'a benchmarking address (2001:2::/48)'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'a Teredo tunnel address (2001::/32)'],
      ['100::1', 'a discard-only address (100::/64)'],
      ['64:ff9b:1::a00:5', 'a local-use NAT64 address (64:ff9b:1::/48)'],
      ['::ffff:127.0.0.1', 'an IPv4-mapped form of 127.0.0.1, a loopback address'],
      ['::ffff:7f00:1', 'an IPv4-mapped form of 127.0.0.1, a loopback address'],
      ['::ffff:a9fe:a9fe', 'an IPv4-mapped form of 169.254.169.254, a link-local address (169.254.0.0/16, where cloud metadata services answer)'],
      ['::ffff:10.0.0.5', 'an IPv4-mapped form of 10.0.0.5, a private address (RFC 1918)'],
      ['64:ff9b::7f00:1', 'a NAT64 form of 127.0.0.1, a loopback address'],
      ['64:ff9b::192.168.0.1', 'a NAT64 form of 192.168.0.1, a private address (RFC 1918)'],
      ['2002:7f00:1::', 'a 6to4 form of 127.0.0.1, a loopback address'],
      ['2002:a9fe:a9fe::1', 'a 6to4 form of 169.254.169.254, a link-local address (169.254.0.0/16, where cloud metadata services answer)'],
      // IPv4-compatible (deprecated) and SIIT forms lie outside global unicast.
      ['::127.0.0.1', 'not a global unicast address (outside 2000::/3)'],
      ['::ffff:0:7f00:1', 'not a global unicast address (outside 2000::/3)'],
      ['4000::1', 'not a global unicast address (outside 2000::/3)'],
    ];
    for (const [address, refused] of cases) expect(refusedAddressClass(address), address).to.equal(refused);
    expect(refusedAddressClass('localhost')).to.equal('not an IP address');
  });

  it('lets public addresses through, in both families and their mapped, NAT64 and 6to4 forms', () => {
    for (const address of [
      '8.8.8.8', '1.1.1.1', '93.184.216.34', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0',
      '192.167.255.255', '192.169.0.0', '169.253.255.255', '198.17.255.255', '198.20.0.0', '223.255.255.255', '11.0.0.1',
      '2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1',
    ]) {
      expect(refusedAddressClass(address), address).to.be.undefined();
    }
  });

  it('numeric host forms (decimal, octal, hex, short, trailing dot) become dotted addresses in the URL parser, and are refused', () => {
    const forms = ['2130706433', '0177.0.0.1', '0x7f.0.0.1', '0x7f.1', '0x7f000001', '127.1', '127.0.1', '127.0.0.1.', '%31%32%37.0.0.1'];
    for (const form of forms) {
      const { hostname } = new URL(`https://${form}/`);
      expect(hostname, form).to.equal('127.0.0.1');
      expect(refusedAddressClass(hostname), form).to.equal('a loopback address');
    }
    expect(new URL('https://0/').hostname).to.equal('0.0.0.0');
    expect(new URL('https://0xa9fea9fe/').hostname).to.equal('169.254.169.254');
    expect(new URL('https://[0:0:0:0:0:ffff:127.0.0.1]/').hostname).to.equal('[::ffff:7f00:1]');
  });
});
