import type { Executor } from '../db/database.ts';
import type { Project } from '../db/schema.ts';
import { isUuid } from '../db/errors.ts';
import { NotFoundError } from '../errors.ts';
import { findProjectById, findProjectBySlug, lockProject } from './project-store.ts';

export async function requireProject(db: Executor, id: string): Promise<Project> {
  const project = await findProjectById(db, id);
  if (!project) throw new NotFoundError(`Project with ID '${id}' not found`);
  return project;
}

/** Like requireProject, and holds the row lock until the transaction ends. */
export async function requireLockedProject(db: Executor, id: string): Promise<Project> {
  const project = await lockProject(db, id);
  if (!project) throw new NotFoundError(`Project with ID '${id}' not found`);
  return project;
}

export async function requireProjectBySlug(db: Executor, orgId: string, slug: string): Promise<Project> {
  const project = await findProjectBySlug(db, orgId, slug);
  if (!project) throw new NotFoundError(`Project with slug '${slug}' not found`);
  return project;
}

/** By id (a UUID) or else by slug within the caller's organization. */
export async function requireProjectByIdOrSlug(db: Executor, orgId: string, idOrSlug: string): Promise<Project> {
  return isUuid(idOrSlug) ? requireProject(db, idOrSlug) : requireProjectBySlug(db, orgId, idOrSlug);
}
