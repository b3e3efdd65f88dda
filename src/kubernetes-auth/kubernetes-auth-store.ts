import type { Executor } from '../db/database.ts';
import type { IdentityKubernetesAuth } from '../db/schema.ts';
import { isUuid } from '../db/uuid.ts';

/** A configuration's values: its row without the keys and times the database sets. */
export type KubernetesAuthValues = Omit<IdentityKubernetesAuth, 'id' | 'identityId' | 'createdAt' | 'updatedAt'>;

/** The changes as columns: trusted IPs as JSON text. */
function columns(changes: Partial<KubernetesAuthValues>) {
  const { accessTokenTrustedIps, ...plain } = changes;
  return { ...plain, ...(accessTokenTrustedIps ? { accessTokenTrustedIps: JSON.stringify(accessTokenTrustedIps) } : {}) };
}

export async function insertKubernetesAuth(db: Executor, identityId: string, values: KubernetesAuthValues): Promise<IdentityKubernetesAuth> {
  return db
    .insertInto('identityKubernetesAuths')
    .values({ ...(columns(values) as Required<ReturnType<typeof columns>>), identityId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findKubernetesAuth(db: Executor, identityId: string): Promise<IdentityKubernetesAuth | undefined> {
  if (!isUuid(identityId)) return undefined;
  return db.selectFrom('identityKubernetesAuths').selectAll().where('identityId', '=', identityId).executeTakeFirst();
}

export async function updateKubernetesAuth(db: Executor, id: string, changes: Partial<KubernetesAuthValues>): Promise<IdentityKubernetesAuth> {
  return db
    .updateTable('identityKubernetesAuths')
    .set({ ...columns(changes), updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteKubernetesAuth(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('identityKubernetesAuths').where('id', '=', id).execute();
}

/** The configuration with its identity's name and organization membership: what a login needs. */
export async function findKubernetesAuthForLogin(db: Executor, identityId: string) {
  if (!isUuid(identityId)) return undefined;
  return db
    .selectFrom('identityKubernetesAuths as k')
    .innerJoin('identities as i', 'i.id', 'k.identityId')
    .innerJoin('identityOrgMemberships as m', 'm.identityId', 'i.id')
    .selectAll('k')
    .select(['i.name as identityName', 'm.orgId', 'm.role as orgRole'])
    .where('k.identityId', '=', identityId)
    .executeTakeFirst();
}

/** Every sealed token reviewer JWT: `coffer rotate-key` re-seals them. */
export async function listSealedReviewerJwts(db: Executor): Promise<{ id: string; identityId: string; encryptedTokenReviewerJwt: Buffer }[]> {
  const rows = await db
    .selectFrom('identityKubernetesAuths')
    .select(['id', 'identityId', 'encryptedTokenReviewerJwt'])
    .where('encryptedTokenReviewerJwt', 'is not', null)
    .execute();
  return rows as { id: string; identityId: string; encryptedTokenReviewerJwt: Buffer }[];
}

export async function setSealedReviewerJwt(db: Executor, id: string, sealed: Buffer): Promise<void> {
  await db.updateTable('identityKubernetesAuths').set({ encryptedTokenReviewerJwt: sealed }).where('id', '=', id).execute();
}
