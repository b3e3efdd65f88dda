import type { Executor } from '../db/database.ts';
import { isUuid } from '../db/errors.ts';
import type { Organization } from '../db/schema.ts';

export async function insertOrganization(db: Executor, values: { name: string; slug: string }): Promise<Organization> {
  return db.insertInto('organizations').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function findOrganization(db: Executor, id: string): Promise<Organization | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertUserOrgMembership(
  db: Executor,
  values: { orgId: string; userId: string; role: string; status: string; inviteEmail: string | null },
): Promise<void> {
  await db.insertInto('orgMemberships').values(values).execute();
}

export async function insertIdentityOrgMembership(db: Executor, values: { orgId: string; identityId: string; role: string }): Promise<void> {
  await db.insertInto('identityOrgMemberships').values(values).execute();
}
