import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { changeEvent, type ChangeEvent, resetEvent, revisionEvent, streamErrorEvent } from '../wire/operator-wire.ts';
import type { ServerConnection } from './server-connection.ts';
import type { TokenKeeper } from './token-keeper.ts';

/** One change as `GET /api/v1/changes/stream` sends it. */
export type StreamedChange = ChangeEvent;

/** An event's data parsed with its wire schema: an event of another shape ends the connection (it is read again after the reconnect). */
function eventData<Data extends z.ZodType>(event: EventSourceMessage, schema: Data): z.output<Data> {
  let json: unknown;
  try {
    json = JSON.parse(event.data);
  } catch {
    throw new Error(`the change stream sent a '${event.event}' event that is not JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new Error(`the change stream sent a '${event.event}' event of an unexpected shape (${parsed.error.issues.map((issue) => issue.path.join('.')).join(', ')})`);
  return parsed.data;
}

export interface FollowerHandlers {
  /** Changes after the last delivered revision, in order; the follower moves on once this resolves. */
  onChanges(changes: StreamedChange[]): Promise<void>;
  /** The server's log does not have the revision to resume after: everything must be read again; follows from `revision`. */
  onReset(revision: number): Promise<void>;
  /** Connected (true), or the connection was lost or refused (false, with why). */
  onConnection?(connected: boolean, reason?: string): void;
}

export interface FollowerOptions {
  /** No event (a ping comes every 15 s) for this long: the connection is taken for dead (default 45 s). */
  silenceTimeoutMs?: number;
  /** Reconnect waits: from 0.5 s, doubling, up to this (default 10 s). */
  maxRetryMs?: number;
}

/**
 * Follows the server's change stream for an operator in another cluster:
 * resumes after the last revision it delivered whenever the connection ends
 * (Last-Event-ID), so nothing is missed or delivered twice; reconnects with a
 * capped backoff while the server is away; treats a silent connection as dead.
 */
export class ChangeFollower {
  readonly #server: ServerConnection;
  readonly #tokens: TokenKeeper;
  readonly #handlers: FollowerHandlers;
  readonly #options: Required<FollowerOptions>;
  #last: number;
  #running = false;
  #abort: AbortController | null = null;
  #loop: Promise<void> | null = null;
  #connected = false;

  constructor(server: ServerConnection, tokens: TokenKeeper, after: number, handlers: FollowerHandlers, options: FollowerOptions = {}) {
    this.#server = server;
    this.#tokens = tokens;
    this.#handlers = handlers;
    this.#last = after;
    this.#options = { silenceTimeoutMs: 45_000, maxRetryMs: 10_000, ...options };
  }

  /** The newest revision delivered (or passed by a ping): where the stream resumes. */
  get lastRevision(): number {
    return this.#last;
  }

  get connected(): boolean {
    return this.#connected;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#abort?.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    let delay = 0;
    while (this.#running) {
      try {
        await this.#follow();
        delay = 0;
      } catch (error) {
        if (!this.#running) break;
        this.#setConnected(false, error instanceof Error ? error.message : String(error));
        delay = Math.min(delay === 0 ? 500 : delay * 2, this.#options.maxRetryMs);
      }
      if (this.#running && delay > 0) await sleep(delay);
    }
    // stopped on purpose: not a lost connection (reporting one would log a clean stop as a failure)
    this.#connected = false;
  }

  /** One connection: until it ends, goes silent or fails. */
  async #follow(): Promise<void> {
    const abort = new AbortController();
    this.#abort = abort;
    let silence = setTimeout(() => abort.abort(), this.#options.silenceTimeoutMs);
    const token = await this.#tokens.token();
    let body: AsyncIterable<Buffer> & { destroy(): void };
    try {
      body = await this.#server.stream('/api/v1/changes/stream', { token, headers: { 'last-event-id': String(this.#last) }, signal: abort.signal });
    } catch (error) {
      clearTimeout(silence);
      if (error instanceof AppError && error.statusCode === 401) await this.#tokens.renewAfterRejection(token);
      throw error;
    }
    const pending: EventSourceMessage[] = [];
    let ended: Error | null = null;
    const parser = createParser({ onEvent: (event) => pending.push(event) });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) {
        clearTimeout(silence);
        silence = setTimeout(() => abort.abort(), this.#options.silenceTimeoutMs);
        parser.feed(decoder.decode(chunk, { stream: true }));
        ended = await this.#handle(pending.splice(0), token);
        if (ended) break;
      }
    } catch (error) {
      if (!this.#running) return;
      throw abort.signal.aborted ? new Error(`no event from the server for ${this.#options.silenceTimeoutMs} ms`) : error;
    } finally {
      clearTimeout(silence);
      body.destroy();
    }
    if (ended) throw ended;
    if (this.#running) throw new Error('the server ended the change stream');
  }

  /** Applies one chunk's events; answers the error that ends this connection, if one does. */
  async #handle(events: EventSourceMessage[], token: string): Promise<Error | null> {
    const changes: StreamedChange[] = [];
    for (const event of events) {
      if (event.event === 'ready') this.#setConnected(true);
      else if (event.event === 'reset') {
        this.#setConnected(true);
        const { revision } = eventData(event, resetEvent);
        await this.#handlers.onReset(revision);
        this.#last = revision;
      } else if (event.event === 'change' || event.event === 'rotation') {
        const change = eventData(event, changeEvent);
        if (change.revision > this.#last) changes.push(change);
      } else if (event.event === 'ping') {
        await this.#deliver(changes.splice(0));
        const { revision } = eventData(event, revisionEvent);
        this.#last = Math.max(this.#last, revision);
      } else if (event.event === 'error') {
        await this.#deliver(changes.splice(0));
        // the token was revoked or expired: log in again before reconnecting
        await this.#tokens.renewAfterRejection(token).catch(() => undefined);
        return new Error(streamEndedReason(eventData(event, streamErrorEvent)));
      }
    }
    await this.#deliver(changes);
    return null;
  }

  async #deliver(changes: StreamedChange[]): Promise<void> {
    if (changes.length === 0) return;
    await this.#handlers.onChanges(changes);
    this.#last = changes.at(-1)!.revision;
  }

  #setConnected(connected: boolean, reason?: string): void {
    if (this.#connected === connected) return;
    this.#connected = connected;
    this.#handlers.onConnection?.(connected, reason);
  }
}

/** Why the server ended the stream, as its `error` event says (its message names no credential). */
function streamEndedReason({ message = 'error', statusCode }: { message?: string; statusCode?: number }): string {
  if (statusCode === 401)
    return `Coffer ended the operator's access (401: ${message}): its token or credentials were revoked; nothing is synced until they are valid again`;
  if (statusCode === 403 || statusCode === 404)
    return `Coffer ended the change stream (${statusCode}: ${message}): the operator's identity may no longer read what it followed`;
  return `the server ended the change stream: ${message}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
