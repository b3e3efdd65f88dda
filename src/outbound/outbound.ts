import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, request } from 'undici';

/** How an outbound delivery (a webhook's, an audit log stream's) is made: its deadline, and whether private addresses are refused. */
export interface OutboundOptions {
  /** The longest one post takes, from resolving the host to the receiver's status (its body is never read). */
  timeoutMs: number;
  /** Refuse receivers on any address that is not globally routable unicast (COFFER_OUTBOUND_DENY_PRIVATE). */
  denyPrivateAddresses: boolean;
}

export interface OutboundResult {
  ok: boolean;
  status: number | null;
  /** A short reason for a failure, from the error's code or the status: never the receiver's body. */
  error: string | null;
}

/** The error of a post that did not have the receiver's status within `timeoutMs`. */
export const TIMEOUT = 'TIMEOUT';

const subnets = (family: 'ipv4' | 'ipv6', ranges: [string, number][]) => {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, family);
  return list;
};
/** IPv4 that is not globally routable unicast (IANA special-purpose registry, multicast, reserved and broadcast). */
const IPV4_NOT_PUBLIC = subnets('ipv4', [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]);
const IPV4_MAPPED = subnets('ipv6', [['::ffff:0:0', 96]]);
/** IPv6 global unicast: everything else (::/8 with IPv4-compatible forms, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, ULA, link-local, multicast) is refused. */
const IPV6_GLOBAL_UNICAST = subnets('ipv6', [['2000::', 3]]);
/** Inside 2000::/3 but not a receiver: IETF protocol assignments (Teredo, benchmarking), 6to4 (an IPv4 address inside), documentation. */
const IPV6_NOT_PUBLIC = subnets('ipv6', [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
]);

/** Whether `address` is anything but a globally routable unicast address (not an IP address at all counts as private). */
export function isPrivateAddress(address: string): boolean {
  switch (isIP(address)) {
    case 4:
      return IPV4_NOT_PUBLIC.check(address, 'ipv4');
    case 6:
      // BlockList matches an IPv4-mapped address (::ffff:a.b.c.d, or in hex) against the IPv4 rules
      if (IPV4_MAPPED.check(address, 'ipv6')) return IPV4_NOT_PUBLIC.check(address, 'ipv6');
      return !IPV6_GLOBAL_UNICAST.check(address, 'ipv6') || IPV6_NOT_PUBLIC.check(address, 'ipv6');
    default:
      return true;
  }
}

/** dns.lookup that refuses a name resolving to a private address: checked on the address actually connected to. */
function publicOnlyLookup(hostname: string, options: LookupOptions, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    if (addresses.length === 0 || addresses.some((entry) => isPrivateAddress(entry.address))) {
      return callback(Object.assign(new Error('the receiver resolves to a private address'), { code: 'PRIVATE_ADDRESS' }), []);
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

/**
 * POSTs JSON to a receiver through undici: one attempt that ends within `timeoutMs` whatever the receiver does (one
 * deadline over resolving, connecting and the status line; the body is never read), never following a redirect (a
 * 3xx is a failure), optionally refusing private addresses.
 */
export class Outbound {
  readonly #options: OutboundOptions;
  readonly #agent: Agent;

  constructor(options: OutboundOptions) {
    this.#options = options;
    // undici's own timers are idle timers (a receiver sending a byte now and then resets them): the deadline in post() bounds the whole request
    this.#agent = new Agent({
      headersTimeout: 0,
      bodyTimeout: 0,
      connectTimeout: options.timeoutMs,
      ...(options.denyPrivateAddresses ? { connect: { lookup: publicOnlyLookup } } : {}),
    });
  }

  async post(url: string, body: string, headers: Record<string, string>): Promise<OutboundResult> {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (this.#options.denyPrivateAddresses && isIP(host) !== 0 && isPrivateAddress(host)) return { ok: false, status: null, error: 'PRIVATE_ADDRESS' };
    const deadline = AbortSignal.timeout(this.#options.timeoutMs);
    try {
      const response = await request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers },
        dispatcher: this.#agent,
        signal: deadline,
      });
      // the status is the receiver's answer; its body is never read (nor stored or logged), however slowly it is sent.
      // Destroying it unread makes it emit an abort error of its own: nobody waits for it
      response.body.on('error', () => {}).destroy();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, status: response.statusCode, error: ok ? null : `HTTP ${response.statusCode}` };
    } catch (error) {
      return { ok: false, status: null, error: deadline.aborted && error === deadline.reason ? TIMEOUT : errorCode(error) };
    }
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'Error';
}
