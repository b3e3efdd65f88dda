import { EventEmitter } from 'node:events';
import { CACHE_POLICIES } from '../caches/cache-policies.ts';
import { type CacheVersions, outsideCacheRequestScope } from '../caches/cache-versions.ts';
import { RevisionCache } from '../caches/revision-cache.ts';
import { type Change, CHANGE_KINDS, type ChangeRecord, LISTING_METADATA_KINDS } from './change.ts';
import { WritesUnderWay } from './writes-under-way.ts';
import { changeLogInsertion, changesCommittedWith, latestRevision, latestRevisionOf, latestRevisionOfKinds } from './change-store.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';
import { finishTransaction, type Statement } from '../db/statements.ts';

export {
  type Change,
  CHANGE_KINDS,
  type ChangeKind,
  type ChangeRecord,
  LISTING_METADATA_KINDS,
  ROTATION_PHASES,
  type RotationNote,
  type RotationPhase,
} from './change.ts';

export const CHANGE_CHANNEL = 'coffer_changes';
const MAX_PROJECT_REVISIONS = 10_000;
/** The kinds of change that can alter what a place resolves to. */
const ALTERING_KINDS = CHANGE_KINDS.filter((kind) => !LISTING_METADATA_KINDS.has(kind));
/** Serialises change_log inserts until commit, so revisions become visible in order. */
const CHANGE_LOCK_KEY = 0x636f6663686e;

/**
 * Records changes in the caller's transaction and tells in-process subscribers
 * after commit; other replicas hear the NOTIFY sent at commit.
 */
export class ChangeFeed extends EventEmitter<{ committed: [] }> {
  /** Revisions the in-process operator recorded itself (`quiet` or `own`), until isOwnWrite() is asked about them; oldest first. */
  readonly #own = new Set<number>();
  /** Own writes not yet answered: committed (and notified) before their revisions are marked own. */
  readonly #ownUnderWay = new WritesUnderWay();
  readonly #versions: CacheVersions | undefined;
  /** Each project's newest revision, with the newest of all when it was read (projectRevision). */
  readonly #projectRevisions = new Map<string, { newest: number; revision: Promise<number> }>();
  /** Each project's newest change that can alter what a place resolves to, by the project's revision (projectAlteredAt). */
  readonly #alteredAt = new RevisionCache<number>({ ...CACHE_POLICIES.projectAlteredAt, weigh: () => 1 });

  /** Without `versions`, projectRevision reads the database every time. */
  constructor(versions?: CacheVersions) {
    super();
    this.#versions = versions;
  }

  /**
   * Call inside the mutation's transaction, as its last write. `quiet`: the
   * in-process operator made this change itself and needs no wake-up for it:
   * no NOTIFY; subscribers read it with the next change or poll. `own`: the
   * in-process operator made it, but others must hear it at once (a report of
   * its target's keys, which the console follows): NOTIFY as for any write,
   * and marked as the operator's own as a quiet one is. Answers the newest
   * revision recorded (undefined when there was nothing to record).
   * The unit of work sends the same statement with the COMMIT (insertion).
   */
  async record(db: Executor, changes: Change[], options: { quiet?: boolean; own?: boolean } = {}): Promise<number | undefined> {
    if (changes.length === 0) return undefined;
    return this.recorded(await finishTransaction(db, [this.insertion(changes, options)], { script: false }), options);
  }

  /** The statement that records `changes` (at least one), to be the transaction's last; then recorded() with its rows. */
  insertion(changes: Change[], options: { quiet?: boolean }): Statement<{ revision: number }> {
    return changeLogInsertion(CHANGE_LOCK_KEY, options.quiet ? null : CHANGE_CHANNEL, changes);
  }

  /** Notes the revisions insertion()'s statement answered; answers the newest. */
  recorded(rows: readonly { revision: number }[], options: { quiet?: boolean; own?: boolean }): number {
    // Quiet changes wake nobody: the only subscriber is the operator that wrote them; it reads them with the next wake-up.
    if (options.quiet || options.own) {
      for (const { revision } of rows) this.#own.add(revision);
      // rolled-back transactions leave revisions nobody asks about
      while (this.#own.size > 10_000) this.#own.delete(this.#own.values().next().value!);
    }
    return Math.max(...rows.map((row) => row.revision));
  }

  /**
   * A `quiet` or `own` write: its change is committed before the write's answer marks its revisions own (recorded()),
   * and in between this process's subscribers can read it (an `own` write's NOTIFY wakes them; a quiet one is read
   * with any other write's wake-up). `write` must include recorded(); ownWritesSettled() waits for it.
   */
  trackOwn<T>(write: Promise<T>): Promise<T> {
    return this.#ownUnderWay.track(write);
  }

  /** Resolves once every own write under way now has been answered (and its revisions marked own), so isOwnWrite() can tell. */
  ownWritesSettled(): Promise<void> {
    return this.#ownUnderWay.settled();
  }

  /** Whether `revision` was recorded by the in-process operator itself (`quiet` or `own`; answered once). */
  isOwnWrite(revision: number): boolean {
    return this.#own.delete(revision);
  }

  /** Whether `revision` was recorded by the in-process operator itself and isOwnWrite() has not been asked about it yet. */
  recordedAsOwn(revision: number): boolean {
    return this.#own.has(revision);
  }

  /** The newest committed revision, of one project's changes when `projectId` is given (0 before any). */
  latestRevision(db: ReadOnlyDb, projectId?: string): Promise<number> {
    return latestRevision(db, projectId);
  }

  /**
   * The newest committed revision as the cache versions read it (CacheVersions.newestRevision): inside a request
   * (or a reconcile run as one) the revision read with its versions, when it began; outside one a read sent after
   * this call, shared with the callers arriving meanwhile. On PGlite, and without versions, read from the change log.
   */
  newestRevision(db: ReadOnlyDb): Promise<number> {
    return this.#versions?.newestRevision() ?? latestRevision(db);
  }

  /** The newest revision this process committed or read with the cache versions: it and every one before it have committed (0 without versions). */
  knownRevision(): number {
    return this.#versions?.known('revision') ?? 0;
  }

  /**
   * The newest committed revision of one project's changes, as a request sees it: kept per project with the
   * newest revision of all (CacheVersions: read with the cache versions once per request on PostgreSQL, this
   * process's own on PGlite) and reused while that is unchanged. Revisions commit in order, so an unchanged
   * newest revision means no change committed anywhere since the project's was read.
   */
  async projectRevision(db: ReadOnlyDb, projectId: string): Promise<number> {
    if (!this.#versions || db.isTransaction) return latestRevision(db, projectId);
    const { revision: newest } = await this.#versions.current();
    const kept = this.#projectRevisions.get(projectId);
    if (kept && kept.newest === newest) return kept.revision;
    const revision = latestRevision(db, projectId);
    // read after `newest`: never older than it; kept only under the newest this process knows
    if (newest >= this.#versions.known('revision')) {
      if (this.#projectRevisions.size >= MAX_PROJECT_REVISIONS) this.#projectRevisions.delete(this.#projectRevisions.keys().next().value!);
      this.#projectRevisions.delete(projectId);
      this.#projectRevisions.set(projectId, { newest, revision });
      revision.catch(() => this.#projectRevisions.get(projectId)?.revision === revision && this.#projectRevisions.delete(projectId));
    }
    return revision;
  }

  /**
   * The newest committed revision of a project's changes that can alter what its places resolve to (not
   * LISTING_METADATA_KINDS; 0 before any), read once per revision of the project (projectRevision).
   */
  async projectAlteredAt(db: ReadOnlyDb, projectId: string): Promise<number> {
    const revision = await this.projectRevision(db, projectId);
    return this.#alteredAt.get(projectId, revision, () => latestRevisionOfKinds(db, projectId, ALTERING_KINDS));
  }

  /** The newest committed revision of these projects' changes (0 before any). */
  latestRevisionOf(db: ReadOnlyDb, projectIds: string[]): Promise<number> {
    return latestRevisionOf(db, projectIds);
  }

  /** Every change committed in the same transaction as `revision` (a write's changes), oldest first; none for an unknown revision. */
  changesCommittedWith(db: ReadOnlyDb, revision: number): Promise<ChangeRecord[]> {
    return changesCommittedWith(db, revision);
  }

  /** Call after the transaction that recorded changes has committed. */
  committed(): void {
    // subscribers work for everyone, not for the request that wrote: none of them may see through its cache versions
    outsideCacheRequestScope(() => this.emit('committed'));
  }
}
