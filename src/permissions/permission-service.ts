import type { Kysely } from 'kysely';
import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { ForbiddenError, PermissionDeniedError } from '../errors.ts';
import {
  ADMIN_PROJECT_RULES,
  type Ability,
  abilityAllows,
  type Action,
  buildAbility,
  type OrgSubject,
  orgRoleRank,
  orgRoleRules,
  type PermissionConditions,
  type PermissionRule,
  type ProjectSubject,
} from './permission-rules.ts';
import { activeRulesOfMembership, findMembershipId } from './permission-store.ts';
import { isAtLeastAsPrivileged } from './privilege-compare.ts';

export type { Action, OrgSubject, PermissionConditions, ProjectSubject };

/** What an actor may do in one project (or organization), computed once. */
export class PermissionSet {
  readonly ability: Ability;

  constructor(rules: PermissionRule[]) {
    this.ability = buildAbility(rules);
  }

  can(action: Action, subject: string, conditions?: PermissionConditions): boolean {
    return abilityAllows(this.ability, action, subject, conditions);
  }

  assert(action: Action, subject: string, conditions?: PermissionConditions): void {
    if (!this.can(action, subject, conditions)) throw new PermissionDeniedError(action, subject);
  }

  /** True when this set grants everything `rules` grant (the privilege escalation guard). */
  covers(rules: PermissionRule[]): boolean {
    return isAtLeastAsPrivileged(this.ability, rules);
  }
}

/**
 * Decides what an actor may do: org admins everything in their organization;
 * everyone else what their active project roles and additional privileges
 * grant. Read live on every check, so expired temporary access stops at once.
 */
export class PermissionService {
  readonly #db: Kysely<DB>;

  constructor(db: Kysely<DB>) {
    this.#db = db;
  }

  /** `db` lets a caller inside a transaction read through it (one connection on PGlite, no pool starvation on PostgreSQL). */
  async forProject(actor: Actor, project: { id: string; orgId: string }, db: Executor = this.#db): Promise<PermissionSet> {
    assertSameOrg(actor, project.orgId);
    if (actor.orgRole === 'admin') return new PermissionSet(ADMIN_PROJECT_RULES);
    const membershipId = await findMembershipId(db, actor.kind, actor.id, project.id);
    if (!membershipId) throw new ForbiddenError(`You are not a member of the project with ID '${project.id}'`, 'ForbiddenError');
    return new PermissionSet(await activeRulesOfMembership(db, actor.kind, membershipId, new Date()));
  }

  async assertProjectPermission(
    actor: Actor,
    project: { id: string; orgId: string },
    action: Action,
    subject: ProjectSubject,
    conditions?: PermissionConditions,
    db?: Executor,
  ): Promise<void> {
    (await this.forProject(actor, project, db)).assert(action, subject, conditions);
  }

  async forOrg(actor: Actor, orgId: string): Promise<PermissionSet> {
    assertSameOrg(actor, orgId);
    return new PermissionSet(orgRoleRules(actor.orgRole));
  }

  async assertOrgPermission(actor: Actor, orgId: string, action: Action, subject: OrgSubject): Promise<void> {
    (await this.forOrg(actor, orgId)).assert(action, subject);
  }

  /** Nobody hands out an org role above their own. */
  assertCanGrantOrgRole(actor: Actor, role: string, message = 'Failed to grant a more privileged organization role'): void {
    if (orgRoleRank(role) > orgRoleRank(actor.orgRole)) throw new ForbiddenError(message, 'PrivilegeEscalation');
  }

  /** Nobody grants (or manages someone holding) project permissions above their own. */
  assertCovers(held: PermissionSet, rules: PermissionRule[], message: string): void {
    if (!held.covers(rules)) throw new ForbiddenError(message, 'PrivilegeEscalation');
  }
}

function assertSameOrg(actor: Actor, orgId: string): void {
  if (actor.orgId !== orgId) {
    throw new ForbiddenError('You are not a member of the organization that owns this resource', 'ForbiddenError');
  }
}
