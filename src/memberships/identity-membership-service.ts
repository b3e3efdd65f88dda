import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { findOrgIdentity } from '../identities/identity-store.ts';
import type { Action } from '../permissions/permission-rules.ts';
import { requireLockedProject, requireProject } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { assertCanGrant, assertCanManage, prepareRoles } from './membership-roles.ts';
import { type RoleAssignment, toMembershipResponse, toMembershipRoleResponse } from './membership-schema.ts';
import {
  deleteIdentityMembership,
  findIdentityMembership,
  insertIdentityMembership,
  listIdentityMemberships,
  replaceMembershipRoles,
  rolesOfMemberships,
} from './membership-store.ts';

type IdentityMembershipRow = NonNullable<Awaited<ReturnType<typeof findIdentityMembership>>>;

function plain(row: IdentityMembershipRow) {
  return toMembershipResponse({ id: row.id, identityId: row.identityId, projectId: row.projectId, createdAt: row.createdAt, updatedAt: row.updatedAt });
}

/** Machine identities in a project: add, list, get, change roles, remove. */
export class IdentityMembershipService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async add(actor: Actor, projectId: string, identityId: string, assignments: RoleAssignment[]) {
    const { db, permissions } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const { project, held } = await this.#authorize(trx, actor, projectId, 'create');
      const identity = await findOrgIdentity(trx, project.orgId, identityId);
      if (!identity) throw new NotFoundError(`Identity with ID '${identityId}' not found in this organization`);
      const roles = await prepareRoles(trx, project.id, assignments);
      assertCanGrant(permissions, held, roles.rules);
      const membership = await insertIdentityMembership(trx, project.id, identity.id).catch((error: unknown) => {
        throw isUniqueViolation(error, 'identity_project_memberships_identity_key')
          ? new BadRequestError(`Identity with ID '${identity.id}' already exists in project with ID '${project.id}'`, 'AlreadyMember')
          : error;
      });
      await replaceMembershipRoles(trx, 'identity', membership.id, roles.rows);
      await this.#audit(trx, actor, project, 'create-identity-project-membership', identity.id, assignments);
      return toMembershipResponse(membership);
    });
  }

  async list(actor: Actor, projectId: string) {
    const { db } = this.#deps;
    const { project } = await this.#authorize(db, actor, projectId, 'read');
    return this.#withRoles(db, await listIdentityMemberships(db, project.id));
  }

  async get(actor: Actor, projectId: string, identityId: string) {
    const { db } = this.#deps;
    const { project } = await this.#authorize(db, actor, projectId, 'read');
    const [membership] = await this.#withRoles(db, [await this.#requireMembership(db, project, identityId)]);
    return membership!;
  }

  async updateRoles(actor: Actor, projectId: string, identityId: string, assignments: RoleAssignment[]) {
    const { db, permissions } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const { project, held } = await this.#authorize(trx, actor, projectId, 'edit');
      const membership = await this.#requireMembership(trx, project, identityId);
      await assertCanManage(permissions, held, trx, 'identity', membership.id);
      const roles = await prepareRoles(trx, project.id, assignments);
      assertCanGrant(permissions, held, roles.rules);
      await replaceMembershipRoles(trx, 'identity', membership.id, roles.rows);
      await this.#audit(trx, actor, project, 'update-identity-project-membership', identityId, assignments);
      return ((await rolesOfMemberships(trx, 'identity', [membership.id])).get(membership.id) ?? []).map(toMembershipRoleResponse);
    });
  }

  async remove(actor: Actor, projectId: string, identityId: string) {
    const { db, permissions } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const { project, held } = await this.#authorize(trx, actor, projectId, 'delete');
      const membership = await this.#requireMembership(trx, project, identityId);
      await assertCanManage(permissions, held, trx, 'identity', membership.id);
      await deleteIdentityMembership(trx, membership.id);
      await this.#audit(trx, actor, project, 'delete-identity-project-membership', identityId, []);
      return plain(membership);
    });
  }

  async #withRoles(db: Executor, memberships: IdentityMembershipRow[]) {
    const roles = await rolesOfMemberships(db, 'identity', memberships.map((membership) => membership.id));
    return memberships.map((membership) => ({
      ...plain(membership),
      identity: { id: membership.identityId, name: membership.identityName, authMethod: membership.authMethod },
      roles: (roles.get(membership.id) ?? []).map(toMembershipRoleResponse),
    }));
  }

  async #authorize(db: Executor, actor: Actor, projectId: string, action: Action) {
    const project = action === 'read' ? await requireProject(db, projectId) : await requireLockedProject(db, projectId);
    const held = await this.#deps.permissions.forProject(actor, project, db);
    held.assert(action, 'identity');
    return { project, held };
  }

  async #requireMembership(db: Executor, project: Project, identityId: string): Promise<IdentityMembershipRow> {
    const membership = await findIdentityMembership(db, project.id, identityId);
    if (!membership) throw new NotFoundError(`Identity with ID '${identityId}' is not a member of project with ID '${project.id}'`);
    return membership;
  }

  async #audit(trx: Executor, actor: Actor, project: Project, type: string, identityId: string, assignments: RoleAssignment[]) {
    await this.#deps.audit.record(trx, actor, { orgId: project.orgId, projectId: project.id, projectName: project.name }, {
      type,
      metadata: { identityId, roles: assignments.map((assignment) => assignment.role) },
    });
  }
}
