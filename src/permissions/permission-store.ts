import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { BUILT_IN_PROJECT_ROLES, type PermissionRule } from './permission-rules.ts';

export type MemberKind = 'user' | 'identity';

/** Permanent grants, and temporary ones whose window contains `now`. */
function activeAt(alias: 'r' | 'p', now: Date) {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  return sql<boolean>`(${column('is_temporary')} = false OR (${column('temporary_access_start_time')} <= ${now} AND ${column('temporary_access_end_time')} > ${now}))`;
}

export async function findMembershipId(db: Executor, kind: MemberKind, memberId: string, projectId: string): Promise<string | undefined> {
  const row =
    kind === 'identity'
      ? await db
          .selectFrom('identityProjectMemberships')
          .select('id')
          .where('projectId', '=', projectId)
          .where('identityId', '=', memberId)
          .executeTakeFirst()
      : await db.selectFrom('projectMemberships').select('id').where('projectId', '=', projectId).where('userId', '=', memberId).executeTakeFirst();
  return row?.id;
}

/** Every rule a membership's active roles (and, for identities, active additional privileges) grant. */
export async function activeRulesOfMembership(db: Executor, kind: MemberKind, membershipId: string, now: Date): Promise<PermissionRule[]> {
  const ownerColumn = kind === 'identity' ? 'r.identityProjectMembershipId' : 'r.projectMembershipId';
  const roles = await db
    .selectFrom('projectMembershipRoles as r')
    .leftJoin('projectRoles as pr', 'pr.id', 'r.customRoleId')
    .select(['r.role', 'pr.permissions'])
    .where(ownerColumn, '=', membershipId)
    .where(activeAt('r', now))
    .execute();
  const rules = roles.flatMap((role) =>
    role.role === 'custom' ? ((role.permissions ?? []) as PermissionRule[]) : (BUILT_IN_PROJECT_ROLES[role.role]?.rules ?? []),
  );
  if (kind === 'user') return rules;
  const privileges = await db
    .selectFrom('identityProjectAdditionalPrivileges as p')
    .select('p.permissions')
    .where('p.identityProjectMembershipId', '=', membershipId)
    .where(activeAt('p', now))
    .execute();
  return [...rules, ...privileges.flatMap((privilege) => privilege.permissions as PermissionRule[])];
}
