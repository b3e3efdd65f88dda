import type { Database } from '../db/database.ts';
import { ACCESS_CHANNEL, CacheVersions } from './cache-versions.ts';

/** Retries listening after a lost connection: 0.5 s, doubling up to 5 s. */
const RELISTEN_FIRST_MS = 500;
const RELISTEN_MAX_MS = 5_000;

/**
 * Wakes the requests held open (event streams, revision waits) when a write
 * that may end someone's access commits, in this process or any other on the
 * same database: each then authenticates its caller again and checks what it
 * may still do, through the caches, which that write's versions already
 * invalidated (README.md beside this file). It carries no data: which caller
 * lost what is decided by that check, never by the notification.
 *
 * Wake-ups coalesce: a burst of revocations while listeners run makes one
 * more round, not one per write. On PostgreSQL one connection per process
 * listens on ACCESS_CHANNEL, opened with the first listener; a lost connection
 * is listened on again, and every listener woken once it is back (what was
 * revoked meanwhile is caught then, and by the streams' periodic recheck).
 */
export class AccessWatch {
  readonly #database: Database;
  readonly #versions: CacheVersions;
  readonly #listeners = new Set<() => void>();
  #stopLocal: (() => void) | null = null;
  #unlisten: (() => Promise<void>) | null = null;
  #listening: Promise<void> | null = null;
  #relistenDelay = 0;
  #wakeQueued = false;
  #closed = false;
  /** Moves with every wake-up (and when listening starts): a held request that saw another one at its authentication may have missed one. */
  #generation = 0;

  constructor(database: Database) {
    this.#database = database;
    this.#versions = CacheVersions.of(database);
  }

  /** Read before a request authenticates its caller; passed to subscribe() by a request that is then held open. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Calls `listener` after access may have ended; answers the function that stops it. `seen`: the generation
   * read before the caller was authenticated; when a wake-up came since (a revocation may have committed after
   * that check, before this subscription), `listener` is called once at once.
   */
  async subscribe(listener: () => void, seen?: number): Promise<() => void> {
    this.#listeners.add(listener);
    this.#stopLocal ??= this.#versions.onAccessMayEnd(this.#wake);
    if (this.#database.backend === 'postgres') await (this.#listening ??= this.#listen());
    if (seen !== undefined && seen !== this.#generation) setImmediate(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    this.#stopLocal?.();
    await this.#listening;
    await this.#unlisten?.();
  }

  readonly #wake = (): void => {
    this.#generation++;
    if (this.#wakeQueued || this.#closed) return;
    this.#wakeQueued = true;
    setImmediate(() => {
      this.#wakeQueued = false;
      for (const listener of [...this.#listeners]) listener();
    });
  };

  async #listen(): Promise<void> {
    if (this.#closed) return;
    try {
      this.#unlisten = await this.#database.listen(ACCESS_CHANNEL, this.#wake, () => this.#relisten());
      this.#relistenDelay = 0;
      // what was announced before this process listened was not heard
      this.#generation++;
    } catch {
      this.#relisten();
    }
  }

  #relisten(): void {
    this.#unlisten = null;
    if (this.#closed) return;
    this.#relistenDelay = Math.min(this.#relistenDelay === 0 ? RELISTEN_FIRST_MS : this.#relistenDelay * 2, RELISTEN_MAX_MS);
    setTimeout(() => {
      this.#listening = this.#listen().then(() => {
        if (this.#unlisten) this.#wake();
      });
    }, this.#relistenDelay).unref();
  }
}
