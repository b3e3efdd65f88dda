import { once } from 'node:events';
import { AsyncResource } from 'node:async_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';

/** One server-sent event. */
export interface ServerSentEvent {
  id?: string;
  event?: string;
  data?: string;
}

/** What a stream sends: next() resolves with events, or null when the stream is over. */
export interface EventSource {
  next(): Promise<ServerSentEvent[] | null>;
  /** The heartbeat event (default: `event: ping` without data). */
  heartbeat?(): ServerSentEvent;
  close(): void;
}

export interface StreamOptions {
  /** A `ping` event this often, so clients and proxies know the stream is alive. */
  heartbeatMs: number;
  /**
   * Called this often, and whenever `wakeOn` calls (access may have ended, also since the caller was authenticated:
   * caches/access-watch.ts); a rejection ends the stream with an `error` event (e.g. the token was revoked).
   */
  recheck?: { everyMs: number; run: () => Promise<void>; wakeOn?: (listener: () => void) => Promise<() => void> };
  /** A client that reads nothing of what waits for it for this long is dropped (default 60 s). */
  stallTimeoutMs?: number;
}

/** A client that has not read this much of what was written is dropped rather than buffered for. */
const MAX_UNREAD_BYTES = 1024 * 1024;

export const SSE_HEADERS = {
  'cache-control': 'no-cache',
  'content-type': 'text/event-stream',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/** Resolves true once the response drains (or closes), false when it has not within `timeoutMs`. */
async function drained(raw: FastifyReply['raw'], timeoutMs: number): Promise<boolean> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    await Promise.race([once(raw, 'drain', { signal: controller.signal }), once(raw, 'close', { signal: controller.signal })]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/** The `error` event that ends a stream: why, with the status and code a request would have been refused with. */
export function errorEvent(error: unknown): ServerSentEvent {
  const message = error instanceof Error ? error.message : 'The subscription is no longer allowed';
  const refusal = error instanceof AppError ? { statusCode: error.statusCode, error: error.error, code: error.code } : {};
  return { event: 'error', data: JSON.stringify({ message, ...refusal }) };
}

export function formatEvent(event: ServerSentEvent): string {
  let text = '';
  if (event.id !== undefined) text += `id: ${event.id}\n`;
  if (event.event !== undefined) text += `event: ${event.event}\n`;
  if (event.data !== undefined) for (const line of event.data.split('\n')) text += `data: ${line}\n`;
  return `${text}\n`;
}

/**
 * Takes over the response and writes `source`'s events as text/event-stream until the
 * source ends, the client goes away or a recheck fails. A slow reader is waited for
 * (nothing more is pulled from the source until the socket drains), never buffered
 * for without bound, and dropped when it reads nothing for `stallTimeoutMs`; the
 * source is always closed at the end.
 */
export async function streamEvents(request: FastifyRequest, reply: FastifyReply, source: EventSource, options: StreamOptions): Promise<void> {
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(200, SSE_HEADERS);
  raw.flushHeaders();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    clearTimeout(recheck);
    stopWaking?.();
    source.close();
    if (!raw.destroyed) raw.end();
  };
  const write = (text: string): boolean => {
    if (ended || raw.destroyed) return false;
    if (raw.writableLength > MAX_UNREAD_BYTES) {
      request.log.info('event stream dropped: the client is not reading');
      end();
      raw.destroy();
      return false;
    }
    return raw.write(text);
  };
  request.raw.socket?.setKeepAlive(true);
  raw.on('close', end);
  const heartbeat = setInterval(() => {
    if (!raw.writableNeedDrain) write(formatEvent(source.heartbeat?.() ?? { event: 'ping' }));
  }, options.heartbeatMs);
  // each stream rechecks at its own moment (±25 %), so streams opened together do not recheck together
  const nextRecheck = () => setTimeout(runRecheck, (options.recheck?.everyMs ?? 60_000) * (0.75 + Math.random() * 0.5)).unref();
  let rechecking = false;
  /** A wake-up came while a recheck ran: one more follows it (what it saw may predate that write). */
  let recheckAgain = false;
  const runRecheck = () => {
    if (ended || !options.recheck) return;
    if (rechecking) {
      recheckAgain = true;
      return;
    }
    rechecking = true;
    clearTimeout(recheck);
    options.recheck.run().then(
      () => {
        rechecking = false;
        if (ended) return;
        recheck = nextRecheck();
        if (recheckAgain) {
          recheckAgain = false;
          runRecheck();
        }
      },
      (error: unknown) => {
        rechecking = false;
        write(formatEvent(errorEvent(error)));
        end();
      },
    );
  };
  let recheck: NodeJS.Timeout | undefined = options.recheck ? nextRecheck() : undefined;
  // in this request's async context: the recheck reads the cache versions as a request of its own
  let stopWaking: (() => void) | undefined;
  const wakeOn = options.recheck?.wakeOn;
  if (wakeOn) {
    const stop = await wakeOn(AsyncResource.bind(runRecheck));
    if (ended) stop();
    else stopWaking = stop;
  }
  heartbeat.unref();
  try {
    for (;;) {
      const events = await source.next();
      if (events === null || ended) break;
      const flushed = write(events.map(formatEvent).join(''));
      if (!flushed && !ended && !raw.destroyed && !(await drained(raw, options.stallTimeoutMs ?? 60_000))) {
        request.log.info('event stream dropped: the client stopped reading');
        end();
        raw.destroy();
      }
    }
  } catch (error) {
    request.log.warn({ err: error }, 'event stream failed');
  } finally {
    end();
  }
}
