import type { Insertable, Updateable } from 'kysely';
import { LISTING_METADATA_KINDS } from '../changes/change-feed.ts';
import { isUuid } from '../db/uuid.ts';
import type { SecretRotation, SecretRotationsTable } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

/** A rotation with the names its answer shows. */
export type RotationRow = SecretRotation & { environmentSlug: string; environmentName: string; connectionName: string | null };

function withNames(db: ReadOnlyDb) {
  return db
    .selectFrom('secretRotations')
    .innerJoin('projectEnvironments', 'projectEnvironments.id', 'secretRotations.environmentId')
    .leftJoin('appConnections', 'appConnections.id', 'secretRotations.connectionId')
    .selectAll('secretRotations')
    .select(['projectEnvironments.slug as environmentSlug', 'projectEnvironments.name as environmentName', 'appConnections.name as connectionName']);
}

export async function insertRotation(db: Executor, values: Insertable<SecretRotationsTable>): Promise<SecretRotation> {
  return db.insertInto('secretRotations').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findRotationById(db: ReadOnlyDb, id: string): Promise<RotationRow | undefined> {
  if (!isUuid(id)) return undefined;
  return withNames(db).where('secretRotations.id', '=', id).executeTakeFirst();
}

export async function findRotationByName(db: ReadOnlyDb, projectId: string, name: string): Promise<RotationRow | undefined> {
  return withNames(db).where('secretRotations.projectId', '=', projectId).where('secretRotations.name', '=', name).executeTakeFirst();
}

export async function listRotations(db: ReadOnlyDb, projectId: string, type?: string): Promise<RotationRow[]> {
  let query = withNames(db).where('secretRotations.projectId', '=', projectId);
  if (type) query = query.where('secretRotations.type', '=', type);
  return query.orderBy('secretRotations.name').execute();
}

/** The rotation's row, locked until the transaction ends: one run, or one change, at a time. */
export async function lockRotation(db: Executor, id: string): Promise<SecretRotation | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('secretRotations').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function updateRotation(db: Executor, id: string, changes: Updateable<SecretRotationsTable>): Promise<SecretRotation> {
  return db
    .updateTable('secretRotations')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteRotation(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('secretRotations').where('id', '=', id).execute();
}

/**
 * Rotations a scheduler may start or resume now, at most `limit`: due by schedule, or left with a run under way
 * whose claim has lapsed (its replica died). Rows another replica holds locked are skipped, not waited for.
 */
export async function listDueRotationIds(db: ReadOnlyDb, now: Date, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('secretRotations')
    .select('id')
    .where((eb) =>
      eb.and([
        eb.or([
          eb.and([eb('isAutoRotationEnabled', '=', true), eb('nextRotationAt', '<=', now)]),
          eb.and([eb('pendingIndex', 'is not', null), eb('runClaimedUntil', '<', now)]),
        ]),
        eb.or([eb('runClaimedUntil', 'is', null), eb('runClaimedUntil', '<', now)]),
      ]),
    )
    .orderBy('nextRotationAt')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

/** The newest change-feed revision that changed secrets at one place (the last write of a rotation there, or a later one). */
export async function findLastRevisionAt(db: ReadOnlyDb, projectId: string, environmentId: string, secretPath: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('changeLog')
    .select((eb) => eb.fn.max('revision').as('revision'))
    .where('projectId', '=', projectId)
    .where('environmentId', '=', environmentId)
    .where('secretPath', '=', secretPath)
    .where('kind', 'not in', [...LISTING_METADATA_KINDS])
    .executeTakeFirst();
  return row?.revision == null ? undefined : Number(row.revision);
}
