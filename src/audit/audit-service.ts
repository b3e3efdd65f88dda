import { type Actor, actorMetadata, type RequestOrigin } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { NewAuditLog } from '../db/schema.ts';
import { insertAuditLog, insertAuditLogs } from './audit-store.ts';

export interface AuditEvent {
  type: string;
  /** Names, ids and paths only: never a secret value, client secret or token. */
  metadata: Record<string, unknown>;
}

export interface AuditScope {
  orgId: string;
  projectId?: string | null;
  projectName?: string | null;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Writes audit rows; mutations pass their transaction so the row commits with them.
 * Reads use recordRead: their rows are written after the read succeeded, several
 * concurrent ones in one INSERT (group commit), and the read answers once its row
 * is stored.
 */
export class AuditService {
  readonly #retentionDays: number;
  readonly #reads: AuditBatcher | undefined;

  /** `db` is where recordRead writes; without it recordRead writes one row at a time to the given executor. */
  constructor(retentionDays: number, db?: Executor) {
    this.#retentionDays = retentionDays;
    this.#reads = db ? new AuditBatcher(db) : undefined;
  }

  async record(db: Executor, actor: Actor, scope: AuditScope, event: AuditEvent): Promise<void> {
    await insertAuditLog(db, this.#row(actor, scope, event));
  }

  /** An event no authenticated caller made (a login lockout): actor type `unknownUser`, as the reference records failed logins. */
  async recordUnauthenticated(db: Executor, origin: RequestOrigin, scope: AuditScope, event: AuditEvent): Promise<void> {
    await insertAuditLog(db, this.#rowOf('unknownUser', {}, origin, scope, event));
  }

  /** The audit row of a successful read (not part of any transaction). */
  async recordRead(db: Executor, actor: Actor, scope: AuditScope, event: AuditEvent): Promise<void> {
    if (!this.#reads) return this.record(db, actor, scope, event);
    await this.#reads.add(this.#row(actor, scope, event));
  }

  #row(actor: Actor, scope: AuditScope, event: AuditEvent): NewAuditLog {
    return this.#rowOf(actor.kind, actorMetadata(actor), actor, scope, event);
  }

  #rowOf(actorType: string, metadata: Record<string, string>, origin: RequestOrigin, scope: AuditScope, event: AuditEvent): NewAuditLog {
    return {
      actor: actorType,
      actorMetadata: JSON.stringify(metadata),
      ipAddress: origin.ip,
      userAgent: origin.userAgent,
      userAgentType: origin.userAgentType,
      eventType: event.type,
      eventMetadata: JSON.stringify(event.metadata),
      orgId: scope.orgId,
      projectId: scope.projectId ?? null,
      projectName: scope.projectName ?? null,
      expiresAt: new Date(Date.now() + this.#retentionDays * DAY_MS),
    };
  }
}

const MAX_BATCH = 500;

/**
 * Group commit for audit rows: the first row is written at once; rows that
 * arrive while an INSERT is under way go together into the next one.
 */
class AuditBatcher {
  readonly #db: Executor;
  #waiting: { row: NewAuditLog; done: (error?: unknown) => void }[] = [];
  #writing = false;

  constructor(db: Executor) {
    this.#db = db;
  }

  add(row: NewAuditLog): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ row, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!this.#writing) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#writing = true;
    while (this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, MAX_BATCH);
      try {
        await insertAuditLogs(this.#db, batch.map((entry) => entry.row));
        for (const entry of batch) entry.done();
      } catch (error) {
        for (const entry of batch) entry.done(error ?? new Error('audit insert failed'));
      }
    }
    this.#writing = false;
  }
}
