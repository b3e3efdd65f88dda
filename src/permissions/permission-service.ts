import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Actor } from '../actor/actor.ts';
import type { DB } from '../db/schema.ts';
import type { CacheVersions } from '../caches/cache-versions.ts';
import { VersionedCache } from '../caches/versioned-cache.ts';
import { ForbiddenError, PermissionDeniedError, ProjectNotFoundError } from '../errors.ts';
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
  type UnusableRuleReport,
} from './permission-rules.ts';
import { findMembershipId, rulesOfMembership } from './permission-store.ts';
import { isAtLeastAsPrivileged } from './privilege-compare.ts';
import type { ReadOnlyDb } from '../db/database.ts';

export type { Action, OrgSubject, PermissionConditions, ProjectSubject };

/** What an actor may do in one project (or organization), computed once. */
export class PermissionSet {
  readonly ability: Ability;
  /** The rules it was built from (roles and privileges active now), as stored. */
  readonly rules: readonly PermissionRule[];
  /** When a temporary grant starts or ends (ms since epoch): the set is not right after it. */
  readonly validUntil: number;

  constructor(rules: PermissionRule[], validUntil = Infinity, onUnusable?: UnusableRuleReport) {
    this.ability = buildAbility(rules, onUnusable);
    this.rules = rules;
    this.validUntil = validUntil;
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

const ADMIN = new PermissionSet(ADMIN_PROJECT_RULES);

/** One project permission check, by name: who, where, what, on what, and (for secrets, folders and imports) at which environment and path. */
export interface ProjectPermission {
  actor: Actor;
  project: { id: string; orgId: string };
  action: Action;
  subject: ProjectSubject;
  /** The environment and secret path the action happens at (rules may be narrowed to them). */
  where?: PermissionConditions;
  /** A transaction to read through: a mutation decides on what it has locked. */
  db?: ReadOnlyDb;
}

/** One organization permission check, by name. */
export interface OrgPermission {
  actor: Actor;
  orgId: string;
  action: Action;
  subject: OrgSubject;
}

/**
 * Decides what an actor may do: org admins everything in their organization;
 * everyone else what their active project roles and additional privileges
 * grant. Read from the database for every check inside a transaction (so a
 * mutation decides on what it has locked), and cached outside one
 * (caches/README.md); expired temporary access stops at once either way.
 */
export class PermissionService {
  readonly #db: Kysely<DB>;
  readonly #cache: VersionedCache<PermissionSet | null> | undefined;
  readonly #versions: CacheVersions | undefined;
  readonly #reportUnusable: UnusableRuleReport;

  /** `logger` hears of stored rules whose pattern no longer compiles (which rule and why, never the pattern). */
  constructor(db: Kysely<DB>, versions?: CacheVersions, logger?: Pick<Logger, 'warn'>) {
    this.#db = db;
    this.#versions = versions;
    this.#reportUnusable = (rule) => logger?.warn(rule, 'a stored permission rule has a pattern that no longer compiles: it grants nothing, or forbids at every path');
    this.#cache = versions && new VersionedCache(versions, 'permissions');
  }

  /**
   * The newest version of what anyone may do that this process has committed
   * or read (caches/cache-versions.ts): a holder of permission sets for longer
   * than one request (an event stream) drops them when it moves.
   */
  get accessVersion(): number {
    return this.#versions?.known('permissions') ?? 0;
  }

  /** `db` lets a caller inside a transaction read through it (one connection on PGlite, no pool starvation on PostgreSQL). */
  async forProject(actor: Actor, project: { id: string; orgId: string }, db: ReadOnlyDb = this.#db): Promise<PermissionSet> {
    // Another organization's project, and one the caller is no member of, answer as a missing one (no existence revealed).
    if (actor.orgId !== project.orgId) throw new ProjectNotFoundError();
    if (actor.orgRole === 'admin') return ADMIN;
    const load = () => this.#load(db, actor, project.id);
    const permissions = this.#cache ? await this.#cache.get(db, `${actor.kind}:${actor.id}:${project.id}`, load) : (await load()).value;
    if (!permissions) throw new ProjectNotFoundError();
    return permissions;
  }

  async #load(db: ReadOnlyDb, actor: Actor, projectId: string): Promise<{ value: PermissionSet | null; expiresAt?: number }> {
    const membershipId = await findMembershipId(db, actor.kind, actor.id, projectId);
    if (!membershipId) return { value: null };
    const { rules, changesAt } = await rulesOfMembership(db, actor.kind, membershipId, new Date());
    return { value: new PermissionSet(rules, changesAt, this.#reportUnusable), expiresAt: changesAt };
  }

  /** The check passes or throws 403 (404 for a caller who is no member); answers the actor's permissions in the project for further checks. */
  async assertProject(check: ProjectPermission): Promise<PermissionSet> {
    const permissions = await this.forProject(check.actor, check.project, check.db);
    permissions.assert(check.action, check.subject, check.where);
    return permissions;
  }

  async forOrg(actor: Actor, orgId: string): Promise<PermissionSet> {
    assertSameOrg(actor, orgId);
    return new PermissionSet(orgRoleRules(actor.orgRole));
  }

  async assertOrg(check: OrgPermission): Promise<void> {
    (await this.forOrg(check.actor, check.orgId)).assert(check.action, check.subject);
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
