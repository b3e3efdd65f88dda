import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { IntegrationAuth, Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Action } from '../permissions/permission-service.ts';
import { requireLockedProject, requireProject } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { IntegrationAuthCipher } from './integration-auth-cipher.ts';
import {
  deleteIntegrationAuths,
  findIntegrationAuthById,
  insertIntegrationAuth,
  listIntegrationAuthsOfProject,
  setIntegrationAuthCredentials,
} from './integration-auth-store.ts';
import { INTEGRATION_SLUGS, KUBERNETES_INTEGRATION, toIntegrationAuthResponse } from './integration-schema.ts';
import { auditScope, integrationChanges } from './integration-scope.ts';
import { listIntegrationsOfAuths } from './integration-store.ts';

export interface AccessTokenInput {
  projectId: string;
  integration: string;
  accessId?: string;
  accessToken?: string;
  awsAssumeIamRoleArn?: string;
  url?: string;
  namespace?: string;
  refreshToken?: string;
}

function assertKnownIntegration(integration: string): void {
  if (!INTEGRATION_SLUGS.has(integration)) throw new BadRequestError('Invalid integration');
}

/**
 * The project's "kubernetes" integration auth, created (without credentials)
 * when missing. Callers hold the project row lock, so concurrent calls agree.
 */
export async function ensureKubernetesAuthIn(deps: ServiceDeps, trx: Executor, actor: Actor, project: Project): Promise<IntegrationAuth> {
  const [existing] = await listIntegrationAuthsOfProject(trx, project.id, KUBERNETES_INTEGRATION);
  if (existing) return existing;
  await deps.permissions.assertProjectPermission(actor, project, 'create', 'integrations', undefined, trx);
  const created = await insertIntegrationAuth(trx, { projectId: project.id, integration: KUBERNETES_INTEGRATION });
  await deps.audit.record(trx, actor, auditScope(project), { type: 'authorize-integration', metadata: { integration: KUBERNETES_INTEGRATION } });
  return created;
}

/** Integration auths: a project's credentials for an integration provider, sealed with the project's data key. */
export class IntegrationAuthService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  /** Stores a provider's access token (and id, refresh token, role) as a new integration auth. */
  async createWithAccessToken(actor: Actor, input: AccessTokenInput) {
    assertKnownIntegration(input.integration);
    const { db, audit, keyring } = this.#deps;
    const auth = await db.transaction().execute(async (trx) => {
      const project = await this.#authorize(trx, actor, input.projectId, 'create');
      const inserted = await insertIntegrationAuth(trx, {
        projectId: project.id,
        integration: input.integration,
        url: input.url ?? null,
        namespace: input.namespace ?? null,
      });
      const cipher = new IntegrationAuthCipher(keyring, project);
      const sealed = await setIntegrationAuthCredentials(trx, inserted.id, {
        encryptedAccess: cipher.seal(inserted.id, 'access', input.accessToken),
        encryptedAccessId: cipher.seal(inserted.id, 'access-id', input.accessId),
        encryptedRefresh: cipher.seal(inserted.id, 'refresh', input.refreshToken),
        encryptedAwsAssumeIamRoleArn: cipher.seal(inserted.id, 'aws-assume-iam-role-arn', input.awsAssumeIamRoleArn),
      });
      await audit.record(trx, actor, auditScope(project), { type: 'authorize-integration', metadata: { integration: input.integration } });
      return sealed;
    });
    return toIntegrationAuthResponse(auth);
  }

  async getById(actor: Actor, authId: string) {
    const { db } = this.#deps;
    const auth = await this.#require(db, authId);
    await this.#authorize(db, actor, auth.projectId, 'read');
    return toIntegrationAuthResponse(auth);
  }

  async listOfProject(actor: Actor, projectId: string) {
    const { db } = this.#deps;
    const project = await this.#authorize(db, actor, projectId, 'read');
    return (await listIntegrationAuthsOfProject(db, project.id)).map(toIntegrationAuthResponse);
  }

  /** Deletes one auth and, with it, its integrations. */
  async delete(actor: Actor, authId: string) {
    const [deleted] = await this.#deleteAll(actor, async (trx) => {
      const found = await this.#require(trx, authId);
      const project = await this.#authorize(trx, actor, found.projectId, 'delete');
      // read again under the project lock: a concurrent delete may have won
      return { project, auths: [await this.#require(trx, authId)] };
    });
    return deleted!;
  }

  /** Deletes every auth of one integration type in a project, and their integrations. */
  async deleteByType(actor: Actor, input: { projectId: string; integration: string }) {
    assertKnownIntegration(input.integration);
    return this.#deleteAll(actor, async (trx) => {
      const project = await this.#authorize(trx, actor, input.projectId, 'delete');
      return { project, auths: await listIntegrationAuthsOfProject(trx, project.id, input.integration) };
    });
  }

  /** For the in-process operator: the project's "kubernetes" auth, created if missing. */
  async ensureKubernetesAuth(actor: Actor, projectId: string): Promise<{ id: string }> {
    const auth = await this.#deps.db.transaction().execute(async (trx) => {
      // the project lock makes concurrent calls wait for the first one's auth
      const project = await this.#authorize(trx, actor, projectId, 'read', true);
      return ensureKubernetesAuthIn(this.#deps, trx, actor, project);
    });
    return { id: auth.id };
  }

  async #deleteAll(actor: Actor, select: (trx: Executor) => Promise<{ project: Project; auths: IntegrationAuth[] }>) {
    const { db, audit, changes } = this.#deps;
    const { auths, changed } = await db.transaction().execute(async (trx) => {
      const { project, auths } = await select(trx);
      const ids = auths.map((auth) => auth.id);
      const cascaded = await listIntegrationsOfAuths(trx, ids);
      await deleteIntegrationAuths(trx, ids);
      for (const auth of auths) {
        await audit.record(trx, actor, auditScope(project), { type: 'unauthorize-integration', metadata: { integration: auth.integration } });
      }
      await changes.record(trx, integrationChanges(cascaded));
      return { auths, changed: cascaded.length > 0 };
    });
    if (changed) changes.committed();
    return auths.map(toIntegrationAuthResponse);
  }

  /** The project (locked for writes, or when asked) after the permission check on integrations. */
  async #authorize(db: Executor, actor: Actor, projectId: string, action: Action, lock = action !== 'read'): Promise<Project> {
    const project = lock ? await requireLockedProject(db, projectId) : await requireProject(db, projectId);
    await this.#deps.permissions.assertProjectPermission(actor, project, action, 'integrations', undefined, db);
    return project;
  }

  async #require(db: Executor, authId: string): Promise<IntegrationAuth> {
    const auth = await findIntegrationAuthById(db, authId);
    if (!auth) throw new NotFoundError(`Integration auth with ID '${authId}' not found`);
    return auth;
  }
}
