import type { Project } from '../db/schema.ts';
import { isUuid } from '../db/uuid.ts';
import { BadRequestError, ProjectNotFoundError } from '../errors.ts';
import { findProjectById, findProjectBySlug, listProjectsOfOrg, lockProject } from './project-store.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export { listProjectsOfOrg };

/**
 * How a caller names a project: by id; by slug within an organization; by
 * either (an id when it is a UUID); or as the secrets API does, `projectId`
 * (the wire's `workspaceId`) or else `projectSlug` (400 when neither is given).
 */
export type ProjectReference =
  { id: string } | { orgId: string; slug: string } | { orgId: string; idOrSlug: string } | { orgId: string; projectId?: string; projectSlug?: string };

/** The reference as an id or a slug, and how a 404 names it. */
function normalize(reference: ProjectReference): { id: string } | { orgId: string; slug: string } {
  if ('id' in reference) return { id: reference.id };
  if ('slug' in reference) return reference;
  if ('idOrSlug' in reference) return isUuid(reference.idOrSlug) ? { id: reference.idOrSlug } : { orgId: reference.orgId, slug: reference.idOrSlug };
  if (reference.projectId) return { id: reference.projectId };
  if (reference.projectSlug) return { orgId: reference.orgId, slug: reference.projectSlug };
  throw new BadRequestError('workspaceId or workspaceSlug is required', 'MissingProject');
}

/** A cache key for the reference: the same project named the same way. */
export function projectCacheKey(reference: ProjectReference): string {
  const normalized = normalize(reference);
  return 'id' in normalized ? `id:${normalized.id}` : `slug:${normalized.orgId}:${normalized.slug}`;
}

/** The project, or undefined when none has that id or slug (a SecretsProject creates the one it does not find). */
export async function findProject(db: Executor, reference: ProjectReference): Promise<Project | undefined> {
  const named = normalize(reference);
  return 'id' in named ? findProjectById(db, named.id) : findProjectBySlug(db, named.orgId, named.slug);
}

/**
 * The one way to get a project: by any reference, 404 when missing (the
 * same 404 the permission check answers a caller who may not see it); `lock`
 * holds the row (FOR UPDATE) until the transaction ends. Callers use it
 * through Lookups (services/lookups.ts), which caches reads outside transactions.
 */
export async function requireProject(db: ReadOnlyDb, reference: ProjectReference, options: { lock?: boolean } = {}): Promise<Project> {
  const named = normalize(reference);
  if ('id' in named) {
    const project = options.lock ? await lockProject(db, named.id) : await findProjectById(db, named.id);
    if (!project) throw new ProjectNotFoundError();
    return project;
  }
  const project = await findProjectBySlug(db, named.orgId, named.slug);
  if (!project) throw new ProjectNotFoundError();
  return options.lock ? requireProject(db, { id: project.id }, options) : project;
}
