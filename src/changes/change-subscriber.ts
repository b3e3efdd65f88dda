import type { Database } from '../db/database.ts';
import { CHANGE_CHANNEL, type ChangeFeed, type ChangeRecord } from './change-feed.ts';
import { changesAfter } from './change-store.ts';

export interface ChangeSubscriberOptions {
  /** The last revision already applied; changes after it are delivered. */
  after: number;
  /** Receives committed changes in revision order; the revision advances only when it resolves. */
  onChanges: (changes: ChangeRecord[]) => Promise<void>;
  /** Safety net when a notification is lost (default 30 s). */
  pollIntervalMs?: number;
  batchSize?: number;
  onError?: (error: unknown) => void;
}

/** Retries after a lost connection or a failed read: 0.5 s, doubling up to 5 s while the database stays away. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 5_000;

function nextDelay(previous: number): number {
  return previous === 0 ? RETRY_FIRST_MS : Math.min(previous * 2, RETRY_MAX_MS);
}

/**
 * Delivers every committed change exactly once and in order. It wakes on the
 * in-process event, on NOTIFY from other replicas and on a timer, and always
 * reads `revision > last`, so nothing committed while it was stopped or
 * disconnected is missed. While the database is away it retries (listening
 * and reading) with a capped backoff, and catches up once it is back.
 */
export class ChangeSubscriber {
  readonly #database: Database;
  readonly #feed: ChangeFeed;
  readonly #options: Required<Omit<ChangeSubscriberOptions, 'onError'>> & Pick<ChangeSubscriberOptions, 'onError'>;
  #last: number;
  #running = false;
  #draining: Promise<void> | null = null;
  #pending = false;
  #unlisten: (() => Promise<void>) | null = null;
  #timer: NodeJS.Timeout | null = null;
  #retry: NodeJS.Timeout | null = null;
  #readDelay = 0;
  #listenDelay = 0;
  readonly #wake = () => void this.drain();

  constructor(database: Database, feed: ChangeFeed, options: ChangeSubscriberOptions) {
    this.#database = database;
    this.#feed = feed;
    this.#options = { pollIntervalMs: 30_000, batchSize: 500, ...options };
    this.#last = options.after;
  }

  get lastRevision(): number {
    return this.#last;
  }

  async start(): Promise<void> {
    this.#running = true;
    this.#feed.on('committed', this.#wake);
    await this.#listen();
    this.#timer = setInterval(this.#wake, this.#options.pollIntervalMs);
    this.#timer.unref();
    await this.drain();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#feed.off('committed', this.#wake);
    if (this.#timer) clearInterval(this.#timer);
    if (this.#retry) clearTimeout(this.#retry);
    await this.#unlisten?.();
    this.#unlisten = null;
    await this.#draining;
  }

  /** Reads and delivers everything after the last revision; concurrent calls coalesce. */
  drain(): Promise<void> {
    if (this.#draining) {
      this.#pending = true;
      return this.#draining;
    }
    this.#draining = this.#drainLoop().finally(() => {
      this.#draining = null;
    });
    return this.#draining;
  }

  async #drainLoop(): Promise<void> {
    do {
      this.#pending = false;
      try {
        for (;;) {
          if (!this.#running) return;
          const batch = await changesAfter(this.#database.db, this.#last, this.#options.batchSize);
          if (batch.length === 0) break;
          await this.#options.onChanges(batch);
          this.#last = batch.at(-1)!.revision;
          // A short batch was everything committed at the read; a later commit wakes it again.
          if (batch.length < this.#options.batchSize) break;
        }
      } catch (error) {
        this.#options.onError?.(error);
        this.#retryRead();
        return;
      }
      this.#readDelay = 0;
    } while (this.#pending);
  }

  /** A failed read is tried again soon, not only at the next poll or wake-up. */
  #retryRead(): void {
    if (!this.#running || this.#retry) return;
    this.#readDelay = nextDelay(this.#readDelay);
    this.#retry = setTimeout(() => {
      this.#retry = null;
      void this.drain();
    }, this.#readDelay);
    this.#retry.unref();
  }

  /** Resolves true once listening, false after a failure (a retry is then scheduled). */
  async #listen(): Promise<boolean> {
    try {
      const unlisten = await this.#database.listen(CHANGE_CHANNEL, this.#wake, () => this.#relisten());
      if (!this.#running) {
        await unlisten();
        return false;
      }
      this.#unlisten = unlisten;
      this.#listenDelay = 0;
      return true;
    } catch (error) {
      this.#options.onError?.(error);
      this.#relisten();
      return false;
    }
  }

  /** After a lost connection: listen again, then catch up on what was committed meanwhile. */
  #relisten(): void {
    this.#unlisten = null;
    if (!this.#running) return;
    this.#listenDelay = nextDelay(this.#listenDelay);
    setTimeout(() => {
      if (this.#running) void this.#listen().then((listening) => listening && this.#wake());
    }, this.#listenDelay).unref();
  }
}
