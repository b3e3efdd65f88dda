import { BUILT_IN_PROJECT_ROLES, type PermissionRule } from './permission-rules.ts';

import type { MemberKind } from './permission-rules.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export type { MemberKind };

export async function findMembershipId(db: ReadOnlyDb, kind: MemberKind, memberId: string, projectId: string): Promise<string | undefined> {
  const row =
    kind === 'identity'
      ? await db.selectFrom('identityProjectMemberships').select('id').where('projectId', '=', projectId).where('identityId', '=', memberId).executeTakeFirst()
      : await db.selectFrom('projectMemberships').select('id').where('projectId', '=', projectId).where('userId', '=', memberId).executeTakeFirst();
  return row?.id;
}

interface Grant {
  isTemporary: boolean;
  temporaryAccessStartTime: Date | null;
  temporaryAccessEndTime: Date | null;
}

/** Permanent grants, and temporary ones whose window contains `now`. */
function isActive(grant: Grant, now: Date): boolean {
  if (!grant.isTemporary) return true;
  const { temporaryAccessStartTime: start, temporaryAccessEndTime: end } = grant;
  return start !== null && end !== null && start <= now && end > now;
}

/** When the next temporary grant starts or ends after `now` (ms since epoch), if any will. */
function nextChange(grants: Grant[], now: Date): number | undefined {
  let next: number | undefined;
  for (const { isTemporary, temporaryAccessStartTime: start, temporaryAccessEndTime: end } of grants) {
    if (!isTemporary) continue;
    for (const time of [start, end]) if (time && time > now && (next === undefined || time.getTime() < next)) next = time.getTime();
  }
  return next;
}

/**
 * Every rule a membership's active roles (and, for identities, active
 * additional privileges) grant, and when that set next changes by itself
 * (a temporary grant starting or ending).
 */
export async function rulesOfMembership(
  db: ReadOnlyDb,
  kind: MemberKind,
  membershipId: string,
  now: Date,
): Promise<{ rules: PermissionRule[]; changesAt: number | undefined }> {
  const ownerColumn = kind === 'identity' ? 'r.identityProjectMembershipId' : 'r.projectMembershipId';
  const roles = await db
    .selectFrom('projectMembershipRoles as r')
    .leftJoin('projectRoles as pr', 'pr.id', 'r.customRoleId')
    .select(['r.role', 'pr.permissions', 'r.isTemporary', 'r.temporaryAccessStartTime', 'r.temporaryAccessEndTime'])
    .where(ownerColumn, '=', membershipId)
    .execute();
  const rules = roles
    .filter((role) => isActive(role, now))
    .flatMap((role) => (role.role === 'custom' ? ((role.permissions ?? []) as PermissionRule[]) : (BUILT_IN_PROJECT_ROLES[role.role]?.rules ?? [])));
  if (kind === 'user') return { rules, changesAt: nextChange(roles, now) };
  const privileges = await db
    .selectFrom('identityProjectAdditionalPrivileges as p')
    .select(['p.permissions', 'p.isTemporary', 'p.temporaryAccessStartTime', 'p.temporaryAccessEndTime'])
    .where('p.identityProjectMembershipId', '=', membershipId)
    .execute();
  return {
    rules: [...rules, ...privileges.filter((privilege) => isActive(privilege, now)).flatMap((privilege) => privilege.permissions as PermissionRule[])],
    changesAt: nextChange([...roles, ...privileges], now),
  };
}

/** Every rule a membership's active roles (and, for identities, active additional privileges) grant. */
export async function activeRulesOfMembership(db: Executor, kind: MemberKind, membershipId: string, now: Date): Promise<PermissionRule[]> {
  return (await rulesOfMembership(db, kind, membershipId, now)).rules;
}
