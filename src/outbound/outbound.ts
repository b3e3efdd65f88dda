import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, request } from 'undici';

/** How an outbound delivery (a webhook's, an audit log stream's) is made: timeouts, and whether private addresses are refused. */
export interface OutboundOptions {
  timeoutMs: number;
  /** Refuse receivers on loopback, private, link-local and shared addresses (COFFER_OUTBOUND_DENY_PRIVATE). */
  denyPrivateAddresses: boolean;
}

export interface OutboundResult {
  ok: boolean;
  status: number | null;
  /** A short reason for a failure, from the error's code or the status: never the receiver's body. */
  error: string | null;
}

const PRIVATE_RANGES = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  PRIVATE_RANGES.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const) {
  PRIVATE_RANGES.addSubnet(network, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE_RANGES.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  return family === 0 ? true : PRIVATE_RANGES.check(address, family === 4 ? 'ipv4' : 'ipv6');
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
 * POSTs JSON to a receiver through undici: one attempt, bounded by `timeoutMs` for headers and body, never
 * following a redirect (a 3xx is a failure), optionally refusing private addresses.
 */
export class Outbound {
  readonly #options: OutboundOptions;
  readonly #agent: Agent;

  constructor(options: OutboundOptions) {
    this.#options = options;
    this.#agent = new Agent({
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connectTimeout: options.timeoutMs,
      ...(options.denyPrivateAddresses ? { connect: { lookup: publicOnlyLookup } } : {}),
    });
  }

  async post(url: string, body: string, headers: Record<string, string>): Promise<OutboundResult> {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (this.#options.denyPrivateAddresses && isIP(host) !== 0 && isPrivateAddress(host)) return { ok: false, status: null, error: 'PRIVATE_ADDRESS' };
    try {
      const response = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers }, dispatcher: this.#agent });
      // the body is read and dropped: it is the receiver's, never stored or logged
      await response.body.dump();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, status: response.statusCode, error: ok ? null : `HTTP ${response.statusCode}` };
    } catch (error) {
      return { ok: false, status: null, error: errorCode(error) };
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
