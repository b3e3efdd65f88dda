import type { Actor } from '../actor/actor.ts';
import type { IntegrationAuth, Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { IntegrationAuthCipher } from './integration-auth-cipher.ts';
import {
  deleteIntegrationAuths,
  findIntegrationAuthById,
  insertIntegrationAuth,
  listIntegrationAuthsOfProject,
  setIntegrationAuthCredentials,
} from './integration-auth-store.ts';
import { INTEGRATION_SLUGS, KUBERNETES_INTEGRATION, toIntegrationAuthResponse } from './integration-schema.ts';
import { integrationChanges, lockIntegrationsOf, readableIntegrationsOf } from './integration-scope.ts';
import { listIntegrationsOfAuths } from './integration-store.ts';
import { mayKnowProject } from '../services/project-visibility.ts';
import type { ReadOnlyDb } from '../db/database.ts';

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
export async function ensureKubernetesAuthIn(tx: WriteContext, project: Project): Promise<IntegrationAuth> {
  const [existing] = await listIntegrationAuthsOfProject(tx.db, project.id, KUBERNETES_INTEGRATION);
  if (existing) return existing;
  await tx.authorize({ project, action: 'create', subject: 'integrations' });
  const created = await insertIntegrationAuth(tx.db, { projectId: project.id, integration: KUBERNETES_INTEGRATION });
  tx.audit({ project, type: 'authorize-integration', metadata: { integration: KUBERNETES_INTEGRATION } });
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
    const { keyring } = this.#deps;
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const project = await lockIntegrationsOf(tx, input.projectId, 'create');
      const inserted = await insertIntegrationAuth(tx.db, {
        projectId: project.id,
        integration: input.integration,
        url: input.url ?? null,
        namespace: input.namespace ?? null,
      });
      const cipher = new IntegrationAuthCipher(keyring, project);
      const sealed = await setIntegrationAuthCredentials(tx.db, inserted.id, {
        encryptedAccess: cipher.seal(inserted.id, 'access', input.accessToken),
        encryptedAccessId: cipher.seal(inserted.id, 'access-id', input.accessId),
        encryptedRefresh: cipher.seal(inserted.id, 'refresh', input.refreshToken),
        encryptedAwsAssumeIamRoleArn: cipher.seal(inserted.id, 'aws-assume-iam-role-arn', input.awsAssumeIamRoleArn),
      });
      tx.audit({ project, type: 'authorize-integration', metadata: { integration: input.integration } });
      return toIntegrationAuthResponse(sealed);
    });
  }

  async getById(actor: Actor, authId: string) {
    const auth = await this.#require(this.#deps.db, authId, actor);
    await readableIntegrationsOf(this.#deps, actor, auth.projectId);
    return toIntegrationAuthResponse(auth);
  }

  async listOfProject(actor: Actor, projectId: string) {
    const project = await readableIntegrationsOf(this.#deps, actor, projectId);
    return (await listIntegrationAuthsOfProject(this.#deps.db, project.id)).map(toIntegrationAuthResponse);
  }

  /** Deletes one auth and, with it, its integrations. */
  async delete(actor: Actor, authId: string) {
    const [deleted] = await this.#deleteAll(actor, async (tx) => {
      const found = await this.#require(tx.db, authId, actor);
      const project = await lockIntegrationsOf(tx, found.projectId, 'delete');
      // read again under the project lock: a concurrent delete may have won
      return { project, auths: [await this.#require(tx.db, authId)] };
    });
    return deleted!;
  }

  /** Deletes every auth of one integration type in a project, and their integrations. */
  async deleteByType(actor: Actor, input: { projectId: string; integration: string }) {
    assertKnownIntegration(input.integration);
    return this.#deleteAll(actor, async (tx) => {
      const project = await lockIntegrationsOf(tx, input.projectId, 'delete');
      return { project, auths: await listIntegrationAuthsOfProject(tx.db, project.id, input.integration) };
    });
  }

  /** For the in-process operator: the project's "kubernetes" auth, created if missing. */
  async ensureKubernetesAuth(actor: Actor, projectId: string): Promise<{ id: string }> {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      // the project lock makes concurrent calls wait for the first one's auth
      const project = await lockIntegrationsOf(tx, projectId, 'read');
      const auth = await ensureKubernetesAuthIn(tx, project);
      return { id: auth.id };
    });
  }

  async #deleteAll(actor: Actor, select: (tx: WriteContext) => Promise<{ project: Project; auths: IntegrationAuth[] }>) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const { project, auths } = await select(tx);
      const ids = auths.map((auth) => auth.id);
      const cascaded = await listIntegrationsOfAuths(tx.db, ids);
      await deleteIntegrationAuths(tx.db, ids);
      for (const auth of auths) tx.audit({ project, type: 'unauthorize-integration', metadata: { integration: auth.integration } });
      tx.change(...integrationChanges(cascaded));
      return auths.map(toIntegrationAuthResponse);
    });
  }

  /** The auth; with `actor`, 404 alike when it is in a project the actor may not know. */
  async #require(db: ReadOnlyDb, authId: string, actor?: Actor): Promise<IntegrationAuth> {
    const auth = await findIntegrationAuthById(db, authId);
    if (!auth || (actor && !(await mayKnowProject(this.#deps, db, actor, auth.projectId)))) throw new NotFoundError(`Integration auth with ID '${authId}' not found`);
    return auth;
  }
}
