import type { Actor } from '../actor/actor.ts';
import { ProjectNotFoundError } from '../errors.ts';
import type { ServiceDeps } from './deps.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/**
 * Whether the actor may know that the project exists: an admin of its
 * organization or one of its members. Something found by id in a project it
 * may not know answers the 404 of an id that names nothing, so that the
 * answer does not tell the two apart (the permission check would answer the
 * project's 404 instead).
 */
export async function mayKnowProject(deps: Pick<ServiceDeps, 'lookups' | 'permissions'>, db: ReadOnlyDb, actor: Actor, projectId: string): Promise<boolean> {
  try {
    await deps.permissions.forProject(actor, await deps.lookups.requireProject(db, { id: projectId }), db);
    return true;
  } catch (error) {
    if (error instanceof ProjectNotFoundError) return false;
    throw error;
  }
}
