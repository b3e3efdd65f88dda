import type { Actor } from '../actor/actor.ts';
import type { Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { findOrgIdentity } from '../identities/identity-store.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { assertCanGrant, assertCanManage, prepareRoles, writeMembership } from './membership-roles.ts';
import { type RoleAssignment, toMembershipResponse, toMembershipRoleResponse } from './membership-schema.ts';
import {
  deleteIdentityMembership,
  findIdentityMembership,
  insertIdentityMembership,
  listIdentityMemberships,
  replaceMembershipRoles,
  rolesOfMemberships,
} from './membership-store.ts';
import type { ReadOnlyDb } from '../db/database.ts';

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
    const { permissions } = this.#deps;
    const alreadyMember = () => new BadRequestError(`Identity with ID '${identityId}' already exists in project with ID '${projectId}'`, 'AlreadyMember');
    return writeMembership(
      this.#deps.unitOfWork,
      { actor, projectId, action: 'create', subject: 'identity' },
      async (tx, project, held) => {
        const identity = await findOrgIdentity(tx.db, project.orgId, identityId);
        if (!identity) throw new NotFoundError(`Identity with ID '${identityId}' not found in this organization`);
        const roles = await prepareRoles(tx.db, project.id, assignments);
        assertCanGrant(permissions, held, roles.rules);
        const membership = await insertIdentityMembership(tx.db, project.id, identity.id);
        await replaceMembershipRoles(tx.db, 'identity', membership.id, roles.rows);
        auditMembership(tx, project, 'create-identity-project-membership', identity.id, assignments);
        return toMembershipResponse(membership);
      },
      { identity_project_memberships_identity_key: alreadyMember },
    );
  }

  async list(actor: Actor, projectId: string) {
    const { db } = this.#deps;
    const project = await this.#authorizeRead(actor, projectId);
    return this.#withRoles(db, await listIdentityMemberships(db, project.id));
  }

  async get(actor: Actor, projectId: string, identityId: string) {
    const { db } = this.#deps;
    const project = await this.#authorizeRead(actor, projectId);
    const [membership] = await this.#withRoles(db, [await this.#requireMembership(db, project, identityId)]);
    return membership!;
  }

  async updateRoles(actor: Actor, projectId: string, identityId: string, assignments: RoleAssignment[]) {
    const { permissions } = this.#deps;
    return writeMembership(this.#deps.unitOfWork, { actor, projectId, action: 'edit', subject: 'identity' }, async (tx, project, held) => {
      const membership = await this.#requireMembership(tx.db, project, identityId);
      await assertCanManage(permissions, held, tx.db, 'identity', membership.id);
      const roles = await prepareRoles(tx.db, project.id, assignments);
      assertCanGrant(permissions, held, roles.rules);
      await replaceMembershipRoles(tx.db, 'identity', membership.id, roles.rows);
      auditMembership(tx, project, 'update-identity-project-membership', identityId, assignments);
      return ((await rolesOfMemberships(tx.db, 'identity', [membership.id])).get(membership.id) ?? []).map(toMembershipRoleResponse);
    });
  }

  async remove(actor: Actor, projectId: string, identityId: string) {
    const { permissions } = this.#deps;
    return writeMembership(this.#deps.unitOfWork, { actor, projectId, action: 'delete', subject: 'identity' }, async (tx, project, held) => {
      const membership = await this.#requireMembership(tx.db, project, identityId);
      await assertCanManage(permissions, held, tx.db, 'identity', membership.id);
      await deleteIdentityMembership(tx.db, membership.id);
      auditMembership(tx, project, 'delete-identity-project-membership', identityId, []);
      return plain(membership);
    });
  }

  async #withRoles(db: ReadOnlyDb, memberships: IdentityMembershipRow[]) {
    const roles = await rolesOfMemberships(
      db,
      'identity',
      memberships.map((membership) => membership.id),
    );
    return memberships.map((membership) => ({
      ...plain(membership),
      identity: { id: membership.identityId, name: membership.identityName, authMethod: membership.authMethod },
      roles: (roles.get(membership.id) ?? []).map(toMembershipRoleResponse),
    }));
  }

  async #authorizeRead(actor: Actor, projectId: string): Promise<Project> {
    const { db, lookups, permissions } = this.#deps;
    const project = await lookups.requireProject(db, { id: projectId });
    await permissions.assertProject({ actor, project, action: 'read', subject: 'identity' });
    return project;
  }

  async #requireMembership(db: ReadOnlyDb, project: Project, identityId: string): Promise<IdentityMembershipRow> {
    const membership = await findIdentityMembership(db, project.id, identityId);
    if (!membership) throw new NotFoundError(`Identity with ID '${identityId}' is not a member of project with ID '${project.id}'`);
    return membership;
  }
}

function auditMembership(tx: WriteContext, project: Project, type: string, identityId: string, assignments: RoleAssignment[]): void {
  tx.audit({ project, type, metadata: { identityId, roles: assignments.map((assignment) => assignment.role) } });
}
