import type { Actor } from '../actor/actor.ts';
import { revokeTokensIssuedBy } from '../auth/token-service.ts';
import type { Executor } from '../db/database.ts';
import type { IdentityJwtAuth } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { setIdentityAuthMethod } from '../identities/identity-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { runIdentityConfigWork } from '../workload-auth/identity-config-work.ts';
import { assertTtls } from '../workload-auth/token-settings.ts';
import { toJwtAuthResponse } from './jwt-auth-schema.ts';
import { deleteJwtAuth, findJwtAuth, insertJwtAuth, type JwtAuthValues, updateJwtAuth } from './jwt-auth-store.ts';
import { JWT_AUTH } from './jwt-verifier.ts';

/** The configuration a login can use: a JWKS URL for `jwks`, at least one key for `static`. */
function assertUsable(values: Pick<JwtAuthValues, 'configurationType' | 'jwksUrl' | 'publicKeys'>): void {
  if (values.configurationType === 'jwks' && !values.jwksUrl)
    throw new BadRequestError('A JWKS URL is required when the configuration type is jwks', 'InvalidConfiguration');
  if (values.configurationType === 'static' && values.publicKeys.length === 0) {
    throw new BadRequestError('At least one public key is required when the configuration type is static', 'InvalidConfiguration');
  }
}

function auditedSettings(row: IdentityJwtAuth) {
  return {
    identityJwtAuthId: row.id,
    configurationType: row.configurationType,
    jwksUrl: row.jwksUrl,
    boundIssuer: row.boundIssuer,
    boundAudiences: row.boundAudiences,
    boundClaims: row.boundClaims,
    boundSubject: row.boundSubject,
    accessTokenTTL: row.accessTokenTtl,
    accessTokenMaxTTL: row.accessTokenMaxTtl,
    accessTokenNumUsesLimit: row.accessTokenNumUsesLimit,
  };
}

/** JWT Auth of machine identities: its configuration (the logins are WorkloadLogin's). */
export class JwtAuthService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async attach(actor: Actor, identityId: string, values: JwtAuthValues) {
    assertTtls(values);
    assertUsable(values);
    return runIdentityConfigWork(this.#deps, actor, identityId, 'create', async (tx, identity) => {
      if (await findJwtAuth(tx.db, identity.id)) throw new BadRequestError('Failed to add JWT Auth to already configured identity', 'AlreadyConfigured');
      const created = await insertJwtAuth(tx.db, identity.id, values);
      if (!identity.authMethod) await setIdentityAuthMethod(tx.db, identity.id, JWT_AUTH);
      return { result: toJwtAuthResponse(created), event: 'add-identity-jwt-auth', metadata: auditedSettings(created) };
    });
  }

  async get(actor: Actor, identityId: string) {
    return runIdentityConfigWork(this.#deps, actor, identityId, 'read', async (tx, identity) => {
      const config = await requireJwtAuth(tx.db, identity.id);
      return { result: toJwtAuthResponse(config), event: 'get-identity-jwt-auth', metadata: { identityJwtAuthId: config.id } };
    });
  }

  async update(actor: Actor, identityId: string, changes: Partial<JwtAuthValues>) {
    return runIdentityConfigWork(this.#deps, actor, identityId, 'edit', async (tx, identity) => {
      const config = await requireJwtAuth(tx.db, identity.id);
      const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<JwtAuthValues>;
      const merged = { ...config, ...defined };
      assertTtls(merged);
      assertUsable(merged);
      const updated = await updateJwtAuth(tx.db, config.id, defined);
      return { result: toJwtAuthResponse(updated), event: 'update-identity-jwt-auth', metadata: auditedSettings(updated) };
    });
  }

  /** Removes JWT Auth: the access tokens issued through it stop working at once. */
  async revoke(actor: Actor, identityId: string) {
    return runIdentityConfigWork(this.#deps, actor, identityId, 'delete', async (tx, identity) => {
      const config = await requireJwtAuth(tx.db, identity.id);
      await revokeTokensIssuedBy(tx.db, identity.id, JWT_AUTH);
      await deleteJwtAuth(tx.db, config.id);
      if (identity.authMethod === JWT_AUTH) await setIdentityAuthMethod(tx.db, identity.id, null);
      return { result: toJwtAuthResponse(config), event: 'revoke-identity-jwt-auth', metadata: { identityJwtAuthId: config.id } };
    });
  }
}

async function requireJwtAuth(db: Executor, identityId: string): Promise<IdentityJwtAuth> {
  const config = await findJwtAuth(db, identityId);
  if (!config) throw new NotFoundError(`Identity with ID '${identityId}' does not have JWT Auth`);
  return config;
}
