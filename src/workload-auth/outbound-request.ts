import { Agent, request } from 'undici';

/** Limits of every call Coffer makes to a cluster's TokenReview API or a JWKS URL. */
export const OUTBOUND_LIMITS = {
  connectTimeoutMs: 5_000,
  /** The whole call, from connecting to the last byte of the answer. */
  totalTimeoutMs: 10_000,
  maxResponseBytes: 256 * 1024,
};

/**
 * Why an outbound call failed, in words fit for a log line: never the answer's body, the URL's credentials
 * or a token.
 */
export class OutboundError extends Error {
  readonly reason: 'unreachable' | 'timeout' | 'status' | 'too-large' | 'not-json';
  readonly status: number | undefined;
  /** The system's error code (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT...) when the call could not be made. */
  readonly code: string | undefined;

  constructor(reason: OutboundError['reason'], status?: number, cause?: unknown) {
    const code = errorCode(cause);
    super(`outbound call failed: ${reason}${status === undefined ? '' : ` ${status}`}${code ? ` (${code})` : ''}`);
    this.reason = reason;
    this.status = status;
    this.code = code;
  }
}

export interface OutboundCall {
  method: 'GET' | 'POST';
  url: URL;
  headers?: Record<string, string>;
  body?: string;
  /** PEM certificates to trust instead of the system's (a cluster's own CA). */
  caCert?: string;
}

/**
 * One HTTPS call with a JSON answer: TLS verified (against `caCert` when given), no redirect followed (a 3xx is
 * a failure), connect and total timeouts, and the answer read up to OUTBOUND_LIMITS.maxResponseBytes only.
 */
export async function requestJson(call: OutboundCall, limits = OUTBOUND_LIMITS): Promise<{ status: number; json: unknown }> {
  const agent = new Agent({ connect: { timeout: limits.connectTimeoutMs, ...(call.caCert ? { ca: call.caCert } : {}) } });
  const signal = AbortSignal.timeout(limits.totalTimeoutMs);
  try {
    const response = await request(call.url, {
      method: call.method,
      headers: { accept: 'application/json', ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}), ...call.headers },
      body: call.body,
      dispatcher: agent,
      signal,
    }).catch((error: unknown) => {
      throw signal.aborted ? new OutboundError('timeout') : new OutboundError('unreachable', undefined, error);
    });
    const text = await readCapped(response.body, limits.maxResponseBytes, signal);
    if (response.statusCode < 200 || response.statusCode >= 300) throw new OutboundError('status', response.statusCode);
    try {
      return { status: response.statusCode, json: JSON.parse(text) };
    } catch {
      throw new OutboundError('not-json', response.statusCode);
    }
  } finally {
    void agent.destroy().catch(() => undefined);
  }
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | undefined)?.cause?.code ?? (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : undefined;
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, maxBytes: number, signal: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > maxBytes) {
        body.destroy();
        throw new OutboundError('too-large');
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof OutboundError) throw error;
    throw signal.aborted ? new OutboundError('timeout') : new OutboundError('unreachable');
  }
  return Buffer.concat(chunks).toString('utf8');
}
