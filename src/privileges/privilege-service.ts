import { randomInt } from 'node:crypto';
import type { Actor } from '../actor/actor.ts';
import type { IdentityAdditionalPrivilege, Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { assertCanManage } from '../memberships/membership-roles.ts';
import { findIdentityMembership } from '../memberships/membership-store.ts';
import type { PermissionRule } from '../permissions/permission-rules.ts';
import { PERMANENT, type TemporaryAccess, temporaryAccess } from '../permissions/temporary-access.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { toPrivilegeResponse } from './privilege-schema.ts';
import { deletePrivilege, findPrivilege, insertPrivilege, listPrivileges, type PrivilegeValues, updatePrivilege } from './privilege-store.ts';
import type { ReadOnlyDb } from '../db/database.ts';

export interface PrivilegeTarget {
  identityId: string;
  projectSlug: string;
}

export interface TemporaryInput {
  isTemporary?: boolean;
  temporaryMode?: string;
  temporaryRange?: string;
  temporaryAccessStartTime?: string;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const randomSlug = () => Array.from({ length: 12 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

function accessOf(input: TemporaryInput): TemporaryAccess {
  if (!input.isTemporary) return PERMANENT;
  const { temporaryMode, temporaryRange, temporaryAccessStartTime } = input;
  if (!temporaryMode || !temporaryRange || !temporaryAccessStartTime) {
    throw new BadRequestError('A temporary privilege needs temporaryMode, temporaryRange and temporaryAccessStartTime', 'TemporaryAccessIncomplete');
  }
  return temporaryAccess({ temporaryMode, temporaryRange, temporaryAccessStartTime });
}

/** Additional privileges: extra rules for one identity in one project, merged into its permissions. */
export class PrivilegeService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, target: PrivilegeTarget, input: TemporaryInput & { slug?: string; rules: PermissionRule[] }) {
    const access = accessOf(input);
    return this.#write(actor, target, input.rules, 'create-identity-additional-privilege', (tx, membershipId) =>
      insertPrivilege(tx.db, membershipId, { slug: input.slug ?? randomSlug(), permissions: input.rules, ...access }),
    );
  }

  async update(actor: Actor, target: PrivilegeTarget & { privilegeSlug: string }, changes: TemporaryInput & { slug?: string; rules?: PermissionRule[] }) {
    return this.#write(actor, target, changes.rules ?? [], 'update-identity-additional-privilege', async (tx, membershipId) => {
      const current = await requirePrivilege(tx.db, membershipId, target);
      const values: Partial<PrivilegeValues> = {};
      if (changes.slug) values.slug = changes.slug;
      if (changes.rules) values.permissions = changes.rules;
      if (changes.isTemporary !== undefined) Object.assign(values, accessOf(changes));
      if (Object.keys(values).length === 0) return current;
      return updatePrivilege(tx.db, current.id, values);
    });
  }

  async delete(actor: Actor, target: PrivilegeTarget & { privilegeSlug: string }) {
    return this.#write(actor, target, [], 'delete-identity-additional-privilege', async (tx, membershipId) => {
      const current = await requirePrivilege(tx.db, membershipId, target);
      await deletePrivilege(tx.db, current.id);
      return current;
    });
  }

  /** Op 17: reading a privilege needs edit on `identity`, as in the reference. */
  async get(actor: Actor, target: PrivilegeTarget & { privilegeSlug: string }) {
    const { db, permissions } = this.#deps;
    const project = await this.#deps.lookups.requireProject(db, { orgId: actor.orgId, slug: target.projectSlug });
    await permissions.assertProject({ actor, project, action: 'edit', subject: 'identity' });
    return toPrivilegeResponse(await requirePrivilege(db, await requireMembershipId(db, project, target), target));
  }

  async list(actor: Actor, target: PrivilegeTarget) {
    const { db, permissions } = this.#deps;
    const project = await this.#deps.lookups.requireProject(db, { orgId: actor.orgId, slug: target.projectSlug });
    await permissions.assertProject({ actor, project, action: 'read', subject: 'identity' });
    return (await listPrivileges(db, await requireMembershipId(db, project, target))).map(toPrivilegeResponse);
  }

  /** Edits need edit on `identity`, at least the identity's current permissions, and at least the rules granted. */
  #write(
    actor: Actor,
    target: PrivilegeTarget,
    rules: PermissionRule[],
    event: string,
    work: (tx: WriteContext, membershipId: string) => Promise<IdentityAdditionalPrivilege>,
  ) {
    const { permissions } = this.#deps;
    const duplicate = () => new BadRequestError('Additional privilege of provided slug exist', 'DuplicatePrivilegeSlug');
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const project = await tx.project({ orgId: actor.orgId, slug: target.projectSlug });
        const held = await tx.authorize({ project, action: 'edit', subject: 'identity' });
        const membershipId = await requireMembershipId(tx.db, project, target);
        await assertCanManage(permissions, held, tx.db, 'identity', membershipId);
        permissions.assertCovers(held, rules, 'Failed to grant a privilege beyond your own permissions');
        const privilege = await work(tx, membershipId);
        tx.audit({ project, type: event, metadata: { identityId: target.identityId, privilegeId: privilege.id, slug: privilege.slug } });
        return toPrivilegeResponse(privilege);
      },
      { conflicts: { identity_project_additional_privileges_slug_key: duplicate } },
    );
  }
}

/** The identity's membership of the project; 404 when it is none. */
async function requireMembershipId(db: ReadOnlyDb, project: Project, target: PrivilegeTarget): Promise<string> {
  const membership = await findIdentityMembership(db, project.id, target.identityId);
  if (!membership) throw new NotFoundError(`Failed to find identity with id ${target.identityId}`);
  return membership.id;
}

async function requirePrivilege(db: ReadOnlyDb, membershipId: string, target: PrivilegeTarget & { privilegeSlug: string }) {
  const privilege = await findPrivilege(db, membershipId, target.privilegeSlug);
  if (!privilege) {
    throw new NotFoundError(`Identity additional privilege with slug '${target.privilegeSlug}' not found for the specified identity with ID '${target.identityId}'`);
  }
  return privilege;
}
