import { AsyncLocalStorage } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { notifyAtCommit } from '../db/statements.ts';
import type { WriteStatement } from '../db/write-watch.ts';
import { CACHE_POLICIES, CREDENTIAL_BOOKKEEPING, type VersionedCacheName, VERSIONED_CACHES } from './cache-policies.ts';
import { bumpCacheVersions, listCacheVersionsAndRevision } from './cache-version-store.ts';
import type { Database, Executor, ReadOnlyDb } from '../db/database.ts';

/** NOTIFY channel: a committed write may have ended someone's access (caches/access-watch.ts listens). */
export const ACCESS_CHANNEL = 'coffer_access';

/**
 * Each versioned cache's version, as one read (or this process) saw them, and the newest committed change-feed
 * revision (`revision`): revisions commit in order, so while it stays the same no change has committed anywhere.
 */
export type CacheVersionSnapshot = Readonly<Record<VersionedCacheName | 'revision', number>>;

/** The caches whose tables are among `tables`. */
export function cachesReadFrom(tables: readonly string[]): VersionedCacheName[] {
  return VERSIONED_CACHES.filter((name) => CACHE_POLICIES[name].tables.some((table) => tables.includes(table)));
}

/**
 * Moves the versions of `names` by one, in `db` (the writing transaction: the
 * new versions commit with what it wrote). Rows are taken in name order, so
 * two writers never wait on each other crosswise; a missing row is made.
 */
export async function moveVersions(db: Executor, names: readonly VersionedCacheName[]): Promise<Partial<Record<VersionedCacheName, number>>> {
  if (names.length === 0) return {};
  const rows = await bumpCacheVersions(db, names);
  return Object.fromEntries(rows.map((row) => [row.name, row.version]));
}

/**
 * Whether a statement on `tables` may end someone's access: it writes a table a cache that decides access is read
 * from, and is not the bookkeeping of a login or of a token's use (CREDENTIAL_BOOKKEEPING).
 */
function mayEndAccess(tables: readonly string[], statement: WriteStatement, names: readonly VersionedCacheName[]): boolean {
  if (!names.some((name) => CACHE_POLICIES[name].decidesAccess)) return false;
  if (statement.kind === 'insert') return !tables.every((table) => CREDENTIAL_BOOKKEEPING.inserts.has(table));
  if (statement.kind === 'update') {
    return !tables.every((table) => statement.columns.every((column) => CREDENTIAL_BOOKKEEPING.updates[table]?.has(column) === true));
  }
  return true;
}

/** Tells every process that access may have ended (a statement on its own, outside a unit of work: it commits alone). */
async function announceAccessEnding(db: Executor): Promise<void> {
  await notifyAtCommit(db, ACCESS_CHANNEL);
}

/**
 * A tracked transaction: the caches whose tables it writes (WriteWatch reports its statements), `open` until
 * their versions are moved; whether one of its statements may end someone's access (mayEndAccess); and the
 * versions as it read them, once, for the caches it reads through.
 */
interface TrackedTransaction {
  written: Set<VersionedCacheName>;
  endsAccess: boolean;
  open: boolean;
  snapshot?: Promise<CacheVersionSnapshot>;
}
const transactions = new AsyncLocalStorage<TrackedTransaction>();

/**
 * Runs `work`, the statements of one transaction, and answers the caches whose
 * tables it wrote: the transaction moves their versions (moveVersions) before
 * it commits. The unit of work does it for every write (CacheVersions.track); a
 * transaction made outside it (a root key rotation) does it itself.
 */
export async function recordingWrites<T>(work: () => Promise<T>): Promise<{ result: T; written: VersionedCacheName[]; endsAccess: boolean }> {
  const transaction: TrackedTransaction = { written: new Set<VersionedCacheName>(), endsAccess: false, open: true };
  try {
    const result = await transactions.run(transaction, work);
    return { result, written: [...transaction.written], endsAccess: transaction.endsAccess };
  } finally {
    transaction.open = false;
  }
}

/** One request's versions, read once (by authentication) and compared by every cache the request reads through. */
export interface CacheRequestScope {
  snapshot?: Promise<CacheVersionSnapshot>;
}
const requests = new AsyncLocalStorage<CacheRequestScope>();

/** Runs `work` as (part of) one request: the caches it reads through compare the versions the request read. */
export function runInCacheRequestScope<T>(scope: CacheRequestScope, work: () => T): T {
  return requests.run(scope, work);
}

/**
 * Runs `work` as part of no request: work a request only sets off (what a committed write wakes) must not compare
 * with the versions that request read before its write committed, or it would keep what the write made stale.
 */
export function outsideCacheRequestScope<T>(work: () => T): T {
  return requests.exit(work);
}

const perDatabase = new WeakMap<Kysely<DB>, CacheVersions>();

function emptySnapshot(): Record<VersionedCacheName | 'revision', number> {
  return { ...(Object.fromEntries(VERSIONED_CACHES.map((name) => [name, 0])) as Record<VersionedCacheName, number>), revision: 0 };
}

/**
 * The versions of the in-process caches (README.md beside this file). A
 * transaction that writes a table a cache is read from moves that cache's
 * version in the database before it commits; an entry is used only while the
 * version it was loaded under is the current one. On PostgreSQL, where other
 * processes write too, the current versions are read once per request (at
 * authentication) or once per look-up outside a request; PGlite is this
 * process's alone (its data directory is locked), so the versions this
 * process committed are all there are.
 */
export class CacheVersions {
  readonly #db: Kysely<DB>;
  /** `access-may-end`: a write that may end someone's access committed in this process. */
  readonly #events = new EventEmitter<{ 'access-may-end': [] }>();
  /** Other processes may write the database: read the versions from it. */
  readonly #shared: boolean;
  /** The read of the versions on its way, and the one that waits for it to answer (#readAfterNow). */
  #reading: Promise<CacheVersionSnapshot> | undefined;
  #nextRead: Promise<CacheVersionSnapshot> | undefined;
  /** The newest version of each cache this process committed or read. */
  readonly #known: Record<VersionedCacheName | 'revision', number> = emptySnapshot();

  /** One per database, whatever the number of service containers on it. */
  static of(database: Database): CacheVersions {
    let versions = perDatabase.get(database.db);
    if (!versions) {
      versions = new CacheVersions(database);
      perDatabase.set(database.db, versions);
    }
    return versions;
  }

  private constructor(database: Database) {
    this.#db = database.db;
    this.#shared = database.backend === 'postgres';
    database.writes.observe((tables, statement) => this.#written(tables, statement));
  }

  /**
   * Runs `work`, the statements of one transaction (`trx`), noting the caches
   * whose tables it writes, and then moves their versions in `trx`; a write that
   * may end someone's access asks the transaction to NOTIFY ACCESS_CHANNEL at
   * commit (`notifyAtCommit`, the unit of work's). `committed` is to be called
   * once the transaction has committed.
   */
  async track<T>(
    trx: Executor,
    work: () => Promise<T>,
    notifyAtCommit: (channel: string) => void,
  ): Promise<{ result: T; committed: (revision: number | undefined) => void }> {
    const { result, written, endsAccess } = await recordingWrites(work);
    const moved = await moveVersions(trx, written);
    if (endsAccess) notifyAtCommit(ACCESS_CHANNEL);
    return {
      result,
      committed: (revision) => {
        this.#note(revision === undefined ? moved : { ...moved, revision });
        if (endsAccess) this.#events.emit('access-may-end');
      },
    };
  }

  /**
   * Calls `listener` after each write committed in this process that may have ended someone's access (a
   * revocation, a removed membership, a changed role); other processes hear it on ACCESS_CHANNEL. Answers the
   * function that stops it.
   */
  onAccessMayEnd(listener: () => void): () => void {
    this.#events.on('access-may-end', listener);
    return () => this.#events.off('access-may-end', listener);
  }

  /** The versions a cache compares with now: the request's, or read afresh outside one (the same as this process's on PGlite). */
  current(): Promise<CacheVersionSnapshot> {
    if (!this.#shared) return Promise.resolve({ ...this.#known });
    const scope = requests.getStore();
    if (!scope) return this.#readAfterNow();
    scope.snapshot ??= this.#readAfterNow();
    return scope.snapshot;
  }

  /**
   * The versions as a read sent after this call finds them, shared: a read already on its way was sent before
   * the caller asked and may predate a write the caller saw answered, so callers arriving meanwhile share the
   * next read, sent as soon as that one has answered. At most one read in flight, and at most one per caller.
   */
  #readAfterNow(): Promise<CacheVersionSnapshot> {
    if (!this.#reading) return this.#startRead();
    this.#nextRead ??= this.#reading.then(
      () => this.#startNextRead(),
      () => this.#startNextRead(),
    );
    return this.#nextRead;
  }

  #startNextRead(): Promise<CacheVersionSnapshot> {
    this.#nextRead = undefined;
    return this.#startRead();
  }

  #startRead(): Promise<CacheVersionSnapshot> {
    const read = this.#read();
    this.#reading = read;
    const settled = () => {
      if (this.#reading === read) this.#reading = undefined;
    };
    read.then(settled, settled);
    return read;
  }

  /**
   * Inside a tracked transaction (the unit of work's), the versions a cache compares with when `trx` reads through
   * it: read in `trx` once (on PGlite, whose one connection the transaction holds, this process's), so an entry
   * used is what a read of its rows at that moment would give. Undefined, so that the cache is not used, outside a
   * tracked transaction and for a cache whose tables the transaction has written: it reads its own writes.
   */
  inTransaction(trx: ReadOnlyDb, name: VersionedCacheName): Promise<CacheVersionSnapshot> | undefined {
    const transaction = transactions.getStore();
    if (!transaction?.open || transaction.written.has(name)) return undefined;
    if (!this.#shared) return Promise.resolve({ ...this.#known });
    if (!transaction.snapshot) {
      transaction.snapshot = this.#read(trx);
      this.#adoptInRequest(transaction.snapshot);
    }
    return transaction.snapshot;
  }

  /**
   * A request that has not read the versions yet (the in-process operator's reconcile that creates its record: its
   * first look-up is in the write) reads through the caches as of the transaction's read afterwards too, as if it
   * had read them then: a moment after it began, before anything it reads later (its own commit moves what it
   * knows, and the caches compare with that as well). One read of the versions fewer.
   */
  #adoptInRequest(snapshot: Promise<CacheVersionSnapshot>): void {
    const scope = requests.getStore();
    if (!scope || scope.snapshot) return;
    scope.snapshot = snapshot;
    snapshot.catch(() => {
      if (scope.snapshot === snapshot) scope.snapshot = undefined;
    });
  }

  /**
   * The request under way reads the versions again (authentication does, first in every request and at each
   * recheck of a long one): what it reads through the caches from here on was current after this moment.
   */
  refreshRequest(): void {
    const scope = requests.getStore();
    if (!scope || !this.#shared) return;
    scope.snapshot = this.#readAfterNow();
    scope.snapshot.catch(() => {});
  }

  /**
   * On PostgreSQL, the newest committed revision as the versions a cache compares with now read it (the request's,
   * else a read sent after this call, shared: current()); undefined on PGlite, where this process knows only the
   * revisions it committed since it started, so the caller reads the change log.
   */
  newestRevision(): Promise<number> | undefined {
    if (!this.#shared) return undefined;
    return this.current().then((snapshot) => snapshot.revision);
  }

  /** The newest version of `name` (or revision) this process committed or read: an entry under an older one is not used. */
  known(name: VersionedCacheName | 'revision'): number {
    return this.#known[name];
  }

  async #read(db: ReadOnlyDb = this.#db): Promise<CacheVersionSnapshot> {
    // the newest revision in the same statement: one read per request serves the revision-keyed caches too
    const rows = await listCacheVersionsAndRevision(db);
    const snapshot = emptySnapshot();
    for (const row of rows) if (row.name in snapshot) snapshot[row.name as VersionedCacheName | 'revision'] = Number(row.version);
    this.#note(snapshot);
    return snapshot;
  }

  #note(versions: Partial<Record<VersionedCacheName | 'revision', number>>): void {
    for (const [name, version] of Object.entries(versions) as [VersionedCacheName | 'revision', number][]) {
      if (version > this.#known[name]) this.#known[name] = version;
    }
  }

  /**
   * A statement is about to write `tables`. Inside a tracked transaction the
   * caches are noted, to be moved before it commits; any other statement
   * commits on its own, and the versions move once it has returned.
   */
  #written(tables: string[], statement: WriteStatement): (() => Promise<void>) | undefined {
    const names = cachesReadFrom(tables);
    if (names.length === 0) return undefined;
    const endsAccess = mayEndAccess(tables, statement, names);
    // (a statement made later from work the transaction started, once its versions have moved, is on its own)
    const transaction = transactions.getStore();
    if (transaction?.open) {
      for (const name of names) transaction.written.add(name);
      transaction.endsAccess ||= endsAccess;
      return undefined;
    }
    return async () => {
      this.#note(await moveVersions(this.#db, names));
      if (!endsAccess) return;
      await announceAccessEnding(this.#db);
      this.#events.emit('access-may-end');
    };
  }
}
