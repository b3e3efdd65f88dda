import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { NotFoundError } from '../errors.ts';
import { insertIdentityOrgMembership } from '../orgs/org-store.ts';
import type { Action } from '../permissions/permission-rules.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { toIdentityResponse, toOrgIdentityResponse } from './identity-schema.ts';
import {
  deleteIdentity,
  findIdentityWithOrg,
  insertIdentity,
  listOrgIdentities,
  type OrgIdentity,
  updateIdentity,
  updateIdentityOrgRole,
} from './identity-store.ts';

/** The identity in the actor's organization, or 404 (identities of other organizations are not revealed). */
export async function requireActorOrgIdentity(db: Executor, actor: Actor, identityId: string): Promise<OrgIdentity> {
  const identity = await findIdentityWithOrg(db, identityId);
  if (!identity || identity.orgId !== actor.orgId) throw new NotFoundError(`Failed to find identity with ID '${identityId}'`);
  return identity;
}

/**
 * Authorizes an org-level operation on an existing identity: the permission,
 * and the caller's org role must be at least the identity's.
 */
export async function authorizeIdentityAccess(deps: ServiceDeps, db: Executor, actor: Actor, identityId: string, action: Action) {
  const identity = await requireActorOrgIdentity(db, actor, identityId);
  await deps.permissions.assertOrgPermission(actor, identity.orgId, action, 'identity');
  deps.permissions.assertCanGrantOrgRole(actor, identity.role, 'Failed to manage a more privileged identity');
  return identity;
}

/** Machine identities of an organization and their org roles. */
export class IdentityService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, input: { name: string; organizationId: string; role: string }) {
    const { db, permissions, audit } = this.#deps;
    await permissions.assertOrgPermission(actor, input.organizationId, 'create', 'identity');
    permissions.assertCanGrantOrgRole(actor, input.role, 'Failed to create a more privileged identity');
    return db.transaction().execute(async (trx) => {
      const identity = await insertIdentity(trx, { name: input.name, authMethod: null });
      await insertIdentityOrgMembership(trx, { orgId: input.organizationId, identityId: identity.id, role: input.role });
      await audit.record(trx, actor, { orgId: input.organizationId }, {
        type: 'create-identity',
        metadata: { identityId: identity.id, name: identity.name, role: input.role },
      });
      return toIdentityResponse(identity);
    });
  }

  async list(actor: Actor, orgId: string) {
    await this.#deps.permissions.assertOrgPermission(actor, orgId, 'read', 'identity');
    return (await listOrgIdentities(this.#deps.db, orgId)).map(toOrgIdentityResponse);
  }

  async get(actor: Actor, identityId: string) {
    const identity = await requireActorOrgIdentity(this.#deps.db, actor, identityId);
    await this.#deps.permissions.assertOrgPermission(actor, identity.orgId, 'read', 'identity');
    return toOrgIdentityResponse(identity);
  }

  async update(actor: Actor, identityId: string, changes: { name?: string; role?: string }) {
    const { db, permissions, audit } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const current = await authorizeIdentityAccess(this.#deps, trx, actor, identityId, 'edit');
      if (changes.role) permissions.assertCanGrantOrgRole(actor, changes.role, 'Failed to update identity to a more privileged role');
      const updated = changes.name ? await updateIdentity(trx, current.id, { name: changes.name }) : current;
      if (changes.role) await updateIdentityOrgRole(trx, current.id, changes.role);
      await audit.record(trx, actor, { orgId: current.orgId }, {
        type: 'update-identity',
        metadata: { identityId: current.id, name: updated.name, ...(changes.role ? { role: changes.role } : {}) },
      });
      return toIdentityResponse(updated);
    });
  }

  async delete(actor: Actor, identityId: string) {
    const { db, audit } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const current = await authorizeIdentityAccess(this.#deps, trx, actor, identityId, 'delete');
      await deleteIdentity(trx, current.id);
      await audit.record(trx, actor, { orgId: current.orgId }, { type: 'delete-identity', metadata: { identityId: current.id, name: current.name } });
      return toIdentityResponse(current);
    });
  }
}
