import { isUuid } from '../db/uuid.ts';
import type { ProjectRole } from '../db/schema.ts';
import type { PermissionRule } from '../permissions/permission-rules.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export interface RoleValues {
  name: string;
  slug: string;
  description: string | null;
  permissions: PermissionRule[];
}

export async function insertRole(db: Executor, projectId: string, values: RoleValues): Promise<ProjectRole> {
  return db
    .insertInto('projectRoles')
    .values({ ...values, projectId, permissions: JSON.stringify(values.permissions) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateRole(db: Executor, id: string, changes: Partial<RoleValues>): Promise<ProjectRole> {
  const { permissions, ...rest } = changes;
  return db
    .updateTable('projectRoles')
    .set({ ...rest, ...(permissions ? { permissions: JSON.stringify(permissions) } : {}), updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteRole(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('projectRoles').where('id', '=', id).execute();
}

export async function findRoleById(db: Executor, projectId: string, id: string): Promise<ProjectRole | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('projectRoles').selectAll().where('projectId', '=', projectId).where('id', '=', id).executeTakeFirst();
}

export async function findRolesBySlugs(db: ReadOnlyDb, projectId: string, slugs: string[]): Promise<ProjectRole[]> {
  if (slugs.length === 0) return [];
  return db.selectFrom('projectRoles').selectAll().where('projectId', '=', projectId).where('slug', 'in', slugs).execute();
}

export async function listRoles(db: ReadOnlyDb, projectId: string): Promise<ProjectRole[]> {
  return db.selectFrom('projectRoles').selectAll().where('projectId', '=', projectId).orderBy('slug').execute();
}

export async function isRoleAssigned(db: Executor, roleId: string): Promise<boolean> {
  const row = await db.selectFrom('projectMembershipRoles').select('id').where('customRoleId', '=', roleId).limit(1).executeTakeFirst();
  return row !== undefined;
}
