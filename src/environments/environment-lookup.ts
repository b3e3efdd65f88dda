import type { Environment } from '../db/schema.ts';
import { NotFoundError } from '../errors.ts';
import { findEnvironmentById, findEnvironmentBySlug, listEnvironments, listEnvironmentsOfProjects } from './environment-store.ts';
import type { ReadOnlyDb } from '../db/database.ts';

export async function requireEnvironment(db: ReadOnlyDb, projectId: string, slug: string): Promise<Environment> {
  const environment = await findEnvironmentBySlug(db, projectId, slug);
  if (!environment) throw new NotFoundError(`Environment with slug '${slug}' in project with ID '${projectId}' not found`);
  return environment;
}

export { findEnvironmentById, findEnvironmentBySlug, listEnvironments, listEnvironmentsOfProjects };
