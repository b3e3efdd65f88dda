import { EventEmitter } from 'node:events';
import { outsideCacheRequestScope } from '../caches/cache-versions.ts';
import type { Database } from '../db/database.ts';
import type { WriteContext } from '../services/unit-of-work.ts';

/** The NOTIFY channel of operators' sync and reload results (not the change feed's: nothing there is a change). */
const PROGRESS_CHANNEL = 'coffer_sync_progress';

/**
 * Tells waiters (the revision barrier) that an operator recorded how far an
 * Integration got. A result written here NOTIFYs at commit, so waiters on
 * every replica hear it; one LISTEN per process, opened on the first wait.
 */
export class SyncProgress {
  readonly #database: Database;
  readonly #events = new EventEmitter<{ progress: [] }>();
  #listening: Promise<void> | null = null;
  #unlisten: (() => Promise<void>) | null = null;

  constructor(database: Database) {
    this.#database = database;
    this.#events.setMaxListeners(0);
  }

  /** Inside the write that recorded a result: its waiters everywhere hear it once it commits. */
  notify(tx: Pick<WriteContext, 'notifyAtCommit'>): void {
    tx.notifyAtCommit(PROGRESS_CHANNEL);
  }

  /**
   * After that transaction committed: waiters in this process hear it at once, outside the writer's cache scope
   * (the in-process operator writes as one request per reconcile; a waiter's reads are its own).
   */
  committed(): void {
    outsideCacheRequestScope(() => this.#events.emit('progress'));
  }

  /** Calls `listener` at every result recorded anywhere (once listening); the answer stops it. */
  onProgress(listener: () => void): () => void {
    this.#events.on('progress', listener);
    return () => this.#events.off('progress', listener);
  }

  /**
   * Listens for other processes' results, if not already; after a lost
   * connection it listens again at the next call (the caller's safety check
   * covers what was missed meanwhile).
   */
  listen(): Promise<void> {
    this.#listening ??= this.#database
      .listen(
        PROGRESS_CHANNEL,
        () => this.committed(),
        () => {
          this.#listening = null;
          this.#unlisten = null;
        },
      )
      .then(
        (unlisten) => {
          this.#unlisten = unlisten;
        },
        () => {
          this.#listening = null;
        },
      );
    return this.#listening;
  }

  async close(): Promise<void> {
    await this.#unlisten?.().catch(() => {});
    this.#unlisten = null;
    this.#listening = null;
  }
}
