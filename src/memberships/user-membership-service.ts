import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Action } from '../permissions/permission-rules.ts';
import { requireLockedProject, requireProject } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { findOrgUsers } from '../users/user-store.ts';
import { assertCanGrant, assertCanManage, prepareRoles } from './membership-roles.ts';
import { type RoleAssignment, toMembershipResponse, toMembershipRoleResponse } from './membership-schema.ts';
import {
  deleteUserMembership,
  findUserMembership,
  insertUserMembership,
  listUserMemberships,
  replaceMembershipRoles,
  rolesOfMemberships,
} from './membership-store.ts';

/** Users in a project: add (organization members only), list, change roles, remove. */
export class UserMembershipService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async add(actor: Actor, projectId: string, input: { emails: string[]; usernames: string[]; roleSlugs?: string[] }) {
    const { db, audit } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const { project, held } = await this.#authorize(trx, actor, projectId, 'create');
      const users = await this.#requireOrgUsers(trx, project, input.emails, input.usernames);
      const roles = await prepareRoles(trx, project.id, (input.roleSlugs ?? ['member']).map((role) => ({ role, isTemporary: false as const })));
      assertCanGrant(this.#deps.permissions, held, roles.rules);
      const memberships = [];
      for (const user of users) {
        const membership = await insertUserMembership(trx, project.id, user.id).catch((error: unknown) => {
          throw isUniqueViolation(error, 'project_memberships_user_key')
            ? new BadRequestError(`User '${user.email}' is already a member of this project`, 'AlreadyMember')
            : error;
        });
        await replaceMembershipRoles(trx, 'user', membership.id, roles.rows);
        memberships.push(membership);
      }
      await audit.record(trx, actor, scopeOf(project), {
        type: 'add-workspace-members',
        metadata: { userIds: users.map((user) => user.id), emails: users.map((user) => user.email), roles: input.roleSlugs ?? ['member'] },
      });
      return memberships.map(toMembershipResponse);
    });
  }

  async list(actor: Actor, projectId: string) {
    const { db } = this.#deps;
    const { project } = await this.#authorize(db, actor, projectId, 'read');
    const memberships = await listUserMemberships(db, project.id);
    const roles = await rolesOfMemberships(db, 'user', memberships.map((membership) => membership.id));
    return memberships.map((membership) => ({
      ...toMembershipResponse({ id: membership.id, userId: membership.userId, projectId: membership.projectId, createdAt: membership.createdAt, updatedAt: membership.updatedAt }),
      user: { id: membership.userId, email: membership.email, username: membership.username, firstName: membership.firstName, lastName: membership.lastName, publicKey: null },
      roles: (roles.get(membership.id) ?? []).map(toMembershipRoleResponse),
    }));
  }

  async updateRoles(actor: Actor, projectId: string, membershipId: string, assignments: RoleAssignment[]) {
    const { db, audit, permissions } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const { project, held } = await this.#authorize(trx, actor, projectId, 'edit');
      const membership = await this.#requireMembership(trx, project, membershipId);
      await assertCanManage(permissions, held, trx, 'user', membership.id);
      const roles = await prepareRoles(trx, project.id, assignments);
      assertCanGrant(permissions, held, roles.rules);
      await replaceMembershipRoles(trx, 'user', membership.id, roles.rows);
      await audit.record(trx, actor, scopeOf(project), {
        type: 'update-user-workspace-role',
        metadata: { userId: membership.userId, email: membership.email, roles: assignments.map((assignment) => assignment.role) },
      });
      return ((await rolesOfMemberships(trx, 'user', [membership.id])).get(membership.id) ?? []).map(toMembershipRoleResponse);
    });
  }

  async remove(actor: Actor, projectId: string, membershipId: string) {
    const { db, audit, permissions } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const { project, held } = await this.#authorize(trx, actor, projectId, 'delete');
      const membership = await this.#requireMembership(trx, project, membershipId);
      await assertCanManage(permissions, held, trx, 'user', membership.id);
      await deleteUserMembership(trx, membership.id);
      await audit.record(trx, actor, scopeOf(project), {
        type: 'remove-workspace-member',
        metadata: { userId: membership.userId, email: membership.email },
      });
      const { id, userId, createdAt, updatedAt } = membership;
      return toMembershipResponse({ id, userId, projectId: project.id, createdAt, updatedAt });
    });
  }

  async #authorize(db: Executor, actor: Actor, projectId: string, action: Action) {
    const project = action === 'read' ? await requireProject(db, projectId) : await requireLockedProject(db, projectId);
    const held = await this.#deps.permissions.forProject(actor, project, db);
    held.assert(action, 'member');
    return { project, held };
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

function scopeOf(project: Project) {
  return { orgId: project.orgId, projectId: project.id, projectName: project.name };
}
