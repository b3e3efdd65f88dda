import type { Executor } from '../db/database.ts';
import type { IdentityJwtAuth } from '../db/schema.ts';
import { isUuid } from '../db/uuid.ts';

/** A configuration's values: its row without the keys and times the database sets. */
export type JwtAuthValues = Omit<IdentityJwtAuth, 'id' | 'identityId' | 'createdAt' | 'updatedAt'>;

/** The changes as columns: the JSON ones as text. */
function columns(changes: Partial<JwtAuthValues>) {
  const { publicKeys, boundClaims, accessTokenTrustedIps, ...plain } = changes;
  return {
    ...plain,
    ...(publicKeys ? { publicKeys: JSON.stringify(publicKeys) } : {}),
    ...(boundClaims ? { boundClaims: JSON.stringify(boundClaims) } : {}),
    ...(accessTokenTrustedIps ? { accessTokenTrustedIps: JSON.stringify(accessTokenTrustedIps) } : {}),
  };
}

export async function insertJwtAuth(db: Executor, identityId: string, values: JwtAuthValues): Promise<IdentityJwtAuth> {
  return db
    .insertInto('identityJwtAuths')
    .values({ ...(columns(values) as Required<ReturnType<typeof columns>>), identityId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findJwtAuth(db: Executor, identityId: string): Promise<IdentityJwtAuth | undefined> {
  if (!isUuid(identityId)) return undefined;
  return db.selectFrom('identityJwtAuths').selectAll().where('identityId', '=', identityId).executeTakeFirst();
}

export async function updateJwtAuth(db: Executor, id: string, changes: Partial<JwtAuthValues>): Promise<IdentityJwtAuth> {
  return db
    .updateTable('identityJwtAuths')
    .set({ ...columns(changes), updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteJwtAuth(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('identityJwtAuths').where('id', '=', id).execute();
}

/** The configuration with its identity's name and organization membership: what a login needs. */
export async function findJwtAuthForLogin(db: Executor, identityId: string) {
  if (!isUuid(identityId)) return undefined;
  return db
    .selectFrom('identityJwtAuths as j')
    .innerJoin('identities as i', 'i.id', 'j.identityId')
    .innerJoin('identityOrgMemberships as m', 'm.identityId', 'i.id')
    .selectAll('j')
    .select(['i.name as identityName', 'm.orgId', 'm.role as orgRole'])
    .where('j.identityId', '=', identityId)
    .executeTakeFirst();
}
