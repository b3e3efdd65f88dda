import type { Actor } from '../actor/actor.ts';
import { NotFoundError } from '../errors.ts';
import { addIdentityToOrg } from '../orgs/org-membership-service.ts';
import type { Action } from '../permissions/permission-rules.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { toIdentityResponse, toOrgIdentityResponse } from './identity-schema.ts';
import {
  deleteIdentity,
  findIdentityWithOrg,
  findServiceIdentity,
  insertIdentity,
  listOrgIdentities,
  type OrgIdentity,
  updateIdentity,
  updateIdentityOrgRole,
} from './identity-store.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

/** The identity in the actor's organization, or 404 (identities of other organizations are not revealed). */
export async function requireActorOrgIdentity(db: ReadOnlyDb, actor: Actor, identityId: string): Promise<OrgIdentity> {
  const identity = await findIdentityWithOrg(db, identityId);
  if (!identity || identity.orgId !== actor.orgId) throw new NotFoundError(`Failed to find identity with ID '${identityId}'`);
  return identity;
}

/**
 * Authorizes a write on an existing identity: the permission, and the
 * caller's org role must be at least the identity's.
 */
export async function authorizeIdentityAccess(deps: ServiceDeps, tx: WriteContext, identityId: string, action: Action) {
  const identity = await requireActorOrgIdentity(tx.db, tx.actor, identityId);
  await tx.authorizeOrg({ action, subject: 'identity', orgId: identity.orgId });
  deps.permissions.assertCanGrantOrgRole(tx.actor, identity.role, 'Failed to manage a more privileged identity');
  return identity;
}

/** A new machine identity (no org membership yet), in the caller's write. */
export function createIdentity(db: Executor, values: { name: string; authMethod: string | null }) {
  return insertIdentity(db, values);
}

/** The identity's auth method (what its tokens are issued by), in the caller's write. */
export async function setIdentityAuthMethod(db: Executor, identityId: string, authMethod: string | null): Promise<void> {
  await updateIdentity(db, identityId, { authMethod });
}

/** Machine identities of an organization and their org roles. */
export class IdentityService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, input: { name: string; organizationId: string; role: string }) {
    const { permissions } = this.#deps;
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      await tx.authorizeOrg({ action: 'create', subject: 'identity', orgId: input.organizationId });
      permissions.assertCanGrantOrgRole(actor, input.role, 'Failed to create a more privileged identity');
      const identity = await insertIdentity(tx.db, { name: input.name, authMethod: null });
      await addIdentityToOrg(tx.db, { orgId: input.organizationId, identityId: identity.id, role: input.role });
      tx.audit({ orgId: input.organizationId, type: 'create-identity', metadata: { identityId: identity.id, name: identity.name, role: input.role } });
      return toIdentityResponse(identity);
    });
  }

  async list(actor: Actor, orgId: string) {
    await this.#deps.permissions.assertOrg({ actor, orgId, action: 'read', subject: 'identity' });
    return (await listOrgIdentities(this.#deps.db, orgId)).map(toOrgIdentityResponse);
  }

  async get(actor: Actor, identityId: string) {
    const identity = await requireActorOrgIdentity(this.#deps.db, actor, identityId);
    await this.#deps.permissions.assertOrg({ actor, orgId: identity.orgId, action: 'read', subject: 'identity' });
    return toOrgIdentityResponse(identity);
  }

  async update(actor: Actor, identityId: string, changes: { name?: string; role?: string }) {
    const { permissions } = this.#deps;
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const current = await authorizeIdentityAccess(this.#deps, tx, identityId, 'edit');
      if (changes.role) permissions.assertCanGrantOrgRole(actor, changes.role, 'Failed to update identity to a more privileged role');
      const updated = changes.name ? await updateIdentity(tx.db, current.id, { name: changes.name }) : current;
      if (changes.role) await updateIdentityOrgRole(tx.db, current.id, changes.role);
      tx.audit({
        orgId: current.orgId,
        type: 'update-identity',
        metadata: { identityId: current.id, name: updated.name, ...(changes.role ? { role: changes.role } : {}) },
      });
      return toIdentityResponse(updated);
    });
  }

  /**
   * A machine identity the service itself acts as (the in-process operator),
   * created once per organization with the given org role; not audited, as no
   * caller asked for it.
   */
  async ensureServiceIdentity(orgId: string, name: string, role: string): Promise<{ id: string; name: string; role: string }> {
    const existing = await findServiceIdentity(this.#deps.db, orgId, name);
    if (existing) return existing;
    return this.#deps.unitOfWork.write(null, async (tx) => {
      tx.authorizedBy('the service itself, at start');
      const identity = await insertIdentity(tx.db, { name, authMethod: 'service' });
      await addIdentityToOrg(tx.db, { orgId, identityId: identity.id, role });
      return { id: identity.id, name: identity.name, role };
    });
  }

  async delete(actor: Actor, identityId: string) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const current = await authorizeIdentityAccess(this.#deps, tx, identityId, 'delete');
      await deleteIdentity(tx.db, current.id);
      tx.audit({ orgId: current.orgId, type: 'delete-identity', metadata: { identityId: current.id, name: current.name } });
      return toIdentityResponse(current);
    });
  }
}
