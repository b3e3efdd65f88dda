import { type Actor, actorMetadata } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { insertAuditLog } from './audit-store.ts';

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

/** Writes audit rows; mutations pass their transaction so the row commits with them. */
export class AuditService {
  readonly #retentionDays: number;

  constructor(retentionDays: number) {
    this.#retentionDays = retentionDays;
  }

  async record(db: Executor, actor: Actor, scope: AuditScope, event: AuditEvent): Promise<void> {
    await insertAuditLog(db, {
      actor: actor.kind,
      actorMetadata: JSON.stringify(actorMetadata(actor)),
      ipAddress: actor.ip,
      userAgent: actor.userAgent,
      userAgentType: actor.userAgentType,
      eventType: event.type,
      eventMetadata: JSON.stringify(event.metadata),
      orgId: scope.orgId,
      projectId: scope.projectId ?? null,
      projectName: scope.projectName ?? null,
      expiresAt: new Date(Date.now() + this.#retentionDays * DAY_MS),
    });
  }
}
