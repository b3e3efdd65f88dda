import { type Actor, actorMetadata, type RequestOrigin } from '../actor/actor.ts';
import type { NewAuditLog } from '../db/schema.ts';
import { auditLogsInsertion, insertAuditLogs } from './audit-store.ts';
import type { Executor } from '../db/database.ts';
import type { Statement } from '../db/statements.ts';

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

/** The audit scope of an entry about a project. */
export function projectScope(project: { id: string; orgId: string; name: string }): AuditScope {
  return { orgId: project.orgId, projectId: project.id, projectName: project.name };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Writes audit rows: a mutation's through its unit of work (services/unit-of-work.ts),
 * so they commit with it. Reads use recordRead: their rows are written after the read succeeded, several
 * concurrent ones in one INSERT (group commit), and the read answers once its row
 * is stored.
 */
export class AuditService {
  readonly #retentionDays: number;
  readonly #reads: AuditBatcher;

  /** `db` is where recordRead writes: the service's own writable handle (domains are given a read-only one). */
  constructor(retentionDays: number, db: Executor) {
    this.#retentionDays = retentionDays;
    this.#reads = new AuditBatcher(db);
  }

  /**
   * The statement that writes a write's entries (at least one), in its transaction: the unit of work sends it
   * with the change rows and the COMMIT (finishTransaction). An author without an actor is a caller not
   * authenticated (a failed login): actor type `unknownUser`, as the reference records it.
   */
  insertion(entries: readonly { author: Actor | RequestOrigin | null; scope: AuditScope; event: AuditEvent }[]): Statement {
    return auditLogsInsertion(
      entries.map(({ author, scope, event }) => {
        if (author === null) throw new Error(`the audit entry '${event.type}' names no actor`);
        return 'kind' in author ? this.#row(author, scope, event) : this.#rowOf('unknownUser', {}, author, scope, event);
      }),
    );
  }

  /** The audit row of a successful read (not part of any transaction). */
  async recordRead(actor: Actor, scope: AuditScope, event: AuditEvent): Promise<void> {
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
 * Group commit for audit rows: rows that arrive in the same turn of the event
 * loop, or while an INSERT is under way, go together into the next INSERT.
 */
class AuditBatcher {
  readonly #db: Executor;
  #waiting: { row: NewAuditLog; done: (error?: Error) => void }[] = [];
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
    // An embedded database runs a statement without giving the event loop a turn, so without this wait no read
    // answered by the same turn would join: one INSERT per read (PGlite's list throughput was bound by it).
    await new Promise((resolve) => setImmediate(resolve));
    while (this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, MAX_BATCH);
      try {
        await insertAuditLogs(
          this.#db,
          batch.map((entry) => entry.row),
        );
        for (const entry of batch) entry.done();
      } catch (error) {
        for (const entry of batch) entry.done(error instanceof Error ? error : new Error('audit insert failed'));
      }
    }
    this.#writing = false;
  }
}
