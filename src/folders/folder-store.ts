import { sql } from 'kysely';
import { isUuid } from '../db/uuid.ts';
import type { Folder } from '../db/schema.ts';
import { ROOT_FOLDER_NAME } from './secret-path.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function insertRootFolder(db: Executor, envId: string): Promise<Folder> {
  return db.insertInto('secretFolders').values({ envId, parentId: null, name: ROOT_FOLDER_NAME }).returningAll().executeTakeFirstOrThrow();
}

export async function insertFolder(db: Executor, values: { envId: string; parentId: string; name: string }): Promise<Folder> {
  return db.insertInto('secretFolders').values(values).returningAll().executeTakeFirstOrThrow();
}

/**
 * Walks `segments` down from the environment's root and returns the deepest
 * folder that exists along it, with how many segments it matched.
 */
export async function findDeepestFolder(db: ReadOnlyDb, envId: string, segments: readonly string[]): Promise<{ folder: Folder; depth: number } | undefined> {
  const result = await sql<Folder & { depth: number }>`
    WITH RECURSIVE walk AS (
      SELECT f.*, 0 AS depth FROM secret_folders f WHERE f.env_id = ${envId} AND f.parent_id IS NULL
      UNION ALL
      SELECT c.*, w.depth + 1 FROM secret_folders c JOIN walk w ON c.parent_id = w.id
      WHERE w.depth < ${segments.length} AND c.name = (${[...segments]}::text[])[w.depth + 1]
    )
    SELECT * FROM walk ORDER BY depth DESC LIMIT 1`.execute(db);
  const row = result.rows[0];
  if (!row) return undefined;
  const { depth, ...folder } = row;
  return { folder, depth };
}

export async function findFolderByPath(db: ReadOnlyDb, envId: string, segments: readonly string[]): Promise<Folder | undefined> {
  const found = await findDeepestFolder(db, envId, segments);
  return found && found.depth === segments.length ? found.folder : undefined;
}

export async function findFolderById(db: ReadOnlyDb, id: string): Promise<Folder | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('secretFolders').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findChildFolder(db: Executor, parentId: string, name: string): Promise<Folder | undefined> {
  return db.selectFrom('secretFolders').selectAll().where('parentId', '=', parentId).where('name', '=', name).executeTakeFirst();
}

export async function listChildFolders(db: ReadOnlyDb, parentId: string): Promise<Folder[]> {
  return db.selectFrom('secretFolders').selectAll().where('parentId', '=', parentId).where('isReserved', '=', false).orderBy('name').execute();
}

/** Folder names from the root's first child down to the folder itself. */
export async function folderPathSegments(db: ReadOnlyDb, folderId: string): Promise<string[]> {
  const result = await sql<{ name: string; parentId: string | null }>`
    WITH RECURSIVE up AS (
      SELECT id, parent_id, name, 0 AS depth FROM secret_folders WHERE id = ${folderId}
      UNION ALL
      SELECT p.id, p.parent_id, p.name, up.depth + 1 FROM secret_folders p JOIN up ON p.id = up.parent_id
    )
    SELECT name, parent_id FROM up ORDER BY depth DESC`.execute(db);
  return result.rows.filter((row) => row.parentId !== null).map((row) => row.name);
}

export async function renameFolder(db: Executor, id: string, name: string): Promise<Folder> {
  return db.updateTable('secretFolders').set({ name, updatedAt: new Date() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteFolder(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('secretFolders').where('id', '=', id).execute();
}

/**
 * The folder `rootId` and the folders below it, at most `maxDepth` levels
 * down (id, parent and name only), stopping after `limit` rows.
 */
export async function listFolderSubtree(
  db: ReadOnlyDb,
  rootId: string,
  maxDepth: number,
  limit: number,
): Promise<{ id: string; parentId: string | null; name: string }[]> {
  const result = await sql<{ id: string; parentId: string | null; name: string }>`
    WITH RECURSIVE tree AS (
      SELECT id, parent_id, name, 0 AS depth FROM secret_folders WHERE id = ${rootId}
      UNION ALL
      SELECT c.id, c.parent_id, c.name, t.depth + 1 FROM secret_folders c JOIN tree t ON c.parent_id = t.id
      WHERE t.depth < ${maxDepth} AND NOT c.is_reserved
    )
    SELECT id, parent_id, name FROM tree LIMIT ${limit}`.execute(db);
  return result.rows;
}
