import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import type { Database, Executor } from '../db/database.ts';

/** The NOTIFY channel of operators' sync and reload results (not the change feed's: nothing there is a change). */
const PROGRESS_CHANNEL = 'coffer_sync_progress';
/** Waiters check again this often even without a notification (one may be lost while a connection is re-made). */
const SAFETY_CHECK_MS = 2_000;

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

  /** Inside the transaction that recorded a result. */
  async notify(db: Executor): Promise<void> {
    await sql`SELECT pg_notify(${PROGRESS_CHANNEL}, '')`.execute(db);
  }

  /** After that transaction committed: waiters in this process hear it at once. */
  committed(): void {
    this.#events.emit('progress');
  }

  /** Resolves at the next result recorded anywhere, or after `ms` at the latest (and at the safety check). */
  async next(ms: number): Promise<void> {
    await this.#listen();
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#events.off('progress', done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(ms, SAFETY_CHECK_MS));
      this.#events.on('progress', done);
    });
  }

  async close(): Promise<void> {
    await this.#unlisten?.().catch(() => {});
    this.#unlisten = null;
    this.#listening = null;
  }

  #listen(): Promise<void> {
    this.#listening ??= this.#database
      .listen(
        PROGRESS_CHANNEL,
        () => this.committed(),
        () => {
          // the connection broke: the next wait listens again; meanwhile the safety check covers
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
}
