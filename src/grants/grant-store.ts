import { isUuid } from '../db/uuid.ts';
import type { NamespaceGrant, ProjectClaim } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export interface Place {
  cluster: string;
  namespace: string;
}

export async function insertGrant(
  db: Executor,
  values: Place & { projectId: string; origin: NamespaceGrant['origin']; grantedByType: NamespaceGrant['grantedByType']; grantedById: string; grantedByName: string },
): Promise<NamespaceGrant> {
  return db.insertInto('namespaceGrants').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function listGrants(db: ReadOnlyDb, projectId: string): Promise<NamespaceGrant[]> {
  return db.selectFrom('namespaceGrants').selectAll().where('projectId', '=', projectId).orderBy('cluster').orderBy('namespace').execute();
}

export async function findGrant(db: Executor, projectId: string, id: string): Promise<NamespaceGrant | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('namespaceGrants').selectAll().where('projectId', '=', projectId).where('id', '=', id).executeTakeFirst();
}

export async function findGrantFor(db: Executor, projectId: string, place: Place): Promise<NamespaceGrant | undefined> {
  return db
    .selectFrom('namespaceGrants')
    .selectAll()
    .where('projectId', '=', projectId)
    .where('cluster', '=', place.cluster)
    .where('namespace', '=', place.namespace)
    .executeTakeFirst();
}

export async function deleteGrant(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('namespaceGrants').where('id', '=', id).execute();
}

/** The claim a SecretsProject (by organization, cluster, namespace and name) holds, locked for the rest of the transaction. */
export async function lockClaimOf(db: Executor, orgId: string, place: Place, name: string): Promise<ProjectClaim | undefined> {
  return db
    .selectFrom('projectClaims')
    .selectAll()
    .where('orgId', '=', orgId)
    .where('cluster', '=', place.cluster)
    .where('namespace', '=', place.namespace)
    .where('name', '=', name)
    .forUpdate()
    .executeTakeFirst();
}

/** The claim on the project by a SecretsProject of `cluster` (one per cluster). */
export async function findClaimOfProject(db: Executor, projectId: string, cluster: string): Promise<ProjectClaim | undefined> {
  return db.selectFrom('projectClaims').selectAll().where('projectId', '=', projectId).where('cluster', '=', cluster).executeTakeFirst();
}

export async function insertClaim(db: Executor, values: Omit<ProjectClaim, 'id' | 'claimedAt'>): Promise<void> {
  await db.insertInto('projectClaims').values(values).execute();
}

export async function deleteClaim(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('projectClaims').where('id', '=', id).execute();
}

/** A claim with the ids of the grants of its own namespace and of the using one (null where there is none). */
export type ClaimWithGrants = NonNullable<Awaited<ReturnType<typeof findClaimWithGrants>>>;

/**
 * What a resource in `using` may use of the project a SecretsProject
 * declares: its claim (matched by uid), the grant of the declaring namespace,
 * and the grant of the using namespace. One statement.
 */
export async function findClaimWithGrants(db: ReadOnlyDb, orgId: string, declaring: Place & { name: string; uid: string }, using: Place) {
  return db
    .selectFrom('projectClaims as c')
    .leftJoin('namespaceGrants as own', (join) =>
      join.onRef('own.projectId', '=', 'c.projectId').onRef('own.cluster', '=', 'c.cluster').onRef('own.namespace', '=', 'c.namespace'),
    )
    .leftJoin('namespaceGrants as used', (join) =>
      join.onRef('used.projectId', '=', 'c.projectId').on('used.cluster', '=', using.cluster).on('used.namespace', '=', using.namespace),
    )
    .innerJoin('projects as p', 'p.id', 'c.projectId')
    .select(['c.projectId', 'p.slug', 'c.createdProject', 'own.id as ownGrantId', 'used.id as usedGrantId'])
    .where('c.orgId', '=', orgId)
    .where('c.cluster', '=', declaring.cluster)
    .where('c.namespace', '=', declaring.namespace)
    .where('c.name', '=', declaring.name)
    .where('c.resourceUid', '=', declaring.uid)
    .executeTakeFirst();
}

/** The claim on the project with this slug in the organization, by claimants of `cluster`. */
export async function findClaimByProjectSlug(db: ReadOnlyDb, orgId: string, cluster: string, slug: string): Promise<ProjectClaim | undefined> {
  return db
    .selectFrom('projectClaims as c')
    .innerJoin('projects as p', 'p.id', 'c.projectId')
    .selectAll('c')
    .where('c.orgId', '=', orgId)
    .where('p.orgId', '=', orgId)
    .where('p.slug', '=', slug)
    .where('c.cluster', '=', cluster)
    .executeTakeFirst();
}
