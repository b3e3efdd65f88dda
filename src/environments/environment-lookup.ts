import type { Executor } from '../db/database.ts';
import type { Environment } from '../db/schema.ts';
import { NotFoundError } from '../errors.ts';
import { findEnvironmentById, findEnvironmentBySlug, listEnvironments, listEnvironmentsOfProjects } from './environment-store.ts';

export async function requireEnvironment(db: Executor, projectId: string, slug: string): Promise<Environment> {
  const environment = await findEnvironmentBySlug(db, projectId, slug);
  if (!environment) throw new NotFoundError(`Environment with slug '${slug}' in project with ID '${projectId}' not found`);
  return environment;
}

export { findEnvironmentById, findEnvironmentBySlug, listEnvironments, listEnvironmentsOfProjects };
