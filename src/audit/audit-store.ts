import { sql } from 'kysely';
import type { NewAuditLog } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';
import { type Statement, statement } from '../db/statements.ts';

export async function insertAuditLogs(db: Executor, rows: NewAuditLog[]): Promise<void> {
  await db.insertInto('auditLogs').values(rows).execute();
}

/**
 * The INSERT of a write's rows (at least one), in their order, as a statement of its transaction's end
 * (finishTransaction: on PostgreSQL sent with the COMMIT): the rows travel as one JSON value.
 */
export function auditLogsInsertion(rows: NewAuditLog[]): Statement {
  return statement`
    INSERT INTO audit_logs (actor, actor_metadata, ip_address, user_agent, user_agent_type, event_type, event_metadata, org_id, project_id, project_name, expires_at)
    SELECT r.actor, r.actor_metadata::jsonb, r.ip_address, r.user_agent, r.user_agent_type, r.event_type, r.event_metadata::jsonb, r.org_id, r.project_id, r.project_name, r.expires_at
    FROM ROWS FROM (
      jsonb_to_recordset(${JSON.stringify(rows.map(toInsertedRow))}::jsonb)
        AS (actor text, actor_metadata text, ip_address text, user_agent text, user_agent_type text, event_type text, event_metadata text,
            org_id uuid, project_id uuid, project_name text, expires_at timestamptz)
    ) WITH ORDINALITY AS r(actor, actor_metadata, ip_address, user_agent, user_agent_type, event_type, event_metadata, org_id, project_id, project_name, expires_at, position)
    ORDER BY r.position`;
}

/** An audit row as audit_logs's columns name them (the metadata: JSON texts, as bound they would be). */
function toInsertedRow(row: NewAuditLog) {
  return {
    actor: row.actor,
    actor_metadata: row.actorMetadata,
    ip_address: row.ipAddress ?? null,
    user_agent: row.userAgent ?? null,
    user_agent_type: row.userAgentType ?? null,
    event_type: row.eventType,
    event_metadata: row.eventMetadata,
    org_id: row.orgId ?? null,
    project_id: row.projectId ?? null,
    project_name: row.projectName ?? null,
    expires_at: row.expiresAt instanceof Date ? row.expiresAt.toISOString() : (row.expiresAt ?? null),
  };
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
