import type { IdentityAdditionalPrivilege } from '../db/schema.ts';
import type { PermissionRule } from '../permissions/permission-rules.ts';
import type { TemporaryAccess } from '../permissions/temporary-access.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export interface PrivilegeValues extends TemporaryAccess {
  slug: string;
  permissions: PermissionRule[];
}

export async function insertPrivilege(db: Executor, membershipId: string, values: PrivilegeValues): Promise<IdentityAdditionalPrivilege> {
  return db
    .insertInto('identityProjectAdditionalPrivileges')
    .values({ ...values, identityProjectMembershipId: membershipId, permissions: JSON.stringify(values.permissions) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updatePrivilege(db: Executor, id: string, changes: Partial<PrivilegeValues>): Promise<IdentityAdditionalPrivilege> {
  const { permissions, ...rest } = changes;
  return db
    .updateTable('identityProjectAdditionalPrivileges')
    .set({ ...rest, ...(permissions ? { permissions: JSON.stringify(permissions) } : {}), updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deletePrivilege(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('identityProjectAdditionalPrivileges').where('id', '=', id).execute();
}

export async function findPrivilege(db: ReadOnlyDb, membershipId: string, slug: string): Promise<IdentityAdditionalPrivilege | undefined> {
  return db
    .selectFrom('identityProjectAdditionalPrivileges')
    .selectAll()
    .where('identityProjectMembershipId', '=', membershipId)
    .where('slug', '=', slug)
    .executeTakeFirst();
}

export async function listPrivileges(db: ReadOnlyDb, membershipId: string): Promise<IdentityAdditionalPrivilege[]> {
  return db.selectFrom('identityProjectAdditionalPrivileges').selectAll().where('identityProjectMembershipId', '=', membershipId).orderBy('slug').execute();
}
