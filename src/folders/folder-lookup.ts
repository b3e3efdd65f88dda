import type { Executor } from '../db/database.ts';
import type { Folder } from '../db/schema.ts';
import { NotFoundError } from '../errors.ts';
import { findFolderByPath, insertRootFolder } from './folder-store.ts';
import { formatSecretPath, parseSecretPath } from './secret-path.ts';

export function createRootFolder(db: Executor, envId: string): Promise<Folder> {
  return insertRootFolder(db, envId);
}

/** The folder at `path` in an environment, or 404. */
export async function requireFolder(db: Executor, environment: { id: string; slug: string }, path: string): Promise<Folder> {
  const segments = parseSecretPath(path);
  const folder = await findFolderByPath(db, environment.id, segments);
  if (!folder) {
    throw new NotFoundError(`Folder with path '${formatSecretPath(segments)}' not found in environment with slug '${environment.slug}'`);
  }
  return folder;
}
