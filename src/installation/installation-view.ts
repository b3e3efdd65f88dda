import type { Actor } from '../actor/actor.ts';
import { PermissionDeniedError } from '../errors.ts';
import { listProjectsOfOrg } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { installationIdOf } from './installation-service.ts';

type Deps = Pick<ServiceDeps, 'db' | 'permissions' | 'changes'>;

/** The projects of the caller's organization whose secrets it may read somewhere (an org admin: every one). */
export async function readableProjectIds(deps: Deps, actor: Actor): Promise<string[]> {
  const projects = await listProjectsOfOrg(deps.db, actor.orgId, actor.orgRole === 'admin' ? null : { kind: actor.kind, id: actor.id });
  const readable: string[] = [];
  for (const project of projects) {
    if ((await deps.permissions.forProject(actor, project)).can('read', 'secrets')) readable.push(project.id);
  }
  return readable;
}

/**
 * The newest revision among the changes of the projects the caller may read
 * (0 before any): what a caller is told instead of the installation's own
 * newest revision, which counts the writes of every project and organization.
 */
export async function newestReadableRevision(deps: Deps, actor: Actor, projectId?: string): Promise<number> {
  if (projectId !== undefined) return deps.changes.latestRevision(deps.db, projectId);
  return deps.changes.latestRevisionOf(deps.db, await readableProjectIds(deps, actor));
}

/**
 * GET /api/v1/operator/installation as a caller sees it: the installation id
 * (which an operator marks what it manages with) only for a member or admin
 * of its organization (who may read its settings; an operator's identity is
 * one before it has a project) or a caller that may read some project's
 * secrets, 403 otherwise; and the newest revision of what it may read.
 */
export async function installationSeenBy(deps: Deps, actor: Actor): Promise<{ installationId: string; revision: number }> {
  const readable = await readableProjectIds(deps, actor);
  if (readable.length === 0 && !(await deps.permissions.forOrg(actor, actor.orgId)).can('read', 'settings')) {
    throw new PermissionDeniedError('read', 'settings');
  }
  return { installationId: await installationIdOf(deps.db), revision: await deps.changes.latestRevisionOf(deps.db, readable) };
}
