import { describe, expect, test } from 'vitest';
import { isPrivateAddress } from '../../src/outbound/outbound.ts';

/** COFFER_OUTBOUND_DENY_PRIVATE: a receiver is allowed only on a globally routable unicast address. */
describe('isPrivateAddress', () => {
  test.each([
    ['0.0.0.0', 'this network'],
    ['10.1.2.3', 'private'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.1', 'IETF protocol assignments'],
    ['192.0.2.1', 'documentation'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.7', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::a9fe:a9fe', 'IPv4-compatible, in hex'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, in hex'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['64:ff9b::7f00:1', 'NAT64'],
    ['64:ff9b::808:808', 'NAT64 of a public address'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['100::1', 'discard-only'],
    ['2001::1', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['2002:7f00:1::1', '6to4'],
    ['3fff::1', 'documentation'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fe80::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'global multicast'],
    ['localhost', 'not an address'],
    ['', 'not an address'],
  ])('%s (%s) is refused', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  test.each([
    ['1.1.1.1'],
    ['8.8.8.8'],
    ['100.63.255.255'],
    ['100.128.0.1'],
    ['172.15.255.255'],
    ['172.32.0.1'],
    ['192.0.1.1'],
    ['198.17.255.255'],
    ['198.20.0.1'],
    ['223.255.255.254'],
    ['::ffff:8.8.8.8'],
    ['::ffff:808:808'],
    ['2001:4860:4860::8888'],
    ['2606:4700:4700::1111'],
    ['2a00:1450:4001:80b::200e'],
  ])('%s (globally routable unicast) is allowed', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});
