import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { findOrgUsers } from '../users/user-store.ts';
import { assertCanGrant, assertCanManage, prepareRoles, writeMembership } from './membership-roles.ts';
import { type RoleAssignment, toMembershipResponse, toMembershipRoleResponse } from './membership-schema.ts';
import {
  deleteMembershipRoles,
  deleteRolelessUserMemberships,
  deleteUserMembership,
  findOrInsertUserMembership,
  findUserMembership,
  insertSsoGrantedRole,
  insertUserMembership,
  listSsoGrantedRoles,
  listUserMemberships,
  replaceMembershipRoles,
  rolesOfMemberships,
} from './membership-store.ts';

/** A project role single sign-on's group mappings give: `projectRole` as mapped, `role`/`customRoleId` as resolved. */
export interface SsoProjectRole {
  projectId: string;
  projectRole: string;
  role: string;
  customRoleId: string | null;
}

/**
 * Makes the project roles single sign-on gave the user in the organization (marked `granted_by_sso`)
 * exactly `wanted`, in the sign-in's unit: stale ones removed (with a membership left without roles),
 * missing ones added; roles granted by hand are never touched. As every membership write, each project
 * changed is locked (its memberships change one at a time) and audited in its own log; the sign-in was
 * authorized by the ID token and the mappings by the org admin who configured them.
 */
export async function syncSsoGrantedRoles(tx: WriteContext, target: { orgId: string; userId: string }, wanted: SsoProjectRole[]) {
  const keyOf = (role: { projectId: string; role: string; customRoleId: string | null }) => `${role.projectId}\0${role.role}\0${role.customRoleId ?? ''}`;
  const held = await listSsoGrantedRoles(tx.db, target.orgId, target.userId);
  const wantedKeys = new Set(wanted.map(keyOf));
  const heldKeys = new Set(held.map(keyOf));
  const stale = held.filter((role) => !wantedKeys.has(keyOf(role)));
  const missing = wanted.filter((role) => !heldKeys.has(keyOf(role)));
  for (const projectId of [...new Set([...stale, ...missing].map((role) => role.projectId))].sort()) {
    const project = await tx.project({ id: projectId }, { lock: true });
    tx.audit({
      project,
      type: 'update-user-workspace-role',
      metadata: {
        userId: target.userId,
        grantedBySso: missing.filter((role) => role.projectId === projectId).map((role) => role.projectRole),
        removedBySso: stale.filter((role) => role.projectId === projectId).map((role) => role.customRoleId ?? role.role),
      },
    });
  }
  await deleteMembershipRoles(
    tx.db,
    stale.map((role) => role.id),
  );
  await deleteRolelessUserMemberships(tx.db, [...new Set(stale.map((role) => role.membershipId))]);
  for (const role of missing) await insertSsoGrantedRole(tx.db, await findOrInsertUserMembership(tx.db, role.projectId, target.userId), role);
  return {
    granted: missing.map((role) => `${role.projectId}:${role.projectRole}`),
    removed: stale.map((role) => `${role.projectId}:${role.customRoleId ?? role.role}`),
  };
}

/** Users in a project: add (organization members only), list, change roles, remove. */
export class UserMembershipService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async add(actor: Actor, projectId: string, input: { emails: string[]; usernames: string[]; roleSlugs?: string[] }) {
    let adding: { email: string } | undefined;
    const alreadyMember = () => new BadRequestError(`User '${adding?.email}' is already a member of this project`, 'AlreadyMember');
    return writeMembership(
      this.#deps.unitOfWork,
      { actor, projectId, action: 'create', subject: 'member' },
      async (tx, project, held) => {
        const users = await this.#requireOrgUsers(tx.db, project, input.emails, input.usernames);
        const roles = await prepareRoles(
          tx.db,
          project.id,
          (input.roleSlugs ?? ['member']).map((role) => ({ role, isTemporary: false as const })),
        );
        assertCanGrant(this.#deps.permissions, held, roles.rules);
        const memberships = [];
        for (const user of users) {
          adding = user;
          const membership = await insertUserMembership(tx.db, project.id, user.id);
          await replaceMembershipRoles(tx.db, 'user', membership.id, roles.rows);
          memberships.push(membership);
        }
        tx.audit({
          project,
          type: 'add-workspace-members',
          metadata: { userIds: users.map((user) => user.id), emails: users.map((user) => user.email), roles: input.roleSlugs ?? ['member'] },
        });
        return memberships.map(toMembershipResponse);
      },
      { project_memberships_user_key: alreadyMember },
    );
  }

  async list(actor: Actor, projectId: string) {
    const { db, lookups, permissions } = this.#deps;
    const project = await lookups.requireProject(db, { id: projectId });
    await permissions.assertProject({ actor, project, action: 'read', subject: 'member' });
    const memberships = await listUserMemberships(db, project.id);
    const roles = await rolesOfMemberships(
      db,
      'user',
      memberships.map((membership) => membership.id),
    );
    return memberships.map((membership) => ({
      ...toMembershipResponse({
        id: membership.id,
        userId: membership.userId,
        projectId: membership.projectId,
        createdAt: membership.createdAt,
        updatedAt: membership.updatedAt,
      }),
      user: {
        id: membership.userId,
        email: membership.email,
        username: membership.username,
        firstName: membership.firstName,
        lastName: membership.lastName,
        publicKey: null,
      },
      roles: (roles.get(membership.id) ?? []).map(toMembershipRoleResponse),
    }));
  }

  async updateRoles(actor: Actor, projectId: string, membershipId: string, assignments: RoleAssignment[]) {
    const { permissions } = this.#deps;
    return writeMembership(this.#deps.unitOfWork, { actor, projectId, action: 'edit', subject: 'member' }, async (tx, project, held) => {
      const membership = await this.#requireMembership(tx.db, project, membershipId);
      await assertCanManage(permissions, held, tx.db, 'user', membership.id);
      const roles = await prepareRoles(tx.db, project.id, assignments);
      assertCanGrant(permissions, held, roles.rules);
      await replaceMembershipRoles(tx.db, 'user', membership.id, roles.rows);
      tx.audit({
        project,
        type: 'update-user-workspace-role',
        metadata: { userId: membership.userId, email: membership.email, roles: assignments.map((assignment) => assignment.role) },
      });
      return ((await rolesOfMemberships(tx.db, 'user', [membership.id])).get(membership.id) ?? []).map(toMembershipRoleResponse);
    });
  }

  async remove(actor: Actor, projectId: string, membershipId: string) {
    const { permissions } = this.#deps;
    return writeMembership(this.#deps.unitOfWork, { actor, projectId, action: 'delete', subject: 'member' }, async (tx, project, held) => {
      const membership = await this.#requireMembership(tx.db, project, membershipId);
      await assertCanManage(permissions, held, tx.db, 'user', membership.id);
      await deleteUserMembership(tx.db, membership.id);
      tx.audit({ project, type: 'remove-workspace-member', metadata: { userId: membership.userId, email: membership.email } });
      const { id, userId, createdAt, updatedAt } = membership;
      return toMembershipResponse({ id, userId, projectId: project.id, createdAt, updatedAt });
    });
  }

  async #requireOrgUsers(db: Executor, project: Project, emails: string[], usernames: string[]) {
    if (emails.length === 0 && usernames.length === 0) throw new BadRequestError('Provide at least one email or username', 'NoUsers');
    const users = await findOrgUsers(db, project.orgId, emails, usernames);
    const known = new Set(users.flatMap((user) => [user.email.toLowerCase(), user.username]));
    const missing = [...emails.filter((email) => !known.has(email.toLowerCase())), ...usernames.filter((name) => !known.has(name))];
    if (missing.length > 0) throw new NotFoundError(`Users not found in this organization: ${missing.join(', ')}`);
    return users;
  }

  async #requireMembership(db: Executor, project: Project, membershipId: string) {
    const membership = await findUserMembership(db, project.id, membershipId);
    if (!membership) throw new NotFoundError(`Project membership with ID '${membershipId}' not found`);
    return membership;
  }
}
