import { outsideCacheRequestScope } from '../caches/cache-versions.ts';
import type { Database } from '../db/database.ts';
import type { ChangeFeed, ChangeRecord } from './change-feed.ts';
import { changesAfter, latestRevision } from './change-store.ts';
import { ChangeSubscriber } from './change-subscriber.ts';

/**
 * One database change subscription per process, fanned out in memory to any
 * number of subscribers (event streams), each with its own filter.
 *
 * Invariants:
 * - Every subscriber receives, in revision order and at most once, every change
 *   after its starting revision that its filter accepts; nothing is skipped.
 * - Memory per subscriber is bounded: a subscriber that does not keep up (more
 *   than `maxQueued` changes waiting) drops its queue and catches up from the
 *   change log by revision, page by page, when it next reads.
 * - A subscriber that starts from a past revision (a resumed stream) is served
 *   from the change log first, then live.
 * - Reading a subscription never queries the database per change: the shared
 *   subscriber reads each committed change once for everybody.
 */
export interface FanoutOptions {
  /** Changes a subscriber may have waiting before it falls back to the change log (default 1,000). */
  maxQueued?: number;
  /** Changes read from the log per catch-up page (default 500). */
  pageSize?: number;
  /** Passed to the shared ChangeSubscriber: its safety-net poll (default 30 s). */
  pollIntervalMs?: number;
  onError?: (error: unknown) => void;
}

export interface SubscribeOptions {
  /** Deliver changes after this revision; default: only changes committed from now on. */
  after?: number;
  /** Which changes this subscriber receives (its caller's permissions, project, paths). */
  accept: (change: ChangeRecord) => boolean;
}

export class ChangeFanout {
  readonly #database: Database;
  readonly #feed: ChangeFeed;
  readonly #options: Required<Omit<FanoutOptions, 'onError'>> & Pick<FanoutOptions, 'onError'>;
  readonly #subscriptions = new Set<ChangeSubscription>();
  readonly #observers = new Set<(changes: ChangeRecord[]) => void>();
  #subscriber: ChangeSubscriber | null = null;
  #starting: Promise<void> | null = null;
  /** The newest revision handed to subscribers (every change up to it has been fanned out). */
  #position = 0;
  #closed = false;

  constructor(database: Database, feed: ChangeFeed, options: FanoutOptions = {}) {
    this.#database = database;
    this.#feed = feed;
    this.#options = { maxQueued: 1000, pageSize: 500, pollIntervalMs: 30_000, ...options };
  }

  /** Subscribers open right now. */
  get size(): number {
    return this.#subscriptions.size;
  }

  /** The newest revision fanned out so far. */
  get position(): number {
    return this.#position;
  }

  async subscribe(options: SubscribeOptions): Promise<ChangeSubscription> {
    if (this.#closed) throw new Error('The change fan-out is closed');
    await this.#start();
    const after = options.after ?? this.#position;
    const subscription = new ChangeSubscription(this, options.accept, after, this.#options, after < this.#position);
    this.#subscriptions.add(subscription);
    return subscription;
  }

  /**
   * Calls `observer` with every change fanned out from now on, in order, before
   * any subscriber is offered it (work done once per change for all
   * subscribers, such as project events' import index); the answer stops it.
   */
  observe(observer: (changes: ChangeRecord[]) => void): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** Stops the shared subscription and ends every subscriber's stream. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const subscription of this.#subscriptions) subscription.close();
    this.#subscriptions.clear();
    await this.#starting?.catch(() => undefined);
    await this.#subscriber?.stop();
    this.#subscriber = null;
  }

  /** @internal A page of the change log after `revision`, read for a subscriber catching up. */
  readLog(after: number): Promise<ChangeRecord[]> {
    return changesAfter(this.#database.db, after, this.#options.pageSize);
  }

  /** @internal */
  remove(subscription: ChangeSubscription): void {
    this.#subscriptions.delete(subscription);
  }

  #start(): Promise<void> {
    // started by the first subscriber's request, it serves every later one: none of its reads may compare with the
    // cache versions that request read at its start (caches/cache-versions.ts), or they would stay that old for good
    this.#starting ??= outsideCacheRequestScope(async () => {
      this.#position = await latestRevision(this.#database.db);
      const subscriber = new ChangeSubscriber(this.#database, this.#feed, {
        after: this.#position,
        pollIntervalMs: this.#options.pollIntervalMs,
        onChanges: async (changes) => this.#publish(changes),
        onError: this.#options.onError,
      });
      this.#subscriber = subscriber;
      await subscriber.start();
    }).catch((error: unknown) => {
      this.#starting = null;
      throw error;
    });
    return this.#starting;
  }

  #publish(changes: ChangeRecord[]): void {
    for (const observer of this.#observers) {
      try {
        observer(changes);
      } catch (error) {
        this.#options.onError?.(error);
      }
    }
    for (const subscription of this.#subscriptions) subscription.offer(changes);
    this.#position = changes.at(-1)?.revision ?? this.#position;
  }
}

/**
 * One subscriber's view of the fan-out: `next()` resolves with the next changes
 * it accepts (in revision order), or null once closed.
 */
export class ChangeSubscription {
  readonly #fanout: ChangeFanout;
  readonly #accept: (change: ChangeRecord) => boolean;
  readonly #options: { maxQueued: number; pageSize: number };
  #queue: ChangeRecord[] = [];
  /** The newest revision delivered (or skipped as not accepted). */
  #last: number;
  /** Fell behind (or resumed from the past): the next read comes from the change log. */
  #behind: boolean;
  #closed = false;
  #wake: (() => void) | null = null;

  /** @internal */
  constructor(fanout: ChangeFanout, accept: (change: ChangeRecord) => boolean, after: number, options: { maxQueued: number; pageSize: number }, behind: boolean) {
    this.#fanout = fanout;
    this.#accept = accept;
    this.#last = after;
    this.#options = options;
    this.#behind = behind;
  }

  /** The newest revision this subscriber has been given (a stream's resume point). */
  get lastRevision(): number {
    return this.#last;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** @internal Called by the fan-out with every committed change, in order. */
  offer(changes: ChangeRecord[]): void {
    if (this.#closed) return;
    const accepted = changes.filter((change) => change.revision > this.#last && this.#safeAccept(change));
    if (accepted.length > 0) {
      if (this.#queue.length + accepted.length > this.#options.maxQueued) {
        // too slow: forget what waits, read it from the change log later
        this.#queue = [];
        this.#behind = true;
      } else {
        this.#queue.push(...accepted);
      }
    }
    this.#signal();
  }

  /** The next accepted changes after the last delivered revision; null when closed. */
  async next(): Promise<ChangeRecord[] | null> {
    for (;;) {
      if (this.#closed) return null;
      if (this.#behind) {
        const page = await this.#fanout.readLog(this.#last);
        if (this.#closed) return null;
        // caught up once the log holds no more, or once the fan-out will offer everything after this page
        if (page.length < this.#options.pageSize || page.at(-1)!.revision >= this.#fanout.position) this.#behind = false;
        if (page.length === 0) continue;
        this.#last = page.at(-1)!.revision;
        const accepted = page.filter((change) => this.#safeAccept(change));
        if (accepted.length > 0) return accepted;
        continue;
      }
      const ready = this.#queue.filter((change) => change.revision > this.#last);
      this.#queue = [];
      if (ready.length > 0) {
        this.#last = ready.at(-1)!.revision;
        return ready;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  /** Ends the subscription: a pending next() resolves null; the fan-out forgets it. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.#fanout.remove(this);
    this.#signal();
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  #safeAccept(change: ChangeRecord): boolean {
    try {
      return this.#accept(change);
    } catch {
      return false;
    }
  }
}
