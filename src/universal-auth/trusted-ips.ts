import { BlockList, isIP } from 'node:net';
import { z } from 'zod';
import type { TrustedIp } from '../db/schema.ts';
import { required } from '../validation/input.ts';

export const ANY_ADDRESS: TrustedIp[] = [
  { ipAddress: '0.0.0.0', type: 'ipv4', prefix: 0 },
  { ipAddress: '::', type: 'ipv6', prefix: 0 },
];

/** "10.0.0.0/8", "2001:db8::/32" or a single address → a normalised range; undefined when invalid. */
export function parseTrustedIp(text: string): TrustedIp | undefined {
  const [address = '', prefixText, ...rest] = text.trim().split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const max = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return undefined;
  return { ipAddress: address.toLowerCase(), type: version === 4 ? 'ipv4' : 'ipv6', prefix };
}

/** The request schema: `[{ipAddress: "<address or CIDR>"}]`, at least one; defaults to every address. */
export const trustedIpsSchema = z
  .array(z.object({ ipAddress: required(64).describe('An IPv4 or IPv6 address or CIDR range, such as `10.0.0.0/8`.') }).describe('One address or range.'))
  .min(1)
  .transform((entries, context) => {
    const parsed = entries.map((entry) => parseTrustedIp(entry.ipAddress));
    parsed.forEach((range, index) => {
      if (!range) context.addIssue({ code: 'custom', path: [index, 'ipAddress'], message: 'must be an IPv4/IPv6 address or CIDR range' });
    });
    return parsed as TrustedIp[];
  });

/** IPv4-mapped IPv6 addresses (::ffff:1.2.3.4) count as their IPv4 address. */
function normalizeAddress(ip: string): { address: string; type: 'ipv4' | 'ipv6' } | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const address = mapped ? mapped[1]! : ip;
  const version = isIP(address);
  if (version === 0) return undefined;
  return { address, type: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Built once per ranges array: a token's ranges come from a cached row on every request. */
const blockLists = new WeakMap<TrustedIp[], BlockList>();

export function isIpTrusted(ip: string | null, ranges: TrustedIp[]): boolean {
  const client = ip ? normalizeAddress(ip) : undefined;
  if (!client) return false;
  let list = blockLists.get(ranges);
  if (!list) {
    list = new BlockList();
    for (const range of ranges) list.addSubnet(range.ipAddress, range.prefix, range.type);
    blockLists.set(ranges, list);
  }
  return list.check(client.address, client.type);
}
