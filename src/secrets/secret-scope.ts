import type { Actor } from '../actor/actor.ts';
import type { Change } from '../changes/change-feed.ts';
import type { Executor } from '../db/database.ts';
import type { Environment, Folder, Project, Secret } from '../db/schema.ts';
import { requireEnvironment } from '../environments/environment-lookup.ts';
import { BadRequestError } from '../errors.ts';
import { requireFolder } from '../folders/folder-lookup.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { Action } from '../permissions/permission-service.ts';
import type { Lookups } from '../projects/lookups.ts';
import { requireProject, requireProjectBySlug } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { SecretCipher } from './secret-cipher.ts';
import type { RawSecret, TagSummary } from './secret-schema.ts';

/** Where a secret operation applies: `workspaceId`, or a project slug. */
export interface SecretLocation {
  workspaceId?: string;
  projectSlug?: string;
  environment: string;
  secretPath: string;
}

export interface SecretScope {
  project: Project;
  environment: Environment;
  folder: Folder;
  /** The normalised secret path. */
  path: string;
  cipher: SecretCipher;
}

export async function resolveProject(db: Executor, actor: Actor, location: Pick<SecretLocation, 'workspaceId' | 'projectSlug'>, lookups?: Lookups) {
  if (location.workspaceId) return lookups ? lookups.requireProject(db, { id: location.workspaceId }) : requireProject(db, location.workspaceId);
  if (location.projectSlug) {
    return lookups ? lookups.requireProject(db, { orgId: actor.orgId, slug: location.projectSlug }) : requireProjectBySlug(db, actor.orgId, location.projectSlug);
  }
  throw new BadRequestError('workspaceId or workspaceSlug is required', 'MissingProject');
}

/** Project, permission check, environment and folder for a secret operation. */
export async function resolveSecretScope(
  deps: ServiceDeps,
  db: Executor,
  actor: Actor,
  location: SecretLocation,
  action: Action,
): Promise<SecretScope> {
  const path = normalizeSecretPath(location.secretPath);
  const project = await resolveProject(db, actor, location);
  await deps.permissions.assertProjectPermission(actor, project, action, 'secrets', { environment: location.environment, secretPath: path }, db);
  const environment = await requireEnvironment(db, project.id, location.environment);
  const folder = await requireFolder(db, environment, path);
  return { project, environment, folder, path, cipher: new SecretCipher(deps.keyring, project) };
}

export function toRawSecret(secret: Secret, scope: Pick<SecretScope, 'project' | 'environment' | 'cipher'>, tags: TagSummary[]): RawSecret {
  return {
    id: secret.id,
    _id: secret.id,
    workspace: scope.project.id,
    environment: scope.environment.slug,
    version: secret.version,
    type: secret.type,
    secretKey: secret.key,
    secretValue: scope.cipher.open(secret.id, 'value', secret.encryptedValue),
    secretComment: scope.cipher.open(secret.id, 'comment', secret.encryptedComment),
    secretReminderNote: secret.reminderNote,
    secretReminderRepeatDays: secret.reminderRepeatDays,
    skipMultilineEncoding: secret.skipMultilineEncoding,
    createdAt: secret.createdAt.toISOString(),
    updatedAt: secret.updatedAt.toISOString(),
    tags,
  };
}

export function secretAuditMetadata(scope: SecretScope, secret: Secret) {
  return { environment: scope.environment.slug, secretPath: scope.path, secretId: secret.id, secretKey: secret.key, secretVersion: secret.version };
}

export function secretChange(scope: SecretScope): Change {
  return {
    projectId: scope.project.id,
    environmentId: scope.environment.id,
    environmentSlug: scope.environment.slug,
    secretPath: scope.path,
    kind: 'secret',
  };
}

export function auditScope(project: Project) {
  return { orgId: project.orgId, projectId: project.id, projectName: project.name };
}
