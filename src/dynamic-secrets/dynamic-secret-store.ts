import { sql } from 'kysely';
import type { DynamicSecret, DynamicSecretLease } from '../db/schema.ts';
import { isUuid } from '../db/uuid.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function insertDynamicSecret(
  db: Executor,
  values: { projectId: string; folderId: string; name: string; type: string; defaultTtl: string; maxTtl: string | null; encryptedInputs: Buffer },
): Promise<DynamicSecret> {
  return db.insertInto('dynamicSecrets').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findDynamicSecret(db: ReadOnlyDb, folderId: string, name: string): Promise<DynamicSecret | undefined> {
  return db.selectFrom('dynamicSecrets').selectAll().where('folderId', '=', folderId).where('name', '=', name).executeTakeFirst();
}

export async function findDynamicSecretById(db: ReadOnlyDb, id: string): Promise<DynamicSecret | undefined> {
  return db.selectFrom('dynamicSecrets').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listDynamicSecrets(db: ReadOnlyDb, folderId: string): Promise<DynamicSecret[]> {
  return db
    .selectFrom('dynamicSecrets')
    .selectAll()
    .where('folderId', '=', folderId)
    .orderBy(sql`name collate "C"`)
    .execute();
}

export async function updateDynamicSecret(
  db: Executor,
  id: string,
  changes: { name?: string; defaultTtl?: string; maxTtl?: string | null; encryptedInputs?: Buffer },
): Promise<DynamicSecret> {
  return db
    .updateTable('dynamicSecrets')
    .set({ ...changes, version: sql`version + 1`, updatedAt: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteDynamicSecret(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('dynamicSecrets').where('id', '=', id).execute();
}

export async function insertLease(
  db: Executor,
  values: { dynamicSecretId: string; projectId: string; externalEntityId: string; expireAt: Date; createdBy: string; createdAt: Date },
): Promise<DynamicSecretLease> {
  return db.insertInto('dynamicSecretLeases').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findLease(db: ReadOnlyDb, id: string): Promise<DynamicSecretLease | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('dynamicSecretLeases').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listLeases(db: ReadOnlyDb, dynamicSecretId: string): Promise<DynamicSecretLease[]> {
  return db.selectFrom('dynamicSecretLeases').selectAll().where('dynamicSecretId', '=', dynamicSecretId).orderBy('createdAt').orderBy('id').execute();
}

/** Leases held in the project, and of those the ones `createdBy` holds: what the caps count. */
export async function countLeases(db: ReadOnlyDb, projectId: string, createdBy: string): Promise<{ inProject: number; byCaller: number }> {
  const row = await db
    .selectFrom('dynamicSecretLeases')
    .select([sql<string>`count(*)`.as('inProject'), sql<string>`count(*) filter (where created_by = ${createdBy})`.as('byCaller')])
    .where('projectId', '=', projectId)
    .executeTakeFirstOrThrow();
  return { inProject: Number(row.inProject), byCaller: Number(row.byCaller) };
}

export async function updateLeaseExpiry(db: Executor, id: string, expireAt: Date): Promise<DynamicSecretLease> {
  return db
    .updateTable('dynamicSecretLeases')
    .set({ expireAt, version: sql`version + 1`, updatedAt: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The revocation failed: the lease stays, shown as such, and the expiry job tries again after `retryAt`. */
export async function markLeaseRevokeFailed(db: Executor, id: string, details: string, retryAt: Date | null): Promise<void> {
  await db
    .updateTable('dynamicSecretLeases')
    .set({ status: 'FailedDeletion', statusDetails: details, revokeClaimedUntil: retryAt, updatedAt: sql`now()` })
    .where('id', '=', id)
    .execute();
}

export async function deleteLease(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('dynamicSecretLeases').where('id', '=', id).execute();
}

/**
 * Claims up to `limit` leases expired at `now` that no other replica holds a claim on, until `claimUntil`:
 * the claim is a row update under SKIP LOCKED, so two replicas running at once take disjoint leases.
 */
export async function claimExpiredLeases(db: Executor, now: Date, claimUntil: Date, limit: number): Promise<DynamicSecretLease[]> {
  const due = db
    .selectFrom('dynamicSecretLeases')
    .select('id')
    .where('expireAt', '<=', now)
    .where((eb) => eb.or([eb('revokeClaimedUntil', 'is', null), eb('revokeClaimedUntil', '<', now)]))
    .orderBy('expireAt')
    .limit(limit)
    .forUpdate()
    .skipLocked();
  return db.updateTable('dynamicSecretLeases').set({ revokeClaimedUntil: claimUntil }).where('id', 'in', due).returningAll().execute();
}
