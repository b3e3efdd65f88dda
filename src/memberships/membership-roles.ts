import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { Project } from '../db/schema.ts';
import type { UnitOfWork, WriteContext, WriteOptions } from '../services/unit-of-work.ts';
import type { Action, PermissionRule } from '../permissions/permission-rules.ts';
import type { PermissionService, PermissionSet } from '../permissions/permission-service.ts';
import { activeRulesOfMembership } from '../permissions/permission-store.ts';
import type { MemberKind } from '../permissions/permission-rules.ts';
import { PERMANENT, temporaryAccess } from '../permissions/temporary-access.ts';
import { resolveRoleSlugs } from '../roles/role-lookup.ts';
import type { RoleAssignment } from './membership-schema.ts';
import type { NewRoleRow } from './membership-store.ts';

/** The rows to store for requested roles, and every rule they grant. */
export async function prepareRoles(db: Executor, projectId: string, assignments: RoleAssignment[]): Promise<{ rows: NewRoleRow[]; rules: PermissionRule[] }> {
  const resolved = await resolveRoleSlugs(
    db,
    projectId,
    assignments.map((assignment) => assignment.role),
  );
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
export async function assertCanManage(permissions: PermissionService, held: PermissionSet, db: Executor, kind: MemberKind, membershipId: string): Promise<void> {
  const current = await activeRulesOfMembership(db, kind, membershipId, new Date());
  permissions.assertCovers(held, current, 'Failed to update a more privileged member');
}

/**
 * A membership write: the project row locked (memberships of one project change one at a time),
 * the permission on `subject`; `held` is what the caller may do there, to grant no more than that.
 */
export function writeMembership<T>(
  unitOfWork: UnitOfWork,
  target: { actor: Actor; projectId: string; action: Exclude<Action, 'read'>; subject: 'member' | 'identity' },
  work: (tx: WriteContext, project: Project, held: PermissionSet) => Promise<T>,
  conflicts: WriteOptions['conflicts'] = {},
): Promise<T> {
  return unitOfWork.write(
    target.actor,
    async (tx) => {
      const project = await tx.project({ id: target.projectId }, { lock: true });
      return work(tx, project, await tx.authorize({ project, action: target.action, subject: target.subject }));
    },
    { conflicts },
  );
}
