import type { Executor } from '../db/database.ts';
import { isUuid } from '../db/uuid.ts';
import type { IdentityAccessToken } from '../db/schema.ts';

export type NewIdentityToken = Pick<IdentityAccessToken, 'identityId' | 'authMethod' | 'name' | 'accessTokenTtl' | 'accessTokenMaxTtl' | 'accessTokenNumUsesLimit'> &
  Partial<Pick<IdentityAccessToken, 'identityUaClientSecretId'>>;

export async function insertIdentityToken(db: Executor, values: NewIdentityToken): Promise<IdentityAccessToken> {
  return db.insertInto('identityAccessTokens').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The token row together with the identity and its organization membership. */
export async function findIdentityTokenWithOwner(db: Executor, tokenId: string) {
  if (!isUuid(tokenId)) return undefined;
  return db
    .selectFrom('identityAccessTokens as t')
    .innerJoin('identities as i', 'i.id', 't.identityId')
    .leftJoin('identityOrgMemberships as m', 'm.identityId', 'i.id')
    .leftJoin('identityUniversalAuths as ua', 'ua.identityId', 'i.id')
    .leftJoin('identityKubernetesAuths as ka', 'ka.identityId', 'i.id')
    .leftJoin('identityJwtAuths as ja', 'ja.identityId', 'i.id')
    .leftJoin('clusterIdentities as ci', 'ci.identityId', 'i.id')
    .leftJoin('clusters as cl', (join) => join.onRef('cl.id', '=', 'ci.clusterId').onRef('cl.orgId', '=', 'm.orgId'))
    .select([
      't.id',
      't.identityId',
      't.authMethod',
      't.accessTokenTtl',
      't.accessTokenMaxTtl',
      't.accessTokenNumUses',
      't.accessTokenNumUsesLimit',
      't.accessTokenLastRenewedAt',
      't.isAccessTokenRevoked',
      't.createdAt',
      'i.name as identityName',
      'm.orgId',
      'm.role as orgRole',
      'ua.accessTokenTrustedIps',
      'ka.accessTokenTrustedIps as kubernetesAuthTrustedIps',
      'ja.accessTokenTrustedIps as jwtAuthTrustedIps',
      'cl.name as boundCluster',
    ])
    .where('t.id', '=', tokenId)
    .executeTakeFirst();
}

/**
 * Counts one use. With a use limit, the increment succeeds only while uses
 * remain, so concurrent requests cannot exceed the limit.
 */
export async function countTokenUse(db: Executor, tokenId: string, limit: number): Promise<boolean> {
  let query = db
    .updateTable('identityAccessTokens')
    .set((eb) => ({ accessTokenNumUses: eb('accessTokenNumUses', '+', 1), accessTokenLastUsedAt: new Date() }))
    .where('id', '=', tokenId)
    .where('isAccessTokenRevoked', '=', false);
  if (limit > 0) query = query.where('accessTokenNumUses', '<', limit);
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteIdentityToken(db: Executor, tokenId: string): Promise<void> {
  await db.deleteFrom('identityAccessTokens').where('id', '=', tokenId).execute();
}

export async function revokeIdentityToken(db: Executor, tokenId: string): Promise<boolean> {
  const result = await db
    .updateTable('identityAccessTokens')
    .set({ isAccessTokenRevoked: true, updatedAt: new Date() })
    .where('id', '=', tokenId)
    .where('isAccessTokenRevoked', '=', false)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function renewIdentityToken(db: Executor, tokenId: string, at: Date): Promise<void> {
  await db.updateTable('identityAccessTokens').set({ accessTokenLastRenewedAt: at, updatedAt: at }).where('id', '=', tokenId).execute();
}

/** Universal-auth tokens of an identity end with its universal auth configuration. */
export async function deleteIdentityTokensByMethod(db: Executor, identityId: string, authMethod: string): Promise<void> {
  await db.deleteFrom('identityAccessTokens').where('identityId', '=', identityId).where('authMethod', '=', authMethod).execute();
}

/** Revokes the access tokens a universal-auth client secret logged in (it was revoked). */
export async function revokeTokensOfClientSecret(db: Executor, clientSecretId: string): Promise<void> {
  await db
    .updateTable('identityAccessTokens')
    .set({ isAccessTokenRevoked: true, updatedAt: new Date() })
    .where('identityUaClientSecretId', '=', clientSecretId)
    .where('isAccessTokenRevoked', '=', false)
    .execute();
}
