import type { Actor } from '../actor/actor.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { listOrgUserMemberships } from './org-store.ts';

/** Op 16: the users of an organization, for user and identity callers alike. */
export class OrgMembershipService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async listUsers(actor: Actor, orgId: string) {
    await this.#deps.permissions.assertOrgPermission(actor, orgId, 'read', 'member');
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
