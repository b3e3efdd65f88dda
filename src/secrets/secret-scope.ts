import type { Actor } from '../actor/actor.ts';
import type { Change } from '../changes/change-feed.ts';
import type { Environment, Folder, Project, Secret } from '../db/schema.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { Action } from '../permissions/permission-service.ts';
import type { ProjectReference } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { SecretCipher } from './secret-cipher.ts';
import type { RawSecret, TagSummary } from './secret-schema.ts';

/** Where a secret operation applies: the project's id (the wire's `workspaceId`), or its slug. */
export interface SecretLocation {
  projectId?: string;
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

/** The project a secret operation names: its id, or else a slug in the actor's organization (400 without either). */
export function secretProject(actor: Actor, location: Pick<SecretLocation, 'projectId' | 'projectSlug'>): ProjectReference {
  return { orgId: actor.orgId, projectId: location.projectId, projectSlug: location.projectSlug };
}

/** Project, permission check, environment and folder for a secret write. */
export async function resolveSecretScope(deps: ServiceDeps, tx: WriteContext, location: SecretLocation, action: Action): Promise<SecretScope> {
  const path = normalizeSecretPath(location.secretPath);
  const project = await tx.project(secretProject(tx.actor, location));
  await tx.authorize({ project, action, subject: 'secrets', where: { environment: location.environment, secretPath: path } });
  const environment = await deps.lookups.requireEnvironment(tx.db, project.id, location.environment);
  const folder = await deps.lookups.requireFolder(tx.db, environment, path);
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
