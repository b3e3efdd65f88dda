import type { Executor } from '../db/database.ts';
import type { PermissionRule } from '../permissions/permission-rules.ts';
import type { PermissionService, PermissionSet } from '../permissions/permission-service.ts';
import { activeRulesOfMembership } from '../permissions/permission-lookup.ts';
import type { MemberKind } from '../permissions/permission-rules.ts';
import { PERMANENT, temporaryAccess } from '../permissions/temporary-access.ts';
import { resolveRoleSlugs } from '../roles/role-lookup.ts';
import type { RoleAssignment } from './membership-schema.ts';
import type { NewRoleRow } from './membership-store.ts';

/** The rows to store for requested roles, and every rule they grant. */
export async function prepareRoles(db: Executor, projectId: string, assignments: RoleAssignment[]): Promise<{ rows: NewRoleRow[]; rules: PermissionRule[] }> {
  const resolved = await resolveRoleSlugs(db, projectId, assignments.map((assignment) => assignment.role));
  const rows = assignments.map((assignment) => {
    const { role, customRoleId } = resolved.get(assignment.role)!;
    return { role, customRoleId, ...(assignment.isTemporary ? temporaryAccess(assignment) : PERMANENT) };
  });
  return { rows, rules: assignments.flatMap((assignment) => resolved.get(assignment.role)!.rules) };
}

/** Granting roles: they must not exceed the caller's own permissions. */
export function assertCanGrant(permissions: PermissionService, held: PermissionSet, rules: PermissionRule[]): void {
  permissions.assertCovers(held, rules, 'Failed to change to a more privileged role');
}

/** Changing or removing someone's membership: they must not hold more than the caller. */
export async function assertCanManage(
  permissions: PermissionService,
  held: PermissionSet,
  db: Executor,
  kind: MemberKind,
  membershipId: string,
): Promise<void> {
  const current = await activeRulesOfMembership(db, kind, membershipId, new Date());
  permissions.assertCovers(held, current, 'Failed to update a more privileged member');
}
