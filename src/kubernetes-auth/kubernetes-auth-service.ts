import type { Actor } from '../actor/actor.ts';
import { revokeTokensIssuedBy } from '../auth/token-service.ts';
import type { Executor } from '../db/database.ts';
import type { IdentityKubernetesAuth } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { setIdentityAuthMethod } from '../identities/identity-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { assertTtls, type TokenSettings } from '../workload-auth/token-settings.ts';
import { runIdentityConfigWork } from '../workload-auth/identity-config-work.ts';
import { toKubernetesAuthResponse } from './kubernetes-auth-schema.ts';
import { deleteKubernetesAuth, findKubernetesAuth, insertKubernetesAuth, type KubernetesAuthValues, updateKubernetesAuth } from './kubernetes-auth-store.ts';
import { sealReviewerJwt } from './reviewer-jwt-cipher.ts';
import { KUBERNETES_AUTH } from './token-review.ts';

export interface KubernetesAuthInput extends TokenSettings {
  kubernetesHost: string;
  caCert: string;
  /** Absent: unchanged (update) or none (attach); null or empty: none. */
  tokenReviewerJwt?: string | null;
  allowedNamespaces: string;
  allowedNames: string;
  allowedAudience: string;
}

/** Non-secret settings for the audit entry (the token reviewer JWT only as whether there is one). */
function auditedSettings(row: IdentityKubernetesAuth) {
  return {
    identityKubernetesAuthId: row.id,
    kubernetesHost: row.kubernetesHost,
    allowedNamespaces: row.allowedNamespaces,
    allowedNames: row.allowedNames,
    allowedAudience: row.allowedAudience,
    hasTokenReviewerJwt: row.encryptedTokenReviewerJwt !== null,
    accessTokenTTL: row.accessTokenTtl,
    accessTokenMaxTTL: row.accessTokenMaxTtl,
    accessTokenNumUsesLimit: row.accessTokenNumUsesLimit,
  };
}

/** Kubernetes Auth of machine identities: its configuration (the logins are WorkloadLogin's). */
export class KubernetesAuthService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async attach(actor: Actor, identityId: string, input: KubernetesAuthInput) {
    assertTtls(input);
    return runIdentityConfigWork(this.#deps, actor, identityId, 'create', async (tx, identity) => {
      if (await findKubernetesAuth(tx.db, identity.id)) {
        throw new BadRequestError('Failed to add Kubernetes Auth to already configured identity', 'AlreadyConfigured');
      }
      const { tokenReviewerJwt, ...values } = input;
      const created = await insertKubernetesAuth(tx.db, identity.id, {
        ...values,
        encryptedTokenReviewerJwt: sealReviewerJwt(this.#deps.keyring, identity.id, tokenReviewerJwt),
      });
      if (!identity.authMethod) await setIdentityAuthMethod(tx.db, identity.id, KUBERNETES_AUTH);
      return { result: toKubernetesAuthResponse(created), event: 'add-identity-kubernetes-auth', metadata: auditedSettings(created) };
    });
  }

  async get(actor: Actor, identityId: string) {
    return runIdentityConfigWork(this.#deps, actor, identityId, 'read', async (tx, identity) => {
      const config = await requireKubernetesAuth(tx.db, identity.id);
      return { result: toKubernetesAuthResponse(config), event: 'get-identity-kubernetes-auth', metadata: { identityKubernetesAuthId: config.id } };
    });
  }

  async update(actor: Actor, identityId: string, changes: Partial<KubernetesAuthInput>) {
    return runIdentityConfigWork(this.#deps, actor, identityId, 'edit', async (tx, identity) => {
      const config = await requireKubernetesAuth(tx.db, identity.id);
      assertTtls({ accessTokenTtl: changes.accessTokenTtl ?? config.accessTokenTtl, accessTokenMaxTtl: changes.accessTokenMaxTtl ?? config.accessTokenMaxTtl });
      const { tokenReviewerJwt, ...rest } = changes;
      const values: Partial<KubernetesAuthValues> = { ...rest };
      if (tokenReviewerJwt !== undefined) values.encryptedTokenReviewerJwt = sealReviewerJwt(this.#deps.keyring, identity.id, tokenReviewerJwt);
      const updated = await updateKubernetesAuth(tx.db, config.id, values);
      return { result: toKubernetesAuthResponse(updated), event: 'update-identity-kubernetes-auth', metadata: auditedSettings(updated) };
    });
  }

  /** Removes Kubernetes Auth: the access tokens issued through it stop working at once. */
  async revoke(actor: Actor, identityId: string) {
    return runIdentityConfigWork(this.#deps, actor, identityId, 'delete', async (tx, identity) => {
      const config = await requireKubernetesAuth(tx.db, identity.id);
      await revokeTokensIssuedBy(tx.db, identity.id, KUBERNETES_AUTH);
      await deleteKubernetesAuth(tx.db, config.id);
      if (identity.authMethod === KUBERNETES_AUTH) await setIdentityAuthMethod(tx.db, identity.id, null);
      return { result: toKubernetesAuthResponse(config), event: 'revoke-identity-kubernetes-auth', metadata: { identityKubernetesAuthId: config.id } };
    });
  }
}

async function requireKubernetesAuth(db: Executor, identityId: string): Promise<IdentityKubernetesAuth> {
  const config = await findKubernetesAuth(db, identityId);
  if (!config) throw new NotFoundError(`Identity with ID '${identityId}' does not have Kubernetes Auth`);
  return config;
}
