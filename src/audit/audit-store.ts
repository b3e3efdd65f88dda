import { sql } from 'kysely';
import type { NewAuditLog } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function insertAuditLogs(db: Executor, rows: NewAuditLog[]): Promise<void> {
  await db.insertInto('auditLogs').values(rows).execute();
}

export interface AuditLogFilter {
  orgId: string;
  projectId?: string;
  /** Only these projects' entries, and organization-level ones (no project) when `orgEvents`. */
  visible?: { projectIds: string[]; orgEvents: boolean };
  eventTypes?: string[];
  userAgentTypes?: string[];
  actorId?: string;
  actorType?: string;
  startDate?: Date;
  endDate?: Date;
  /** JSON containment on the event metadata. */
  eventMetadata?: Record<string, string>;
  /** Keyset position: entries strictly older than this one. */
  before?: { createdAt: Date; id: string };
  offset: number;
  limit: number;
}

/** Newest first; entries with the same timestamp are ordered by id, so pages are stable. */
export async function findAuditLogs(db: ReadOnlyDb, filter: AuditLogFilter) {
  let query = db.selectFrom('auditLogs').selectAll().where('orgId', '=', filter.orgId);
  if (filter.projectId) query = query.where('projectId', '=', filter.projectId);
  const visible = filter.visible;
  if (visible) {
    query = query.where((eb) =>
      eb.or([visible.projectIds.length > 0 ? eb('projectId', 'in', visible.projectIds) : eb.lit(false), visible.orgEvents ? eb('projectId', 'is', null) : eb.lit(false)]),
    );
  }
  if (filter.eventTypes?.length) query = query.where('eventType', 'in', filter.eventTypes);
  if (filter.userAgentTypes?.length) query = query.where('userAgentType', 'in', filter.userAgentTypes);
  if (filter.actorType) query = query.where('actor', '=', filter.actorType);
  if (filter.actorId) {
    const actorId = filter.actorId;
    query = query.where((eb) => eb.or([eb(sql`actor_metadata->>'userId'`, '=', actorId), eb(sql`actor_metadata->>'identityId'`, '=', actorId)]));
  }
  if (filter.startDate) query = query.where('createdAt', '>=', filter.startDate);
  if (filter.endDate) query = query.where('createdAt', '<=', filter.endDate);
  if (filter.eventMetadata) query = query.where(sql<boolean>`event_metadata @> ${JSON.stringify(filter.eventMetadata)}::jsonb`);
  if (filter.before) {
    const { createdAt, id } = filter.before;
    query = query.where((eb) => eb.or([eb('createdAt', '<', createdAt), eb.and([eb('createdAt', '=', createdAt), eb('id', '<', id)])]));
  }
  return query.orderBy('createdAt', 'desc').orderBy('id', 'desc').offset(filter.offset).limit(filter.limit).execute();
}

/** Deletes up to `batchSize` expired entries; rows another replica is deleting are skipped. */
export async function deleteExpiredAuditLogs(db: Executor, now: Date, batchSize: number): Promise<number> {
  const result = await sql`
    DELETE FROM audit_logs WHERE id IN (
      SELECT id FROM audit_logs WHERE expires_at < ${now} ORDER BY expires_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}
