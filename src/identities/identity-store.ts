import { isUuid } from '../db/uuid.ts';
import type { Identity } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function insertIdentity(db: Executor, values: { name: string; authMethod: string | null }): Promise<Identity> {
  return db.insertInto('identities').values(values).returningAll().executeTakeFirstOrThrow();
}

function selectOrgIdentities(db: ReadOnlyDb) {
  return db
    .selectFrom('identities as i')
    .innerJoin('identityOrgMemberships as m', 'm.identityId', 'i.id')
    .select([
      'm.id as membershipId',
      'm.orgId',
      'm.role',
      'm.createdAt as membershipCreatedAt',
      'm.updatedAt as membershipUpdatedAt',
      'i.id',
      'i.name',
      'i.authMethod',
      'i.createdAt',
      'i.updatedAt',
    ]);
}

export type OrgIdentity = NonNullable<Awaited<ReturnType<typeof findOrgIdentity>>>;

/** The identity with its membership in `orgId`; undefined when it belongs to no (or another) organization. */
export async function findOrgIdentity(db: Executor, orgId: string, identityId: string) {
  if (!isUuid(identityId)) return undefined;
  return selectOrgIdentities(db).where('m.orgId', '=', orgId).where('i.id', '=', identityId).executeTakeFirst();
}

/** Like findOrgIdentity, whatever the organization (callers compare it with the actor's). */
export async function findIdentityWithOrg(db: ReadOnlyDb, identityId: string) {
  if (!isUuid(identityId)) return undefined;
  return selectOrgIdentities(db).where('i.id', '=', identityId).executeTakeFirst();
}

export async function listOrgIdentities(db: ReadOnlyDb, orgId: string) {
  return selectOrgIdentities(db).where('m.orgId', '=', orgId).orderBy('i.name').orderBy('i.id').execute();
}

export async function updateIdentity(db: Executor, id: string, changes: { name?: string; authMethod?: string | null }): Promise<Identity> {
  return db
    .updateTable('identities')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateIdentityOrgRole(db: Executor, identityId: string, role: string): Promise<void> {
  await db.updateTable('identityOrgMemberships').set({ role, updatedAt: new Date() }).where('identityId', '=', identityId).execute();
}

export async function deleteIdentity(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('identities').where('id', '=', id).execute();
}

/** The organization's service identity of this name (authMethod `service`), with its org role. */
export async function findServiceIdentity(db: ReadOnlyDb, orgId: string, name: string): Promise<{ id: string; name: string; role: string } | undefined> {
  return db
    .selectFrom('identities as i')
    .innerJoin('identityOrgMemberships as m', 'm.identityId', 'i.id')
    .select(['i.id', 'i.name', 'm.role'])
    .where('m.orgId', '=', orgId)
    .where('i.name', '=', name)
    .where('i.authMethod', '=', 'service')
    .executeTakeFirst();
}
