import type { Folder } from '../db/schema.ts';
import { AppError, NotFoundError } from '../errors.ts';
import { findFolderById, findFolderByPath, folderPathSegments, listFolderSubtree } from './folder-store.ts';
import { findEnvironmentById } from '../environments/environment-lookup.ts';
import { formatSecretPath, parseSecretPath } from './secret-path.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/** The folder at `path` in an environment, or 404. */
export async function requireFolder(db: ReadOnlyDb, environment: { id: string; slug: string }, path: string): Promise<Folder> {
  const segments = parseSecretPath(path);
  const folder = await findFolderByPath(db, environment.id, segments);
  if (!folder) {
    throw new NotFoundError(`Folder with path '${formatSecretPath(segments)}' not found in environment with slug '${environment.slug}'`);
  }
  return folder;
}

export interface FolderAtPath {
  id: string;
  path: string;
}

/** Folders one recursive read may cover; a larger subtree is refused before any of its secrets is read. */
export const MAX_SUBTREE_FOLDERS = 5000;

/**
 * The folder at `path` and every folder below it, at most `maxDepth` levels
 * down, each with its full path. Paths match whole segments only. More than
 * MAX_SUBTREE_FOLDERS folders → 422.
 */
export async function requireFolderSubtree(db: ReadOnlyDb, environment: { id: string; slug: string }, path: string, maxDepth: number): Promise<FolderAtPath[]> {
  const root = await requireFolder(db, environment, path);
  const children = new Map<string, { id: string; name: string }[]>();
  const subtree = await listFolderSubtree(db, root.id, maxDepth, MAX_SUBTREE_FOLDERS + 1);
  if (subtree.length > MAX_SUBTREE_FOLDERS) {
    throw new AppError(
      422,
      'ListingTooLarge',
      `'${formatSecretPath(parseSecretPath(path))}' has more than ${MAX_SUBTREE_FOLDERS} folders below it; list a deeper path, or without recursive`,
    );
  }
  for (const folder of subtree) {
    if (folder.parentId && folder.id !== root.id) children.set(folder.parentId, [...(children.get(folder.parentId) ?? []), folder]);
  }
  const start = formatSecretPath(parseSecretPath(path));
  const found: FolderAtPath[] = [];
  const visit = (id: string, folderPath: string, depth: number) => {
    found.push({ id, path: folderPath });
    if (depth >= maxDepth) return;
    for (const child of children.get(id) ?? []) visit(child.id, folderPath === '/' ? `/${child.name}` : `${folderPath}/${child.name}`, depth + 1);
  };
  visit(root.id, start, 0);
  return found;
}

/** The folder at `path`, or undefined when it does not exist. */
export function findFolderAtPath(db: ReadOnlyDb, envId: string, path: string): Promise<Folder | undefined> {
  return findFolderByPath(db, envId, parseSecretPath(path));
}

/** The environment slug and path of an existing folder. */
export async function folderLocation(db: ReadOnlyDb, folderId: string): Promise<{ environment: string; secretPath: string }> {
  const folder = await findFolderById(db, folderId);
  const environment = folder && (await findEnvironmentById(db, folder.envId));
  if (!folder || !environment) throw new NotFoundError(`Folder with ID '${folderId}' not found`);
  return { environment: environment.slug, secretPath: formatSecretPath(await folderPathSegments(db, folder.id)) };
}
