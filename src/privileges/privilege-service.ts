import { randomInt } from 'node:crypto';
import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { IdentityAdditionalPrivilege, Project } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { assertCanManage } from '../memberships/membership-roles.ts';
import { findIdentityMembership } from '../memberships/membership-store.ts';
import type { Action, PermissionRule } from '../permissions/permission-rules.ts';
import { PERMANENT, type TemporaryAccess, temporaryAccess } from '../permissions/temporary-access.ts';
import { requireProjectBySlug } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { toPrivilegeResponse } from './privilege-schema.ts';
import { deletePrivilege, findPrivilege, insertPrivilege, listPrivileges, type PrivilegeValues, updatePrivilege } from './privilege-store.ts';

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
    return this.#write(actor, target, input.rules, 'create-identity-additional-privilege', async (trx, membershipId) => {
      const slug = input.slug ?? randomSlug();
      return insertPrivilege(trx, membershipId, { slug, permissions: input.rules, ...access }).catch((error: unknown) => {
        throw isUniqueViolation(error) ? new BadRequestError('Additional privilege of provided slug exist', 'DuplicatePrivilegeSlug') : error;
      });
    });
  }

  async update(actor: Actor, target: PrivilegeTarget & { privilegeSlug: string }, changes: TemporaryInput & { slug?: string; rules?: PermissionRule[] }) {
    return this.#write(actor, target, changes.rules ?? [], 'update-identity-additional-privilege', async (trx, membershipId) => {
      const current = await requirePrivilege(trx, membershipId, target);
      const values: Partial<PrivilegeValues> = {};
      if (changes.slug) values.slug = changes.slug;
      if (changes.rules) values.permissions = changes.rules;
      if (changes.isTemporary !== undefined) Object.assign(values, accessOf(changes));
      if (Object.keys(values).length === 0) return current;
      return updatePrivilege(trx, current.id, values).catch((error: unknown) => {
        throw isUniqueViolation(error) ? new BadRequestError('Additional privilege of provided slug exist', 'DuplicatePrivilegeSlug') : error;
      });
    });
  }

  async delete(actor: Actor, target: PrivilegeTarget & { privilegeSlug: string }) {
    return this.#write(actor, target, [], 'delete-identity-additional-privilege', async (trx, membershipId) => {
      const current = await requirePrivilege(trx, membershipId, target);
      await deletePrivilege(trx, current.id);
      return current;
    });
  }

  /** Op 17: reading a privilege needs edit on `identity`, as in the reference. */
  async get(actor: Actor, target: PrivilegeTarget & { privilegeSlug: string }) {
    const { db } = this.#deps;
    const { membershipId } = await this.#authorize(db, actor, target, 'edit');
    return toPrivilegeResponse(await requirePrivilege(db, membershipId, target));
  }

  async list(actor: Actor, target: PrivilegeTarget) {
    const { db } = this.#deps;
    const { membershipId } = await this.#authorize(db, actor, target, 'read');
    return (await listPrivileges(db, membershipId)).map(toPrivilegeResponse);
  }

  /** Edits need edit on `identity`, at least the identity's current permissions, and at least the rules granted. */
  async #write(
    actor: Actor,
    target: PrivilegeTarget,
    rules: PermissionRule[],
    event: string,
    work: (trx: Executor, membershipId: string) => Promise<IdentityAdditionalPrivilege>,
  ) {
    const { db, permissions, audit } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const { project, membershipId, held } = await this.#authorize(trx, actor, target, 'edit');
      await assertCanManage(permissions, held, trx, 'identity', membershipId);
      permissions.assertCovers(held, rules, 'Failed to grant a privilege beyond your own permissions');
      const privilege = await work(trx, membershipId);
      await audit.record(trx, actor, { orgId: project.orgId, projectId: project.id, projectName: project.name }, {
        type: event,
        metadata: { identityId: target.identityId, privilegeId: privilege.id, slug: privilege.slug },
      });
      return toPrivilegeResponse(privilege);
    });
  }

  async #authorize(db: Executor, actor: Actor, target: PrivilegeTarget, action: Action): Promise<{ project: Project; membershipId: string; held: Awaited<ReturnType<ServiceDeps['permissions']['forProject']>> }> {
    const project = await requireProjectBySlug(db, actor.orgId, target.projectSlug);
    const held = await this.#deps.permissions.forProject(actor, project, db);
    held.assert(action, 'identity');
    const membership = await findIdentityMembership(db, project.id, target.identityId);
    if (!membership) throw new NotFoundError(`Failed to find identity with id ${target.identityId}`);
    return { project, membershipId: membership.id, held };
  }
}

async function requirePrivilege(db: Executor, membershipId: string, target: PrivilegeTarget & { privilegeSlug: string }) {
  const privilege = await findPrivilege(db, membershipId, target.privilegeSlug);
  if (!privilege) {
    throw new NotFoundError(`Identity additional privilege with slug '${target.privilegeSlug}' not found for the specified identity with ID '${target.identityId}'`);
  }
  return privilege;
}
