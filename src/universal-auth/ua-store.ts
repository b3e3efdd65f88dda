import type { Executor } from '../db/database.ts';
import { isUuid } from '../db/uuid.ts';
import type { IdentityUaClientSecret, IdentityUniversalAuth } from '../db/schema.ts';

export type UniversalAuthValues = Pick<
  IdentityUniversalAuth,
  'accessTokenTtl' | 'accessTokenMaxTtl' | 'accessTokenNumUsesLimit' | 'clientSecretTrustedIps' | 'accessTokenTrustedIps'
>;

function serialized(values: Partial<UniversalAuthValues>) {
  const { clientSecretTrustedIps, accessTokenTrustedIps, ...rest } = values;
  return {
    ...rest,
    ...(clientSecretTrustedIps ? { clientSecretTrustedIps: JSON.stringify(clientSecretTrustedIps) } : {}),
    ...(accessTokenTrustedIps ? { accessTokenTrustedIps: JSON.stringify(accessTokenTrustedIps) } : {}),
  };
}

export async function insertUniversalAuth(db: Executor, identityId: string, values: UniversalAuthValues): Promise<IdentityUniversalAuth> {
  return db
    .insertInto('identityUniversalAuths')
    .values({ identityId, ...(serialized(values) as Required<ReturnType<typeof serialized>>) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findUniversalAuth(db: Executor, identityId: string): Promise<IdentityUniversalAuth | undefined> {
  return db.selectFrom('identityUniversalAuths').selectAll().where('identityId', '=', identityId).executeTakeFirst();
}

export async function updateUniversalAuth(db: Executor, id: string, changes: Partial<UniversalAuthValues>): Promise<IdentityUniversalAuth> {
  return db
    .updateTable('identityUniversalAuths')
    .set({ ...serialized(changes), updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteUniversalAuth(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('identityUniversalAuths').where('id', '=', id).execute();
}

export type NewClientSecret = Pick<
  IdentityUaClientSecret,
  'identityUaId' | 'description' | 'clientSecretPrefix' | 'clientSecretDigest' | 'clientSecretNumUsesLimit' | 'clientSecretTtl'
>;

export async function insertClientSecret(db: Executor, values: NewClientSecret): Promise<IdentityUaClientSecret> {
  return db.insertInto('identityUaClientSecrets').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function listActiveClientSecrets(db: Executor, identityUaId: string): Promise<IdentityUaClientSecret[]> {
  return db
    .selectFrom('identityUaClientSecrets')
    .selectAll()
    .where('identityUaId', '=', identityUaId)
    .where('isClientSecretRevoked', '=', false)
    .orderBy('createdAt', 'desc')
    .orderBy('id')
    .execute();
}

export async function findClientSecret(db: Executor, identityUaId: string, id: string): Promise<IdentityUaClientSecret | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('identityUaClientSecrets').selectAll().where('identityUaId', '=', identityUaId).where('id', '=', id).executeTakeFirst();
}

export async function revokeClientSecret(db: Executor, id: string): Promise<IdentityUaClientSecret> {
  return db
    .updateTable('identityUaClientSecrets')
    .set({ isClientSecretRevoked: true, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The client secret with this digest, with its universal auth and the identity's organization. */
export async function findClientSecretByDigest(db: Executor, digest: Buffer) {
  return db
    .selectFrom('identityUaClientSecrets as s')
    .innerJoin('identityUniversalAuths as ua', 'ua.id', 's.identityUaId')
    .innerJoin('identities as i', 'i.id', 'ua.identityId')
    .innerJoin('identityOrgMemberships as m', 'm.identityId', 'i.id')
    .select([
      's.id',
      's.clientSecretNumUses',
      's.clientSecretNumUsesLimit',
      's.clientSecretTtl',
      's.isClientSecretRevoked',
      's.createdAt',
      'ua.id as universalAuthId',
      'ua.clientId',
      'ua.identityId',
      'ua.accessTokenTtl',
      'ua.accessTokenMaxTtl',
      'ua.accessTokenNumUsesLimit',
      'ua.clientSecretTrustedIps',
      'i.name as identityName',
      'm.orgId',
      'm.role as orgRole',
    ])
    .where('s.clientSecretDigest', '=', digest)
    .executeTakeFirst();
}

/**
 * Counts one login against the secret; succeeds only while it is unrevoked,
 * within its TTL and under its use limit, so concurrent logins never exceed it.
 */
export async function claimClientSecretUse(db: Executor, id: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('identityUaClientSecrets')
    .set((eb) => ({ clientSecretNumUses: eb('clientSecretNumUses', '+', 1), clientSecretLastUsedAt: now, updatedAt: now }))
    .where('id', '=', id)
    .where('isClientSecretRevoked', '=', false)
    .where((eb) => eb.or([eb('clientSecretNumUsesLimit', '=', 0), eb('clientSecretNumUses', '<', eb.ref('clientSecretNumUsesLimit'))]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The organization of the identity whose universal auth has this client id (none when unknown). */
export async function orgIdsOfClientId(db: Executor, clientId: string): Promise<string[]> {
  if (!isUuid(clientId)) return [];
  const rows = await db
    .selectFrom('identityUniversalAuths as ua')
    .innerJoin('identityOrgMemberships as m', 'm.identityId', 'ua.identityId')
    .select('m.orgId')
    .where('ua.clientId', '=', clientId)
    .execute();
  return rows.map((row) => row.orgId);
}
