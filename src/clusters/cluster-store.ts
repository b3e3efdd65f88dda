import { isUuid } from '../db/uuid.ts';
import type { Cluster } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function insertCluster(db: Executor, values: { orgId: string; name: string; description: string }): Promise<Cluster> {
  return db.insertInto('clusters').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function listClusters(db: ReadOnlyDb, orgId: string): Promise<Cluster[]> {
  return db.selectFrom('clusters').selectAll().where('orgId', '=', orgId).orderBy('name').execute();
}

export async function findCluster(db: ReadOnlyDb, orgId: string, id: string): Promise<Cluster | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('clusters').selectAll().where('orgId', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function findClusterByName(db: Executor, orgId: string, name: string): Promise<Cluster | undefined> {
  return db.selectFrom('clusters').selectAll().where('orgId', '=', orgId).where('name', '=', name).executeTakeFirst();
}

export async function deleteCluster(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('clusters').where('id', '=', id).execute();
}

/** The identities bound to each of these clusters, with their names. */
export async function listBoundIdentities(db: ReadOnlyDb, clusterIds: string[]) {
  if (clusterIds.length === 0) return [];
  return db
    .selectFrom('clusterIdentities as b')
    .innerJoin('identities as i', 'i.id', 'b.identityId')
    .select(['b.clusterId', 'b.identityId', 'i.name', 'i.authMethod', 'b.createdAt'])
    .where('b.clusterId', 'in', clusterIds)
    .orderBy('i.name')
    .execute();
}

export async function findBindingOfIdentity(db: Executor, identityId: string) {
  return db.selectFrom('clusterIdentities').selectAll().where('identityId', '=', identityId).executeTakeFirst();
}

export async function insertBinding(db: Executor, values: { identityId: string; clusterId: string }): Promise<void> {
  await db.insertInto('clusterIdentities').values(values).execute();
}

export async function deleteBinding(db: Executor, clusterId: string, identityId: string): Promise<boolean> {
  const deleted = await db.deleteFrom('clusterIdentities').where('clusterId', '=', clusterId).where('identityId', '=', identityId).executeTakeFirst();
  return Number(deleted.numDeletedRows) > 0;
}
