import type { Selectable } from 'kysely';
import type { InstallationTable } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export type InstallationRow = Pick<Selectable<InstallationTable>, 'id' | 'rootKeyCheck'>;

/** The database's one installation row (the migration makes it). */
export async function requireInstallation(db: ReadOnlyDb, lock?: 'update' | 'share'): Promise<InstallationRow> {
  let query = db.selectFrom('installation').select(['id', 'rootKeyCheck']);
  if (lock === 'update') query = query.forUpdate();
  if (lock === 'share') query = query.forShare();
  return query.executeTakeFirstOrThrow();
}

/** Records the root key's check value if none is recorded yet; false when one already was. */
export async function recordFirstRootKeyCheck(db: Executor, id: string, check: Buffer): Promise<boolean> {
  const result = await db.updateTable('installation').set({ rootKeyCheck: check }).where('id', '=', id).where('rootKeyCheck', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function replaceRootKeyCheck(db: Executor, id: string, check: Buffer): Promise<void> {
  await db.updateTable('installation').set({ rootKeyCheck: check, rootKeyRotatedAt: new Date() }).where('id', '=', id).execute();
}
