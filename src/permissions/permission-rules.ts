import { buildMongoQueryMatcher, createMongoAbility, type MongoAbility, subject as withSubject } from '@casl/ability';
import { compilePathGlob, type Matcher, PatternError } from '../patterns/patterns.ts';

/** Who holds a project membership. */
export type MemberKind = 'user' | 'identity';

export const ACTIONS = ['read', 'create', 'edit', 'delete'] as const;
export type Action = (typeof ACTIONS)[number];

export const PROJECT_SUBJECTS = [
  'workspace',
  'settings',
  'environments',
  'secret-folders',
  'secrets',
  'secret-imports',
  'tags',
  'integrations',
  'audit-logs',
  'member',
  'identity',
  'role',
  'namespace-grants',
  'app-connections',
  'secret-rotation',
  'secret-approval',
  'secret-rollback',
  'webhooks',
  'dynamic-secrets',
  'dynamic-secret-leases',
] as const;
export type ProjectSubject = (typeof PROJECT_SUBJECTS)[number];

/** Subjects whose rules may be narrowed to an environment and a secret path. */
export const CONDITIONAL_SUBJECTS: readonly ProjectSubject[] = ['secrets', 'secret-folders', 'secret-imports'];

export const ORG_SUBJECTS = ['workspace', 'identity', 'member', 'role', 'settings', 'audit-logs', 'audit-log-streams'] as const;
export type OrgSubject = (typeof ORG_SUBJECTS)[number];

/** Where a secret operation happens; rules with conditions match against it. */
export interface PermissionConditions {
  environment?: string;
  secretPath?: string;
}

/** One CASL rule as stored and as the API shows it. */
export interface PermissionRule {
  subject: string;
  action: Action[];
  conditions?: Record<string, unknown>;
  inverted?: boolean;
}

// `secretPath: {$glob: "/app/**"}`, as in the reference's permission rules, on the one pattern compiler
// (RE2, bounded): compiled once per rule condition, kept with it.
const compiledGlobs = new WeakMap<object, Matcher>();
const $glob = {
  type: 'field',
  validate(_instruction: unknown, value: unknown) {
    if (typeof value !== 'string') throw new TypeError('$glob expects a string pattern');
  },
};
const glob = (node: { field: string; value: string }, object: unknown, context: { get: (object: unknown, field: string) => unknown }) => {
  const value = context.get(object, node.field);
  let matcher = compiledGlobs.get(node);
  if (!matcher) {
    matcher = compilePathGlob(node.value);
    compiledGlobs.set(node, matcher);
  }
  return typeof value === 'string' && matcher.matches(value);
};
// `$regex` would compile a stored condition with JavaScript's backtracking RegExp: no rule may use it (the input schema has no way to send one)
const $regex = {
  type: 'field',
  validate() {
    throw new PatternError('$regex conditions are not supported');
  },
};
const conditionsMatcher = buildMongoQueryMatcher({ $glob, $regex } as never, { glob } as never);

export type Ability = MongoAbility;

/** A stored rule whose pattern no longer compiles (written before the bounds): which rule, never the pattern. */
export type UnusableRuleReport = (rule: { subject: string; inverted: boolean; field: string; reason: string }) => void;

export function buildAbility(rules: PermissionRule[], onUnusable?: UnusableRuleReport): Ability {
  return createMongoAbility(usableRules(rules, onUnusable) as never, { conditionsMatcher });
}

/**
 * Rules stored before the pattern bounds may hold a glob that no longer
 * compiles. Such a rule fails closed: one that grants is left out (it matches
 * nothing), one that forbids applies whatever the value of that field.
 */
function usableRules(rules: PermissionRule[], onUnusable?: UnusableRuleReport): PermissionRule[] {
  return rules.flatMap((rule) => {
    if (!rule.conditions) return [rule];
    let conditions: Record<string, unknown> = rule.conditions;
    for (const [field, condition] of Object.entries(rule.conditions)) {
      const reason = unusableReason(condition);
      if (reason === undefined) continue;
      onUnusable?.({ subject: rule.subject, inverted: rule.inverted === true, field, reason });
      if (!rule.inverted) return [];
      conditions = Object.fromEntries(Object.entries(conditions).filter(([name]) => name !== field));
    }
    if (conditions === rule.conditions) return [rule];
    const { conditions: _dropped, ...unconditional } = rule;
    return [Object.keys(conditions).length > 0 ? { ...unconditional, conditions } : unconditional];
  });
}

function unusableReason(condition: unknown): string | undefined {
  if (typeof condition !== 'object' || condition === null) return undefined;
  if ('$regex' in condition) return '$regex conditions are not supported';
  if (!('$glob' in condition) || typeof condition.$glob !== 'string') return undefined;
  try {
    compilePathGlob(condition.$glob);
    return undefined;
  } catch (error) {
    if (error instanceof PatternError) return error.message;
    throw error;
  }
}

/**
 * Without conditions, a subject is allowed when any rule grants it (the
 * caller filters later); with conditions, the rule's conditions must match.
 */
export function abilityAllows(ability: Ability, action: string, subject: string, conditions?: PermissionConditions): boolean {
  if (!conditions || Object.keys(conditions).length === 0) return ability.can(action, subject);
  return ability.can(action, withSubject(subject, { ...conditions }));
}

const all = (subjects: readonly string[]): PermissionRule[] => subjects.map((subject) => ({ subject, action: [...ACTIONS] }));
const crud = (subject: string): PermissionRule => ({ subject, action: [...ACTIONS] });
const only = (subject: string, ...action: Action[]): PermissionRule => ({ subject, action });

/** The built-in project role for a Kubernetes operator's machine identity (Infisical has none by that name). */
export const OPERATOR_ROLE_SLUG = 'k8s-operator';

/** One subject and the actions on it. */
export interface PermissionNeed {
  subject: ProjectSubject;
  actions: readonly Action[];
}

/**
 * What an operator does in a project it syncs, and nothing more: resolve the
 * project and its environments, read secrets (folders and imports are read
 * with them), and keep its Integration resources' records and sync results.
 * The role OPERATOR_ROLE_SLUG grants exactly this, and the operator checks at
 * start that it holds it (permissions/operator-role.ts). The one list to
 * change when what the operator does changes.
 */
export const OPERATOR_NEEDS: readonly PermissionNeed[] = [
  { subject: 'workspace', actions: ['read'] },
  { subject: 'environments', actions: ['read'] },
  { subject: 'secret-folders', actions: ['read'] },
  { subject: 'secrets', actions: ['read'] },
  { subject: 'secret-imports', actions: ['read'] },
  { subject: 'integrations', actions: ['read', 'create', 'edit', 'delete'] },
];

/** The reference's built-in project roles (§1.5), and Coffer's role for operators. */
export const BUILT_IN_PROJECT_ROLES: Record<string, { name: string; description: string; rules: PermissionRule[] }> = {
  admin: { name: 'Admin', description: 'Full administrative access over a project', rules: all(PROJECT_SUBJECTS) },
  member: {
    name: 'Developer',
    description: 'Limited read/write role in a project',
    rules: [
      ...['secrets', 'secret-folders', 'secret-imports', 'integrations', 'identity', 'settings', 'environments', 'tags', 'webhooks'].map(crud),
      only('member', 'read', 'create'),
      only('role', 'read'),
      only('audit-logs', 'read'),
      only('workspace', 'read'),
      only('namespace-grants', 'read'),
      crud('secret-rotation'),
      only('app-connections', 'read'),
      only('secret-approval', 'read'),
      only('secret-rollback', 'read', 'create'),
      // The provider's admin connection and statement templates stay the admin's: a member leases, never configures.
      only('dynamic-secrets', 'read'),
      crud('dynamic-secret-leases'),
    ],
  },
  viewer: {
    name: 'Viewer',
    description: 'Only read role in a project',
    rules: PROJECT_SUBJECTS.map((subject) => only(subject, 'read')),
  },
  'no-access': { name: 'No Access', description: 'No access to any resources in the project', rules: [] },
  [OPERATOR_ROLE_SLUG]: {
    name: 'Kubernetes Operator',
    description: "What Coffer's operator needs to sync the project into a cluster: read secrets, keep its integration records",
    rules: OPERATOR_NEEDS.map(({ subject, actions }) => ({ subject, action: [...actions] })),
  },
};

export function isBuiltInProjectRole(slug: string): boolean {
  return Object.hasOwn(BUILT_IN_PROJECT_ROLES, slug);
}

export const ORG_ROLES = ['admin', 'member', 'no-access'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

const ORG_ROLE_RULES: Record<string, PermissionRule[]> = {
  admin: all(ORG_SUBJECTS),
  member: [only('workspace', 'read', 'create'), only('member', 'read'), only('role', 'read'), only('settings', 'read'), crud('identity'), only('audit-logs', 'read')],
  'no-access': [],
};

export function orgRoleRules(role: string): PermissionRule[] {
  return ORG_ROLE_RULES[role] ?? [];
}

/** Org roles are ordered: granting one needs at least that role. */
export function orgRoleRank(role: string): number {
  return role === 'admin' ? 2 : role === 'member' ? 1 : 0;
}

export const ADMIN_PROJECT_RULES = BUILT_IN_PROJECT_ROLES.admin!.rules;
