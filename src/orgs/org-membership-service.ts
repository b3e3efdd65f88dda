import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import {
  acceptInvite,
  findUserOrgMembership,
  insertIdentityOrgMembership,
  insertOrganization,
  insertUserOrgMembership,
  inviteUserToOrg,
  listOrgUserMemberships,
  setUserOrgRole,
} from './org-store.ts';

/**
 * Organization rows other domains write in their units: invitations (users/invite-service.ts),
 * the first organization with its admin user (bootstrap), and single sign-on's members and mapped roles.
 */
export { acceptInvite, insertOrganization as createOrganization, insertUserOrgMembership as addUserToOrg, inviteUserToOrg, setUserOrgRole };

/** Makes a new machine identity a member of an organization, in the caller's write. */
export async function addIdentityToOrg(db: Executor, membership: { orgId: string; identityId: string; role: string }): Promise<void> {
  await insertIdentityOrgMembership(db, membership);
}

/**
 * Authorizes an org admin's write on a member's account (their sessions, their second factor): the permission,
 * and the caller's org role must be at least the member's. `failure` says what was refused.
 */
export async function authorizeMemberAccess(deps: ServiceDeps, tx: WriteContext, organizationId: string, userId: string, failure: string) {
  await tx.authorizeOrg({ action: 'edit', subject: 'member', orgId: organizationId });
  const membership = await findUserOrgMembership(tx.db, organizationId, userId);
  if (!membership) throw new NotFoundError('User not found in this organization');
  deps.permissions.assertCanGrantOrgRole(tx.actor, membership.role, failure);
  return membership;
}

/** Op 16: the users of an organization, for user and identity callers alike. */
export class OrgMembershipService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async listUsers(actor: Actor, orgId: string) {
    await this.#deps.permissions.assertOrg({ actor, orgId, action: 'read', subject: 'member' });
    const rows = await listOrgUserMemberships(this.#deps.db, orgId);
    return rows.map((row) => ({
      id: row.id,
      role: row.role,
      status: row.status,
      inviteEmail: row.inviteEmail,
      orgId: row.orgId,
      userId: row.userId,
      roleId: null,
      isActive: true,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
      user: {
        id: row.userId!,
        username: row.username,
        email: row.email,
        isEmailVerified: row.status === 'accepted',
        firstName: row.firstName,
        lastName: row.lastName,
        publicKey: null,
      },
    }));
  }
}
