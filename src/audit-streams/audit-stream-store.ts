import { sql } from 'kysely';
import type { AuditLogStream, AuditLogsTable } from '../db/schema.ts';
import { claimDueRows } from '../db/leases.ts';
import { isUuid } from '../db/uuid.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';
import type { Selectable } from 'kysely';

export type NewAuditLogStream = Pick<AuditLogStream, 'orgId' | 'url' | 'encryptedSecretKey' | 'encryptedHeaders' | 'headerKeys'>;
export type AuditLogStreamChanges = Partial<
  Pick<
    AuditLogStream,
    | 'url'
    | 'encryptedHeaders'
    | 'headerKeys'
    | 'cursorXact'
    | 'cursorSequence'
    | 'lastDeliveredId'
    | 'lastDeliveredAt'
    | 'consecutiveFailures'
    | 'lastError'
    | 'lastErrorAt'
    | 'nextAttemptAt'
    | 'leaseUntil'
  >
>;

/** A place in an organization's audit log: the writing transaction, then the order of insertion. */
export interface AuditPosition {
  xact: number;
  sequence: number;
}

/** The newest position a new stream starts after: every transaction still running (or later) is after it. */
export async function findStreamStart(db: ReadOnlyDb): Promise<AuditPosition> {
  const { rows } = await sql<{ xmin: string }>`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`.execute(db);
  return { xact: Number(rows[0]!.xmin) - 1, sequence: Number.MAX_SAFE_INTEGER };
}

/** Inserts a stream that starts after `start` (a new stream delivers what is committed from its creation on). */
export async function insertAuditLogStream(db: Executor, values: NewAuditLogStream, start: AuditPosition): Promise<AuditLogStream> {
  return db
    .insertInto('auditLogStreams')
    .values({ ...values, cursorXact: start.xact, cursorSequence: start.sequence })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findAuditLogStream(db: ReadOnlyDb, orgId: string, id: string): Promise<AuditLogStream | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('auditLogStreams').selectAll().where('id', '=', id).where('orgId', '=', orgId).executeTakeFirst();
}

export async function listAuditLogStreams(db: ReadOnlyDb, orgId: string): Promise<AuditLogStream[]> {
  return db.selectFrom('auditLogStreams').selectAll().where('orgId', '=', orgId).orderBy('createdAt').orderBy('id').execute();
}

export async function countAuditLogStreams(db: Executor, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('auditLogStreams')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('orgId', '=', orgId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** Undefined when the stream is gone (deleted while a dispatcher pass held it). */
export async function updateAuditLogStream(db: Executor, id: string, changes: AuditLogStreamChanges): Promise<AuditLogStream | undefined> {
  return db
    .updateTable('auditLogStreams')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteAuditLogStream(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('auditLogStreams').where('id', '=', id).execute();
}

/** Every stream's sealed key and headers (root key rotation re-seals them). */
export async function listSealedAuditLogStreams(db: Executor) {
  return db.selectFrom('auditLogStreams').select(['id', 'orgId', 'encryptedSecretKey', 'encryptedHeaders']).execute();
}

export async function setSealedAuditLogStream(db: Executor, id: string, sealed: Pick<AuditLogStream, 'encryptedSecretKey' | 'encryptedHeaders'>): Promise<void> {
  await db.updateTable('auditLogStreams').set(sealed).where('id', '=', id).execute();
}

/** Leases due streams to this replica until `leaseUntil` (db/leases.ts: per organization, SKIP LOCKED). */
export async function claimDueAuditLogStreams(db: Executor, now: Date, leaseUntil: Date, limit: number, perOrg: number): Promise<AuditLogStream[]> {
  const ids = await claimDueRows(
    db,
    { table: 'audit_log_streams', source: sql`audit_log_streams t`, org: sql`t.org_id`, eligible: sql<boolean>`true` },
    now,
    leaseUntil,
    limit,
    perOrg,
  );
  if (ids.length === 0) return [];
  return db.selectFrom('auditLogStreams').selectAll().where('id', 'in', ids).orderBy('nextAttemptAt').execute();
}

/**
 * The organization's audit rows after `after`, in stream order, of transactions that ended before any still running
 * began (below the statement snapshot's xmin): rows no later commit can come before.
 */
export async function listSettledAuditLogsAfter(db: ReadOnlyDb, orgId: string, after: AuditPosition, limit: number): Promise<Selectable<AuditLogsTable>[]> {
  return db
    .selectFrom('auditLogs')
    .selectAll()
    .where('orgId', '=', orgId)
    .where(sql<boolean>`(xact, sequence) > (${after.xact}::bigint, ${after.sequence}::bigint)`)
    .where(sql<boolean>`xact < pg_snapshot_xmin(pg_current_snapshot())::text::bigint`)
    .orderBy('xact')
    .orderBy('sequence')
    .limit(limit)
    .execute();
}
