import { isUuid } from '../db/uuid.ts';
import type { AppConnection } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function insertAppConnection(
  db: Executor,
  values: { id: string; projectId: string; name: string; description: string | null; app: string; method: string; encryptedCredentials: Buffer },
): Promise<AppConnection> {
  return db.insertInto('appConnections').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findAppConnectionById(db: ReadOnlyDb, id: string, options: { lock?: boolean } = {}): Promise<AppConnection | undefined> {
  if (!isUuid(id)) return undefined;
  let query = db.selectFrom('appConnections').selectAll().where('id', '=', id);
  if (options.lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function findAppConnectionByName(db: ReadOnlyDb, projectId: string, name: string): Promise<AppConnection | undefined> {
  return db.selectFrom('appConnections').selectAll().where('projectId', '=', projectId).where('name', '=', name).executeTakeFirst();
}

export async function listAppConnections(db: ReadOnlyDb, projectId: string, app: string): Promise<AppConnection[]> {
  return db.selectFrom('appConnections').selectAll().where('projectId', '=', projectId).where('app', '=', app).orderBy('name').execute();
}

export async function updateAppConnection(
  db: Executor,
  id: string,
  changes: { name?: string; description?: string | null; encryptedCredentials?: Buffer },
): Promise<AppConnection> {
  return db
    .updateTable('appConnections')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1), updatedAt: new Date() }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteAppConnection(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('appConnections').where('id', '=', id).execute();
}

export async function isAppConnectionInUse(db: Executor, id: string): Promise<boolean> {
  return (await db.selectFrom('secretRotations').select('id').where('connectionId', '=', id).limit(1).executeTakeFirst()) !== undefined;
}
