import { sql } from 'kysely';
import type { ReadOnlyDb } from '../db/database.ts';
import { parseSecretPath } from './secret-path.ts';

/** A folder that stood at a path at a revision and has been deleted since (its history keeps its id). */
export interface DeletedFolderAt {
  folderId: string;
  path: string;
}

/**
 * The folders of `folderIds` made after `revision` (by a transaction whose change rows are above it). Folders made
 * before folder history was kept, or by a transaction without change rows (an environment's root), count as older.
 */
export async function listFoldersMadeAfter(db: ReadOnlyDb, folderIds: readonly string[], revision: number): Promise<Set<string>> {
  if (folderIds.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`
    SELECT f.id FROM secret_folders f
    WHERE f.id IN (${sql.join(folderIds.map((id) => sql`${id}::uuid`))})
      AND (SELECT max(c.revision) FROM change_log c WHERE c.xact = f.xact) > ${revision}`.execute(db);
  return new Set(rows.map((row) => row.id));
}

/**
 * The folders at `path` and up to `maxDepth` levels below it in the environment that stood there at `revision` (made
 * at or before it) and were deleted after it, one per path (paths as they were when deleted), at most `limit`.
 */
export async function listFoldersDeletedSince(
  db: ReadOnlyDb,
  place: { environmentId: string; path: string; maxDepth: number },
  revision: number,
  limit: number,
): Promise<DeletedFolderAt[]> {
  const root = place.path === '/' ? '/' : `${place.path}/`;
  const maxSegments = parseSecretPath(place.path).length + place.maxDepth;
  const { rows } = await sql<DeletedFolderAt>`
    SELECT DISTINCT ON (d.path) d.folder_id AS "folderId", d.path
    FROM deleted_folders d
    WHERE d.env_id = ${place.environmentId}
      AND (d.path = ${place.path} OR left(d.path, ${root.length}) = ${root})
      AND length(d.path) - length(replace(d.path, '/', '')) <= ${maxSegments}
      AND (SELECT max(c.revision) FROM change_log c WHERE c.xact = d.xact) > ${revision}
      AND coalesce((SELECT max(c.revision) FROM change_log c WHERE c.xact = d.created_xact), 0) <= ${revision}
    ORDER BY d.path, d.xact DESC
    LIMIT ${limit}`.execute(db);
  return rows;
}
