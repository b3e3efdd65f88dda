import type { Logger } from 'pino';
import { toAuditLogEntry } from '../audit/audit-schema.ts';
import type { AuditLogStream } from '../db/schema.ts';
import type { Executor } from '../db/database.ts';
import { SIGNATURE_HEADER, signDelivery } from '../outbound/delivery-signature.ts';
import { type Outbound, type OutboundResult, TIMEOUT } from '../outbound/outbound.ts';
import { retryDelay } from '../outbound/receiver-url.ts';
import { eachWithin } from '../outbound/bounded-pool.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { repeatPasses } from '../services/repeating-pass.ts';
import { openStreamHeaders, openStreamKey } from './audit-stream-cipher.ts';
import { claimDueAuditLogStreams, listSettledAuditLogsAfter, updateAuditLogStream } from './audit-stream-store.ts';

/** Milliseconds since the epoch (tests inject a clock that moves only when they say). */
export interface StreamClock {
  now(): number;
}

export interface StreamLimits {
  /** Streams one pass works on, in all and of one organization (several replicas: each claims its own). */
  perRun: number;
  perOrg: number;
  /** Streams a pass delivers to at once: a slow receiver holds only its own place (each stream's entries still go in order). */
  inParallel: number;
  /** Audit entries in one request (JSON lines), and requests to one stream per pass. */
  linesPerRequest: number;
  requestsPerRun: number;
  /**
   * How long a claim holds before another replica may take the stream (one that died mid-pass): renewed before each
   * request, so it must outlast one timed-out request; it is also how long a killed replica delays its streams.
   */
  leaseMs: number;
  /** The first retry's delay; each further failure doubles it, up to maxBackoffMs. A stream is never given up. */
  backoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  perRun: 50,
  perOrg: 10,
  inParallel: 8,
  linesPerRequest: 100,
  requestsPerRun: 10,
  leaseMs: 20_000,
  backoffMs: 1_000,
  maxBackoffMs: 5 * 60_000,
};

/** The header naming the stream a delivery belongs to. */
export const STREAM_ID_HEADER = 'x-coffer-audit-log-stream-id';

/**
 * Delivers each organization's audit log to its streams as signed JSON lines, in stream order, from each stream's
 * cursor (audit-stream-store.ts explains why the cursor skips nothing). The cursor moves only past entries the
 * receiver acknowledged with a 2xx; a failure leaves it and retries after a backoff. At least once: a replica killed
 * after the receiver answered and before the cursor moved delivers those entries again (receivers dedupe by `id`).
 */
export class AuditStreamDispatcher {
  readonly #deps: ServiceDeps;
  /** Its own bookkeeping (leases, cursors, status): operational state written outside a unit of work, like the webhook dispatcher's. */
  readonly #bookkeeping: Executor;
  readonly #outbound: Outbound;
  readonly #clock: StreamClock;
  readonly #limits: StreamLimits;

  constructor(deps: ServiceDeps, bookkeeping: Executor, outbound: Outbound, clock: StreamClock, limits: Partial<StreamLimits> = {}) {
    this.#deps = deps;
    this.#bookkeeping = bookkeeping;
    this.#outbound = outbound;
    this.#clock = clock;
    this.#limits = { ...DEFAULT_STREAM_LIMITS, ...limits };
  }

  /** One pass over the due streams; answers the audit entries delivered and whether one stream has more waiting. */
  async runOnce(): Promise<{ delivered: number; more: boolean }> {
    const now = this.#clock.now();
    const claimed = await claimDueAuditLogStreams(this.#bookkeeping, new Date(now), new Date(now + this.#limits.leaseMs), this.#limits.perRun, this.#limits.perOrg);
    const results = await eachWithin(claimed, this.#limits.inParallel, (stream) => this.#advance(stream));
    return {
      delivered: results.reduce((sum, result) => sum + result.delivered, 0),
      more: claimed.length === this.#limits.perRun || results.some((result) => result.more),
    };
  }

  /** Runs a pass now and every `intervalMs` after one ends (at once while backlogs remain); returns a function that stops it. */
  start(logger: Logger, intervalMs = 1_000): () => void {
    return repeatPasses(async () => (await this.runOnce()).more, { intervalMs, failure: 'audit log stream pass failed', logger });
  }

  async #advance(stream: AuditLogStream): Promise<{ delivered: number; more: boolean }> {
    const signingKey = openStreamKey(this.#deps.keyring, stream.orgId, stream.encryptedSecretKey);
    let delivered = 0;
    for (let request = 0; request < this.#limits.requestsPerRun; request++) {
      const after = { xact: Number(stream.cursorXact), sequence: Number(stream.cursorSequence) };
      const rows = await listSettledAuditLogsAfter(this.#deps.db, stream.orgId, after, this.#limits.linesPerRequest);
      if (rows.length === 0) break;
      const body = rows.map((row) => JSON.stringify(toAuditLogEntry(row))).join('\n') + '\n';
      const timestamp = this.#clock.now();
      const renewed = await updateAuditLogStream(this.#bookkeeping, stream.id, { leaseUntil: new Date(timestamp + this.#limits.leaseMs) });
      if (!renewed) break;
      // the URL and its headers from the same row, read now: either may have changed since the pass began
      stream = renewed;
      const result = await this.#outbound.post(stream.url, body, {
        ...this.#headersOf(stream),
        'content-type': 'application/x-ndjson',
        [SIGNATURE_HEADER]: signDelivery(signingKey, timestamp, body),
        [STREAM_ID_HEADER]: stream.id,
      });
      if (!result.ok) {
        await this.#failed(stream, result);
        return { delivered, more: false };
      }
      const last = rows.at(-1)!;
      delivered += rows.length;
      const moved = await updateAuditLogStream(this.#bookkeeping, stream.id, {
        cursorXact: Number(last.xact),
        cursorSequence: Number(last.sequence),
        lastDeliveredId: last.id,
        lastDeliveredAt: new Date(timestamp),
        consecutiveFailures: 0,
        lastError: null,
      });
      if (!moved) return { delivered, more: false };
      stream = moved;
      if (rows.length < this.#limits.linesPerRequest) break;
    }
    const more = delivered === this.#limits.linesPerRequest * this.#limits.requestsPerRun;
    await updateAuditLogStream(this.#bookkeeping, stream.id, { leaseUntil: null, nextAttemptAt: new Date(this.#clock.now()) });
    return { delivered, more };
  }

  #headersOf(stream: AuditLogStream): Record<string, string> {
    return Object.fromEntries(openStreamHeaders(this.#deps.keyring, stream.orgId, stream.encryptedHeaders).map(({ key, value }) => [key, value]));
  }

  /** A failed delivery: the cursor stays; tried again after the backoff, with the reason as a fixed sentence. */
  async #failed(stream: AuditLogStream, result: OutboundResult): Promise<void> {
    const failures = stream.consecutiveFailures + 1;
    const now = this.#clock.now();
    await updateAuditLogStream(this.#bookkeeping, stream.id, {
      consecutiveFailures: failures,
      lastError: failureSentence(result),
      lastErrorAt: new Date(now),
      leaseUntil: null,
      nextAttemptAt: new Date(now + retryDelay(failures, this.#limits.backoffMs, this.#limits.maxBackoffMs)),
    });
  }
}

/** One of a fixed set of sentences: never text the receiver chose (its body) or a value of the audit log. */
export function failureSentence(result: OutboundResult): string {
  if (result.status !== null) return `The receiver answered with HTTP status ${result.status}, not 2xx`;
  switch (result.error) {
    case 'PRIVATE_ADDRESS':
      return 'The receiver is on a private address, which COFFER_OUTBOUND_DENY_PRIVATE refuses';
    case 'ECONNREFUSED':
      return 'The receiver refused the connection';
    case TIMEOUT:
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'The receiver did not answer in time';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return "The receiver's host name did not resolve";
    default:
      return 'The delivery failed before the receiver answered';
  }
}
