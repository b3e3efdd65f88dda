import type { Kysely, Transaction } from 'kysely';
import type { Actor, RequestOrigin } from '../actor/actor.ts';
import { type AuditEvent, type AuditService, projectScope } from '../audit/audit-service.ts';
import { type CacheVersions, cachesReadFrom } from '../caches/cache-versions.ts';
import type { Change, ChangeFeed } from '../changes/change-feed.ts';
import type { DB, Project, SecretApprovalPolicy } from '../db/schema.ts';
import { finishTransaction, notifyAtCommit, notifyStatement, releaseSavepoint, rollbackToSavepoint, savepoint, type Statement } from '../db/statements.ts';
import type { AppError } from '../errors.ts';
import type { OrgSubject, PermissionService, PermissionSet, ProjectPermission } from '../permissions/permission-service.ts';
import type { ProjectReference } from '../projects/project-lookup.ts';
import { noteCommittedRevision } from './committed-revisions.ts';
import { translateDatabaseError, violatedConstraint } from './database-errors.ts';
import type { Lookups } from './lookups.ts';

/** Who a write is made for: an authenticated actor, a caller not yet authenticated (a login), or the service itself. */
export type Caller = Actor | RequestOrigin | null;

export interface WriteOptions {
  /**
   * What the violation of each named unique constraint means to the caller;
   * any other database failure is translated by translateDatabaseError.
   */
  conflicts?: Record<string, () => AppError>;
  /**
   * Run the whole unit again, in a new transaction, when one of these unique
   * constraints is violated: a concurrent request made the row first, and the
   * next attempt finds it. After the last attempt `conflicts` applies.
   */
  retry?: { on: readonly string[]; attempts: number };
  /** The in-process operator's own writes: recorded, but nobody in this process is woken for them (NOTIFY is not sent either). */
  quiet?: boolean;
  /** The in-process operator's own write that others must hear at once: woken and notified as any write, but marked as the operator's own (ChangeFeed.record). */
  own?: boolean;
}

/** An audit entry a write collects; the unit writes it with the others, last, in the same transaction. */
export type AuditEntry = AuditEvent &
  ({ project: Pick<Project, 'id' | 'orgId' | 'name'>; orgId?: never } | { orgId: string; projectId?: string; project?: never }) & {
    /** Who made it, when not the unit's caller: the user or identity a login signs in. */
    actor?: Actor;
  };

/** A project permission check inside a write; the actor and the transaction are the unit's. */
export type WritePermission = Omit<ProjectPermission, 'actor' | 'db'>;

/**
 * One write's transaction, as a mutation sees it: the executor its stores
 * write through, the caller's permission checks, and the audit entries and
 * change-feed rows it collects.
 */
export class WriteContext {
  readonly db: Transaction<DB>;
  readonly caller: Caller;
  /** 1 for the first run of the unit, 2 for its first retry (WriteOptions.retry). */
  readonly attempt: number;
  readonly #deps: UnitOfWorkDeps;
  readonly #audit: AuditEntry[] = [];
  readonly #changes: Change[] = [];
  readonly #afterCommit: (() => void)[] = [];
  readonly #notifications: string[] = [];
  /** Statements sent with the closing ones (writeAtCommit). */
  readonly #atCommit: Statement[] = [];
  #authorized = false;

  constructor(db: Transaction<DB>, caller: Caller, attempt: number, deps: UnitOfWorkDeps) {
    this.db = db;
    this.caller = caller;
    this.attempt = attempt;
    this.#deps = deps;
  }

  /** The authenticated actor making this write (a programming error to ask in a unit without one). */
  get actor(): Actor {
    if (!isActor(this.caller)) throw new Error('this write has no authenticated actor');
    return this.caller;
  }

  /** The project, read in this transaction; `lock` holds its row until the transaction ends (writes in one project serialized). */
  project(reference: ProjectReference, options: { lock?: boolean } = {}): Promise<Project> {
    return this.#deps.lookups.requireProject(this.db, reference, options);
  }

  /** The environment's approval policies, read in this transaction (through its versioned cache). */
  approvalPolicies(projectId: string, environmentId: string): Promise<readonly SecretApprovalPolicy[]> {
    return this.#deps.lookups.approvalPolicies(this.db, projectId, environmentId);
  }

  /** The actor may do `action` on `subject` in `project` (where: environment and secret path); 403 otherwise. */
  async authorize(check: WritePermission): Promise<PermissionSet> {
    this.#authorized = true;
    return this.#deps.permissions.assertProject({ ...check, actor: this.actor, db: this.db });
  }

  /** What the actor may do in `project`, for checks beyond one action (granting no more than one holds). */
  async permissionsIn(project: { id: string; orgId: string }): Promise<PermissionSet> {
    this.#authorized = true;
    return this.#deps.permissions.forProject(this.actor, project, this.db);
  }

  /** The actor's org role allows `action` on `subject` in its organization (or `orgId`); 403 otherwise. */
  async authorizeOrg(check: { action: 'read' | 'create' | 'edit' | 'delete'; subject: OrgSubject; orgId?: string }): Promise<void> {
    this.#authorized = true;
    await this.#deps.permissions.assertOrg({ actor: this.actor, orgId: check.orgId ?? this.actor.orgId, action: check.action, subject: check.subject });
  }

  /** This write needs no permission check, for the reason given (a login: the credential is the proof). */
  authorizedBy(_reason: string): void {
    this.#authorized = true;
  }

  audit(entry: AuditEntry): void {
    this.#audit.push(entry);
  }

  /** A change to what a place resolves to (or to how listings show it), for the change feed. */
  change(...changes: Change[]): void {
    this.#changes.push(...changes);
  }

  /**
   * NOTIFY `channel` when the transaction commits (once, however often asked). On PostgreSQL it goes with the
   * COMMIT in the transaction's closing script (finish), not in a round trip of its own.
   */
  notifyAtCommit(channel: string): void {
    if (!this.#notifications.includes(channel)) this.#notifications.push(channel);
  }

  /**
   * A write whose answer nobody reads, sent first of the transaction's closing statements (finish): on PostgreSQL in
   * the COMMIT's message, and, when nothing was sent before it, with BEGIN too, so that a transaction of nothing else
   * is one round trip. It must not answer rows (its statement has no RETURNING and is no SELECT), nor write a table a
   * cache is read from (`writes`: the unit moves those caches' versions for the statements it sees run; this one it
   * does not see).
   */
  writeAtCommit(statement: Statement, writes: readonly (keyof DB)[]): void {
    const cached = cachesReadFrom(writes);
    if (cached.length > 0) throw new Error(`a write at commit may not write a table the caches ${cached.join(', ')} are read from`);
    this.#atCommit.push(statement);
  }

  /** Runs after the transaction committed (forgetting a deleted project's key). */
  afterCommit(action: () => void): void {
    this.#afterCommit.push(action);
  }

  /**
   * Runs `work` under a savepoint: when it throws, what it wrote and the entries
   * it collected are undone, and the unit goes on (a failed login is counted).
   */
  async savepoint<T>(work: () => Promise<T>): Promise<T> {
    const collected = {
      audit: this.#audit.length,
      changes: this.#changes.length,
      afterCommit: this.#afterCommit.length,
      notifications: this.#notifications.length,
      atCommit: this.#atCommit.length,
    };
    await savepoint(this.db, 'unit_of_work');
    try {
      const result = await work();
      await releaseSavepoint(this.db, 'unit_of_work');
      return result;
    } catch (error) {
      await rollbackToSavepoint(this.db, 'unit_of_work');
      this.#audit.length = collected.audit;
      this.#changes.length = collected.changes;
      this.#afterCommit.length = collected.afterCommit;
      this.#notifications.length = collected.notifications;
      this.#atCommit.length = collected.atCommit;
      throw error;
    }
  }

  /**
   * Writes the collected audit rows and then the change rows, the transaction's last statements: the change log's
   * lock is held from there to commit, and on PostgreSQL both go with the COMMIT in one message (finishTransaction),
   * the notifications too (sent as statements of their own before them on PGlite, which has no scripts).
   */
  async finish(quiet: boolean, own = false): Promise<{ revision: number | undefined; afterCommit: (() => void)[] }> {
    if (!this.#authorized) throw new Error('a write ended without a permission decision (authorize, authorizeOrg, permissionsIn or authorizedBy)');
    const { audit, changes, scriptCommits } = this.#deps;
    const auditRows = this.#audit.length === 0 ? [] : [audit.insertion(this.#audit.map((entry) => this.#auditEntry(entry)))];
    const notifications = scriptCommits ? this.#notifications.map(notifyStatement) : [];
    if (!scriptCommits) for (const channel of this.#notifications) await notifyAtCommit(this.db, channel);
    // without scripts they are statements of their own (the closing statement cannot hold one with a WITH of its own)
    if (!scriptCommits) for (const statement of this.#atCommit) await statement.bound().execute(this.db);
    const atCommit = scriptCommits ? this.#atCommit : [];
    const afterCommit = this.#afterCommit;
    if (this.#changes.length > 0) {
      // a script answers with its first statement that returns rows: the change rows' revisions (a NOTIFY or a write at commit returns none)
      const closing = [...atCommit, ...auditRows, changes.insertion(this.#changes, { quiet }), ...notifications];
      const finished = finishTransaction(this.db, closing as [Statement], { script: scriptCommits }).then((rows) =>
        changes.recorded(rows as { revision: number }[], { quiet, own }),
      );
      return { revision: await (quiet || own ? changes.trackOwn(finished) : finished), afterCommit };
    }
    const closing = [...atCommit, ...auditRows, ...notifications];
    if (closing.length > 0) await finishTransaction(this.db, closing as [Statement], { script: scriptCommits });
    return { revision: undefined, afterCommit };
  }

  #auditEntry(entry: AuditEntry) {
    return {
      author: entry.actor ?? this.caller,
      scope: entry.project ? projectScope(entry.project) : { orgId: entry.orgId, projectId: entry.projectId },
      event: { type: entry.type, metadata: entry.metadata },
    };
  }
}

export interface UnitOfWorkDeps {
  db: Kysely<DB>;
  permissions: PermissionService;
  audit: AuditService;
  changes: ChangeFeed;
  lookups: Lookups;
  /** Moves the versions of the caches read from the tables a write wrote, in its transaction (caches/README.md). */
  cacheVersions: CacheVersions;
  /** The database ends a transaction with a script: the change rows and COMMIT in one message (Database.scriptCommits). */
  scriptCommits: boolean;
}

/**
 * The one way a mutation is made. write() opens the transaction and hands the
 * mutation a WriteContext; the mutation takes its locks, checks permission and
 * makes its change, collecting audit entries and change-feed rows. Then the
 * unit moves the versions of the caches it wrote, writes the audit rows and the
 * change rows last (the change log's lock is held only from there to commit; on
 * PostgreSQL they go with the COMMIT, in one message), and wakes the in-process
 * subscribers. Any failure rolls all of it back and reaches the caller as an
 * AppError (translateDatabaseError, with the mutation's own names for its
 * unique constraints); nothing is audited for a write that did not happen.
 */
export class UnitOfWork {
  readonly #deps: UnitOfWorkDeps;

  constructor(deps: UnitOfWorkDeps) {
    this.#deps = deps;
  }

  async write<T>(caller: Caller, work: (tx: WriteContext) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    const attempts = options.retry?.attempts ?? 1;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#once(caller, work, attempt, options);
      } catch (error) {
        const constraint = violatedConstraint(error);
        if (attempt < attempts && constraint !== undefined && options.retry!.on.includes(constraint)) continue;
        const named = constraint !== undefined ? options.conflicts?.[constraint] : undefined;
        throw named ? named() : (translateDatabaseError(error) ?? error);
      }
    }
  }

  async #once<T>(caller: Caller, work: (tx: WriteContext) => Promise<T>, attempt: number, options: WriteOptions): Promise<T> {
    const quiet = options.quiet ?? false;
    const { result, committed, revision, afterCommit } = await this.#deps.db.transaction().execute(async (trx) => {
      const tx = new WriteContext(trx, caller, attempt, this.#deps);
      const tracked = await this.#deps.cacheVersions.track(
        trx,
        () => work(tx),
        (channel) => tx.notifyAtCommit(channel),
      );
      return { result: tracked.result, committed: tracked.committed, ...(await tx.finish(quiet, options.own)) };
    });
    committed(revision);
    for (const action of afterCommit) action();
    if (revision !== undefined) {
      noteCommittedRevision(revision);
      if (!quiet) this.#deps.changes.committed();
    }
    return result;
  }
}

export function isActor(caller: Caller): caller is Actor {
  return caller !== null && 'kind' in caller;
}
