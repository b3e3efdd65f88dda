import { isUuid } from '../db/uuid.ts';
import type { Organization } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function insertOrganization(db: Executor, values: { name: string; slug: string }): Promise<Organization> {
  return db.insertInto('organizations').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function listOrganizationIds(db: Executor): Promise<string[]> {
  return (await db.selectFrom('organizations').select('id').orderBy('id').execute()).map((org) => org.id);
}

/** The first `limit` organizations (oldest first), of this slug when one is given. */
export async function listOrganizations(db: ReadOnlyDb, options: { slug?: string; limit: number }): Promise<Organization[]> {
  let query = db.selectFrom('organizations').selectAll().orderBy('createdAt').limit(options.limit);
  if (options.slug) query = query.where('slug', '=', options.slug);
  return query.execute();
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

export async function findUserOrgMembership(db: Executor, orgId: string, userId: string) {
  if (!isUuid(orgId) || !isUuid(userId)) return undefined;
  return db.selectFrom('orgMemberships').selectAll().where('orgId', '=', orgId).where('userId', '=', userId).executeTakeFirst();
}

export async function inviteUserToOrg(
  db: Executor,
  values: { orgId: string; userId: string; role: string; inviteEmail: string; inviteTokenDigest: Buffer; inviteExpiresAt: Date },
) {
  return db
    .insertInto('orgMemberships')
    .values({ ...values, status: 'invited' })
    .onConflict((conflict) =>
      conflict.constraint('org_memberships_user_key').doUpdateSet((eb) => ({
        role: eb.ref('excluded.role'),
        inviteTokenDigest: eb.ref('excluded.inviteTokenDigest'),
        inviteExpiresAt: eb.ref('excluded.inviteExpiresAt'),
        updatedAt: new Date(),
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The pending invite with this token digest, with the invited user. */
export async function findInviteByDigest(db: ReadOnlyDb, digest: Buffer) {
  return db
    .selectFrom('orgMemberships as m')
    .innerJoin('users as u', 'u.id', 'm.userId')
    .select(['m.id', 'm.orgId', 'm.userId', 'm.role', 'm.inviteExpiresAt', 'm.status', 'u.email', 'u.passwordHash'])
    .where('m.inviteTokenDigest', '=', digest)
    .where('m.status', '=', 'invited')
    .executeTakeFirst();
}

export async function acceptInvite(db: Executor, membershipId: string): Promise<void> {
  await db
    .updateTable('orgMemberships')
    .set({ status: 'accepted', inviteTokenDigest: null, inviteExpiresAt: null, updatedAt: new Date() })
    .where('id', '=', membershipId)
    .execute();
}

export async function setUserOrgRole(db: Executor, membershipId: string, role: string): Promise<void> {
  await db.updateTable('orgMemberships').set({ role, updatedAt: new Date() }).where('id', '=', membershipId).execute();
}

/** The organizations a user has joined, the first joined first. */
export async function acceptedOrgIdsOfUser(db: Executor, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('orgMemberships')
    .select('orgId')
    .where('userId', '=', userId)
    .where('status', '=', 'accepted')
    .orderBy('createdAt')
    .orderBy('orgId')
    .execute();
  return rows.map((row) => row.orgId);
}

/** The organizations a user has joined (accepted invites), by name. */
export async function acceptedOrgsOfUser(db: ReadOnlyDb, userId: string): Promise<Organization[]> {
  if (!isUuid(userId)) return [];
  return db
    .selectFrom('organizations as o')
    .innerJoin('orgMemberships as m', 'm.orgId', 'o.id')
    .selectAll('o')
    .where('m.userId', '=', userId)
    .where('m.status', '=', 'accepted')
    .orderBy('o.name')
    .orderBy('o.id')
    .execute();
}

export async function listOrgUserMemberships(db: ReadOnlyDb, orgId: string) {
  return db
    .selectFrom('orgMemberships as m')
    .innerJoin('users as u', 'u.id', 'm.userId')
    .select(['m.id', 'm.orgId', 'm.userId', 'm.role', 'm.status', 'm.inviteEmail', 'm.createdAt', 'm.updatedAt', 'u.email', 'u.username', 'u.firstName', 'u.lastName'])
    .where('m.orgId', '=', orgId)
    .orderBy('u.firstName')
    .orderBy('u.lastName')
    .orderBy('u.email')
    .execute();
}
