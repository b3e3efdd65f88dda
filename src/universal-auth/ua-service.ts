import type { Actor } from '../actor/actor.ts';
import { revokeTokensIssuedBy, revokeTokensLoggedInWith } from '../auth/token-service.ts';
import type { CredentialDigest } from '../crypto/credential-digest.ts';
import type { Executor } from '../db/database.ts';
import type { IdentityUniversalAuth } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { authorizeIdentityAccess, setIdentityAuthMethod } from '../identities/identity-service.ts';
import type { OrgIdentity } from '../identities/identity-store.ts';
import type { Action } from '../permissions/permission-rules.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { toClientSecretData, toUniversalAuthResponse } from './ua-schema.ts';
import {
  deleteUniversalAuth,
  findClientSecret,
  findUniversalAuth,
  insertClientSecret,
  insertUniversalAuth,
  listActiveClientSecrets,
  revokeClientSecret,
  type UniversalAuthValues,
  updateUniversalAuth,
} from './ua-store.ts';

export const UNIVERSAL_AUTH = 'universal-auth';

function assertTtls(values: { accessTokenTtl: number; accessTokenMaxTtl: number }): void {
  if (values.accessTokenMaxTtl > 0 && values.accessTokenTtl > values.accessTokenMaxTtl) {
    throw new BadRequestError('Access token TTL cannot be greater than max TTL', 'InvalidTTL');
  }
}

/** Universal auth of machine identities: its configuration and client secrets. */
export class UniversalAuthService {
  readonly #deps: ServiceDeps;
  readonly #credentials: CredentialDigest;

  constructor(deps: ServiceDeps, credentials: CredentialDigest) {
    this.#deps = deps;
    this.#credentials = credentials;
  }

  async attach(actor: Actor, identityId: string, values: UniversalAuthValues) {
    assertTtls(values);
    return this.#run(actor, identityId, 'create', async (tx, identity) => {
      const trx = tx.db;
      if (await findUniversalAuth(trx, identity.id)) {
        throw new BadRequestError('Failed to add universal auth to already configured identity', 'AlreadyConfigured');
      }
      const created = await insertUniversalAuth(trx, identity.id, values);
      if (!identity.authMethod) await setIdentityAuthMethod(trx, identity.id, UNIVERSAL_AUTH);
      return { result: toUniversalAuthResponse(created), event: 'add-identity-universal-auth', metadata: { identityUniversalAuthId: created.id } };
    });
  }

  async get(actor: Actor, identityId: string) {
    return this.#run(actor, identityId, 'read', async (tx, identity) => {
      const trx = tx.db;
      const config = await requireUniversalAuth(trx, identity.id);
      return { result: toUniversalAuthResponse(config), event: 'get-identity-universal-auth', metadata: { identityUniversalAuthId: config.id } };
    });
  }

  async update(actor: Actor, identityId: string, changes: Partial<UniversalAuthValues>) {
    return this.#run(actor, identityId, 'edit', async (tx, identity) => {
      const trx = tx.db;
      const config = await requireUniversalAuth(trx, identity.id);
      assertTtls({ accessTokenTtl: changes.accessTokenTtl ?? config.accessTokenTtl, accessTokenMaxTtl: changes.accessTokenMaxTtl ?? config.accessTokenMaxTtl });
      const updated = Object.values(changes).some((value) => value !== undefined) ? await updateUniversalAuth(trx, config.id, changes) : config;
      return { result: toUniversalAuthResponse(updated), event: 'update-identity-universal-auth', metadata: { identityUniversalAuthId: config.id } };
    });
  }

  /** Removes universal auth: its client secrets and the access tokens issued through it go with it. */
  async revoke(actor: Actor, identityId: string) {
    return this.#run(actor, identityId, 'delete', async (tx, identity) => {
      const trx = tx.db;
      const config = await requireUniversalAuth(trx, identity.id);
      await revokeTokensIssuedBy(trx, identity.id, UNIVERSAL_AUTH);
      await deleteUniversalAuth(trx, config.id);
      if (identity.authMethod === UNIVERSAL_AUTH) await setIdentityAuthMethod(trx, identity.id, null);
      return { result: toUniversalAuthResponse(config), event: 'revoke-identity-universal-auth', metadata: { identityUniversalAuthId: config.id } };
    });
  }

  /** Op 10: the secret is returned once; only its SHA-256 digest and first 4 characters are kept. */
  async createClientSecret(actor: Actor, identityId: string, input: { description: string; numUsesLimit: number; ttl: number }) {
    return this.#run(actor, identityId, 'create', async (tx, identity) => {
      const trx = tx.db;
      const config = await requireUniversalAuth(trx, identity.id);
      const clientSecret = this.#credentials.generate();
      const row = await insertClientSecret(trx, {
        identityUaId: config.id,
        description: input.description,
        clientSecretPrefix: clientSecret.slice(0, 4),
        clientSecretDigest: this.#credentials.digest(clientSecret),
        clientSecretNumUsesLimit: input.numUsesLimit,
        clientSecretTtl: input.ttl,
      });
      return {
        result: { clientSecret, clientSecretData: toClientSecretData(row) },
        event: 'create-identity-universal-auth-client-secret',
        metadata: { clientSecretId: row.id },
      };
    });
  }

  async listClientSecrets(actor: Actor, identityId: string) {
    return this.#run(actor, identityId, 'read', async (tx, identity) => {
      const trx = tx.db;
      const config = await requireUniversalAuth(trx, identity.id);
      const secrets = await listActiveClientSecrets(trx, config.id);
      return { result: secrets.map(toClientSecretData), event: 'get-identity-universal-auth-client-secret', metadata: { numberOfClientSecrets: secrets.length } };
    });
  }

  async getClientSecret(actor: Actor, identityId: string, clientSecretId: string) {
    return this.#run(actor, identityId, 'read', async (tx, identity) => {
      const trx = tx.db;
      const secret = await this.#requireClientSecret(trx, identity.id, clientSecretId);
      return { result: toClientSecretData(secret), event: 'get-identity-universal-auth-client-secret', metadata: { clientSecretId: secret.id } };
    });
  }

  async revokeClientSecret(actor: Actor, identityId: string, clientSecretId: string) {
    return this.#run(actor, identityId, 'delete', async (tx, identity) => {
      const trx = tx.db;
      const secret = await this.#requireClientSecret(trx, identity.id, clientSecretId);
      const revoked = await revokeClientSecret(trx, secret.id);
      await revokeTokensLoggedInWith(trx, secret.id);
      return { result: toClientSecretData(revoked), event: 'revoke-identity-universal-auth-client-secret', metadata: { clientSecretId: secret.id } };
    });
  }

  async #requireClientSecret(db: Executor, identityId: string, clientSecretId: string) {
    const config = await requireUniversalAuth(db, identityId);
    const secret = await findClientSecret(db, config.id, clientSecretId);
    if (!secret) throw new NotFoundError(`Client secret with ID '${clientSecretId}' not found`);
    return secret;
  }

  /** One unit of work: identity, permission and privilege check, the work, and its audit entry (reads are audited too). */
  async #run<T>(
    actor: Actor,
    identityId: string,
    action: Action,
    work: (tx: WriteContext, identity: OrgIdentity) => Promise<{ result: T; event: string; metadata: Record<string, unknown> }>,
  ): Promise<T> {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const identity = await authorizeIdentityAccess(this.#deps, tx, identityId, action);
      const { result, event, metadata } = await work(tx, identity);
      tx.audit({ orgId: identity.orgId, type: event, metadata: { identityId: identity.id, ...metadata } });
      return result;
    });
  }
}

async function requireUniversalAuth(db: Executor, identityId: string): Promise<IdentityUniversalAuth> {
  const config = await findUniversalAuth(db, identityId);
  if (!config) throw new NotFoundError(`Identity with ID '${identityId}' does not have universal auth`);
  return config;
}
