import type { ReadOnlyDb } from '../db/database.ts';
import { listFoldersDeletedSince, listFoldersMadeAfter } from '../folders/folder-history-store.ts';
import { type FolderAtPath, MAX_SUBTREE_FOLDERS, requireFolderSubtree } from '../folders/folder-lookup.ts';
import { AppError } from '../errors.ts';

/** One path a restore writes: the secrets of `sourceId` at the revision go into the folder there now (or a new one). */
export interface RestoreTarget {
  path: string;
  /** The folder that stood at the path at the revision, live or deleted since. */
  sourceId: string;
  /** The folder at the path now; undefined when the restore recreates it. */
  currentId: string | undefined;
}

export interface RestorePlan {
  /** Parents before children. */
  targets: RestoreTarget[];
  /** Folders below the restored path made after the revision where none stood then: deepest first. */
  remove: FolderAtPath[];
}

/**
 * What a restore of the folders at `path` (and `maxDepth` levels below) to `revision` does, path by path: the folder
 * that stood at a path then gives the secrets; the folder standing there now takes them, or one is recreated when the
 * path is empty now; a folder standing now where none stood then is removed (never the restored path itself). The
 * restored path must exist now (404 otherwise).
 */
export async function planRestore(db: ReadOnlyDb, environment: { id: string; slug: string }, path: string, maxDepth: number, revision: number): Promise<RestorePlan> {
  const current = await requireFolderSubtree(db, environment, path, maxDepth);
  const madeAfter = await listFoldersMadeAfter(
    db,
    current.map((folder) => folder.id),
    revision,
  );
  const deleted = await listFoldersDeletedSince(db, { environmentId: environment.id, path, maxDepth }, revision, MAX_SUBTREE_FOLDERS + 1);
  if (current.length + deleted.length > MAX_SUBTREE_FOLDERS) {
    throw new AppError(422, 'ListingTooLarge', `'${path}' had more than ${MAX_SUBTREE_FOLDERS} folders below it; restore a deeper path, or without recursive`);
  }
  const currentAt = new Map(current.map((folder) => [folder.path, folder]));
  const targets: RestoreTarget[] = [];
  const receiving = new Set<string>();
  for (const gone of deleted) {
    const now = currentAt.get(gone.path);
    // a folder that stood at the path then and stands there now keeps its own history (the record is of a rename)
    if (now && !madeAfter.has(now.id)) continue;
    if (now) receiving.add(now.id);
    targets.push({ path: gone.path, sourceId: gone.folderId, currentId: now?.id });
  }
  const remove: FolderAtPath[] = [];
  for (const folder of current) {
    if (receiving.has(folder.id)) continue;
    if (madeAfter.has(folder.id) && folder !== current[0]) remove.push(folder);
    else targets.push({ path: folder.path, sourceId: folder.id, currentId: folder.id });
  }
  targets.sort((a, b) => (a.path < b.path ? -1 : 1));
  remove.sort((a, b) => b.path.length - a.path.length);
  return { targets, remove };
}
