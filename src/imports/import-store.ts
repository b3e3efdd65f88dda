import { sql } from 'kysely';
import { isUuid } from '../db/uuid.ts';
import type { SecretImport } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

/** An import row with its source environment's name and slug, and the project both belong to. */
export type ImportRow = SecretImport & { importEnvName: string; importEnvSlug: string; projectId: string };

/** One edge of a project's import graph: the folder at (envId, folderPath) imports (importEnvId, importPath). */
export interface ImportEdge {
  envId: string;
  envSlug: string;
  folderPath: string;
  importEnvId: string;
  importEnvSlug: string;
  importPath: string;
}

function selectImportRows(db: ReadOnlyDb) {
  return db
    .selectFrom('secretImports')
    .innerJoin('projectEnvironments', 'projectEnvironments.id', 'secretImports.importEnv')
    .selectAll('secretImports')
    .select(['projectEnvironments.name as importEnvName', 'projectEnvironments.slug as importEnvSlug', 'projectEnvironments.projectId as projectId']);
}

export async function findImportById(db: ReadOnlyDb, id: string): Promise<ImportRow | undefined> {
  if (!isUuid(id)) return undefined;
  return selectImportRows(db).where('secretImports.id', '=', id).executeTakeFirst();
}

export async function listImportsOfFolder(db: ReadOnlyDb, folderId: string): Promise<ImportRow[]> {
  return selectImportRows(db).where('secretImports.folderId', '=', folderId).orderBy('secretImports.position').execute();
}

export async function listImportsOfFolders(
  db: ReadOnlyDb,
  folderIds: string[],
): Promise<Array<{ id: string; folderId: string; position: number; importEnvId: string; importEnvSlug: string; importPath: string; isReplication: boolean }>> {
  if (folderIds.length === 0) return [];
  return db
    .selectFrom('secretImports')
    .innerJoin('projectEnvironments', 'projectEnvironments.id', 'secretImports.importEnv')
    .select([
      'secretImports.id',
      'secretImports.folderId',
      'secretImports.position',
      'secretImports.importEnv as importEnvId',
      'projectEnvironments.slug as importEnvSlug',
      'secretImports.importPath',
      'secretImports.isReplication',
    ])
    .where('secretImports.folderId', 'in', folderIds)
    .orderBy('secretImports.folderId')
    .orderBy('secretImports.position')
    .execute();
}

export async function findImportBySource(db: Executor, folderId: string, importEnv: string, importPath: string): Promise<SecretImport | undefined> {
  return db
    .selectFrom('secretImports')
    .selectAll()
    .where('folderId', '=', folderId)
    .where('importEnv', '=', importEnv)
    .where('importPath', '=', importPath)
    .executeTakeFirst();
}

export async function maxImportPosition(db: Executor, folderId: string): Promise<number> {
  const row = await db
    .selectFrom('secretImports')
    .select((eb) => eb.fn.max('position').as('max'))
    .where('folderId', '=', folderId)
    .executeTakeFirst();
  return row?.max ?? 0;
}

export async function insertImport(db: Executor, values: { folderId: string; importEnv: string; importPath: string; position: number }): Promise<SecretImport> {
  return db.insertInto('secretImports').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateImport(db: Executor, id: string, changes: { importEnv: string; importPath: string; position: number }): Promise<void> {
  await db
    .updateTable('secretImports')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .execute();
}

/** Adds `delta` to the positions in [from, to] of a folder's imports (inclusive; `to` open-ended when null). */
export async function shiftImportPositions(db: Executor, folderId: string, from: number, to: number | null, delta: 1 | -1): Promise<void> {
  let query = db
    .updateTable('secretImports')
    .set((eb) => ({ position: eb('position', '+', delta) }))
    .where('folderId', '=', folderId)
    .where('position', '>=', from);
  if (to !== null) query = query.where('position', '<=', to);
  await query.execute();
}

export async function deleteImport(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('secretImports').where('id', '=', id).execute();
}

/** Every import of a project, with the importing folder's environment and full path. */
export async function listImportEdges(db: Executor, projectId: string): Promise<ImportEdge[]> {
  const result = await sql<ImportEdge>`
    WITH RECURSIVE up AS (
      SELECT f.id AS folder_id, f.env_id, f.parent_id,
             CASE WHEN f.parent_id IS NULL THEN ''::text ELSE '/' || f.name END AS path
      FROM secret_folders f
      JOIN project_environments e ON e.id = f.env_id
      WHERE e.project_id = ${projectId} AND EXISTS (SELECT 1 FROM secret_imports i WHERE i.folder_id = f.id)
      UNION ALL
      SELECT up.folder_id, up.env_id, p.parent_id,
             CASE WHEN p.parent_id IS NULL THEN up.path ELSE '/' || p.name || up.path END
      FROM secret_folders p JOIN up ON p.id = up.parent_id
    )
    SELECT up.env_id, fe.slug AS env_slug, COALESCE(NULLIF(up.path, ''), '/') AS folder_path,
           i.import_env AS import_env_id, ie.slug AS import_env_slug, i.import_path
    FROM up
    JOIN secret_imports i ON i.folder_id = up.folder_id
    JOIN project_environments fe ON fe.id = up.env_id
    JOIN project_environments ie ON ie.id = i.import_env
    WHERE up.parent_id IS NULL`.execute(db);
  return result.rows;
}
