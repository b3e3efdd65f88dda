import type { Actor } from '../actor/actor.ts';
import { ProjectCipher } from '../crypto/project-cipher.ts';
import type { DynamicSecret, Folder, Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { parseDuration } from '../validation/duration.ts';
import { type PostgresInputs, postgresInputsSchema } from './dynamic-secret-schema.ts';
import { findDynamicSecret } from './dynamic-secret-store.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/** Where a dynamic secret lives, as every route names it. */
export interface DynamicSecretPlace {
  projectSlug: string;
  environmentSlug: string;
  path: string;
}

/** The folder a dynamic secret sits in, resolved from its place. */
export interface ResolvedPlace {
  project: Project;
  folder: Folder;
  environmentSlug: string;
  secretPath: string;
}

const INPUTS_CONTEXT = 'dynamic-secret-inputs';

export function openInputs(deps: Pick<ServiceDeps, 'keyring'>, project: Project, row: DynamicSecret): PostgresInputs {
  return postgresInputsSchema.parse(JSON.parse(new ProjectCipher(deps.keyring, project).open(INPUTS_CONTEXT, row.encryptedInputs)));
}

export function sealInputs(deps: Pick<ServiceDeps, 'keyring'>, project: Project, inputs: PostgresInputs): Buffer {
  return new ProjectCipher(deps.keyring, project).seal(INPUTS_CONTEXT, JSON.stringify(inputs));
}

export function ttlMs(ttl: string): number {
  const ms = parseDuration(ttl);
  if (ms === undefined) throw new BadRequestError(`'${ttl}' is not a duration such as 30m, 1h or 1d`);
  return ms;
}

export function checkTtls(defaultTtl: string, maxTtl: string | null | undefined): void {
  if (maxTtl && ttlMs(defaultTtl) > ttlMs(maxTtl)) throw new BadRequestError('Default TTL cannot be larger than max TTL');
}

export function dynamicSecretNotFound(name: string): NotFoundError {
  return new NotFoundError(`Dynamic secret with name '${name}' not found`, 'DynamicSecretNotFound');
}

export function duplicateName(name: string): BadRequestError {
  return new BadRequestError(`Dynamic secret with name '${name}' already exists`, 'DuplicateDynamicSecret');
}

/** The project, environment and folder of a request, in the caller's organization; 404 for each that is missing. */
export async function resolvePlace(deps: ServiceDeps, db: ReadOnlyDb, actor: Actor, place: DynamicSecretPlace): Promise<ResolvedPlace> {
  const project = await deps.lookups.requireProject(db, { orgId: actor.orgId, projectSlug: place.projectSlug });
  const environment = await deps.lookups.requireEnvironment(db, project.id, place.environmentSlug);
  const folder = await deps.lookups.requireFolder(db, environment, place.path);
  return { project, folder, environmentSlug: environment.slug, secretPath: place.path };
}

export async function requireDynamicSecret(db: ReadOnlyDb, folder: Folder, name: string): Promise<DynamicSecret> {
  const row = await findDynamicSecret(db, folder.id, name);
  if (!row) throw dynamicSecretNotFound(name);
  return row;
}

export function auditPlace(at: ResolvedPlace, row: DynamicSecret): Record<string, unknown> {
  return { dynamicSecretId: row.id, name: row.name, environment: at.environmentSlug, secretPath: at.secretPath };
}
