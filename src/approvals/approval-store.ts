import { sql } from 'kysely';
import { isUuid } from '../db/uuid.ts';
import type { SecretApprovalPolicy, SecretApprovalRequest, SecretApprovalRequestSecret } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export type NewPolicy = Pick<SecretApprovalPolicy, 'projectId' | 'environmentId' | 'name' | 'secretPath' | 'approvals' | 'enforcementLevel'>;
export type PolicyChanges = Partial<Pick<SecretApprovalPolicy, 'name' | 'secretPath' | 'approvals' | 'enforcementLevel'>>;
export type NewRequestSecret = Omit<SecretApprovalRequestSecret, 'requestId' | 'createdAt'>;
export type RequestStatus = SecretApprovalRequest['status'];
export type ReviewStatus = 'approved' | 'rejected';

export async function insertPolicy(db: Executor, values: NewPolicy): Promise<SecretApprovalPolicy> {
  return db.insertInto('secretApprovalPolicies').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updatePolicy(db: Executor, id: string, changes: PolicyChanges): Promise<SecretApprovalPolicy> {
  return db
    .updateTable('secretApprovalPolicies')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deletePolicy(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('secretApprovalPolicies').where('id', '=', id).execute();
}

export async function findPolicy(db: ReadOnlyDb, id: string): Promise<SecretApprovalPolicy | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('secretApprovalPolicies').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listPolicies(db: ReadOnlyDb, projectId: string, environmentId?: string): Promise<SecretApprovalPolicy[]> {
  let query = db.selectFrom('secretApprovalPolicies').selectAll().where('projectId', '=', projectId);
  if (environmentId) query = query.where('environmentId', '=', environmentId);
  return query.orderBy('createdAt').orderBy('id').execute();
}

export async function setPolicyApprovers(db: Executor, policyId: string, userIds: readonly string[]): Promise<void> {
  await db.deleteFrom('secretApprovalPolicyApprovers').where('policyId', '=', policyId).execute();
  if (userIds.length === 0) return;
  await db
    .insertInto('secretApprovalPolicyApprovers')
    .values(userIds.map((userId) => ({ policyId, userId })))
    .execute();
}

/** Each policy's approver user ids. */
export async function listPolicyApprovers(db: ReadOnlyDb, policyIds: readonly string[]): Promise<Map<string, string[]>> {
  const approvers = new Map<string, string[]>(policyIds.map((id) => [id, []]));
  if (policyIds.length === 0) return approvers;
  const rows = await db.selectFrom('secretApprovalPolicyApprovers').selectAll().where('policyId', 'in', policyIds).orderBy('userId').execute();
  for (const row of rows) approvers.get(row.policyId)!.push(row.userId);
  return approvers;
}

/** Of these users, the ones that are members of the project. */
export async function listProjectMemberUsers(db: Executor, projectId: string, userIds: readonly string[]): Promise<string[]> {
  const ids = userIds.filter(isUuid);
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('projectMemberships').select('userId').where('projectId', '=', projectId).where('userId', 'in', ids).execute();
  return rows.map((row) => row.userId);
}

export async function insertRequest(
  db: Executor,
  values: Pick<SecretApprovalRequest, 'projectId' | 'policyId' | 'folderId' | 'slug' | 'committerUserId'>,
  secrets: NewRequestSecret[],
): Promise<SecretApprovalRequest> {
  const request = await db.insertInto('secretApprovalRequests').values(values).returningAll().executeTakeFirstOrThrow();
  await db
    .insertInto('secretApprovalRequestSecrets')
    .values(secrets.map((secret) => ({ ...secret, requestId: request.id })))
    .execute();
  return request;
}

export async function findRequest(db: ReadOnlyDb, id: string, options: { lock?: boolean } = {}): Promise<SecretApprovalRequest | undefined> {
  if (!isUuid(id)) return undefined;
  let query = db.selectFrom('secretApprovalRequests').selectAll().where('id', '=', id);
  if (options.lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function listRequests(
  db: ReadOnlyDb,
  projectId: string,
  filter: { status?: RequestStatus; environmentId?: string; committer?: string; limit: number; offset: number },
): Promise<SecretApprovalRequest[]> {
  // a committer that is not a user id made no request
  if (filter.committer && !isUuid(filter.committer)) return [];
  let query = db.selectFrom('secretApprovalRequests').selectAll().where('projectId', '=', projectId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.environmentId) {
    const environmentId = filter.environmentId;
    query = query.where('folderId', 'in', (eb) => eb.selectFrom('secretFolders').select('id').where('envId', '=', environmentId));
  }
  if (filter.committer) query = query.where('committerUserId', '=', filter.committer);
  return query.orderBy('createdAt', 'desc').orderBy('id').limit(filter.limit).offset(filter.offset).execute();
}

export async function countRequests(db: ReadOnlyDb, projectId: string): Promise<{ open: number; closed: number }> {
  const rows = await db
    .selectFrom('secretApprovalRequests')
    .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
    .where('projectId', '=', projectId)
    .groupBy('status')
    .execute();
  const count = (status: string) => Number(rows.find((row) => row.status === status)?.count ?? 0);
  return { open: count('open'), closed: count('closed') };
}

export async function listRequestSecrets(db: ReadOnlyDb, requestId: string): Promise<SecretApprovalRequestSecret[]> {
  return db.selectFrom('secretApprovalRequestSecrets').selectAll().where('requestId', '=', requestId).orderBy('secretKey').execute();
}

export async function updateRequest(
  db: Executor,
  id: string,
  changes: Partial<Pick<SecretApprovalRequest, 'status' | 'hasMerged' | 'statusChangedByUserId' | 'bypassReason'>> & { conflicts?: string; merged?: true },
): Promise<SecretApprovalRequest> {
  const { merged, ...columns } = changes;
  return db
    .updateTable('secretApprovalRequests')
    .set({ ...columns, ...(merged ? { mergedXact: sql<number>`txid_current()` } : {}), updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function upsertReview(db: Executor, requestId: string, reviewerUserId: string, status: ReviewStatus) {
  return db
    .insertInto('secretApprovalRequestReviews')
    .values({ requestId, reviewerUserId, status })
    .onConflict((oc) => oc.columns(['requestId', 'reviewerUserId']).doUpdateSet({ status, updatedAt: new Date() }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listReviews(db: ReadOnlyDb, requestId: string) {
  return db.selectFrom('secretApprovalRequestReviews').selectAll().where('requestId', '=', requestId).orderBy('createdAt').execute();
}

/** The revision a merging transaction committed at (its newest change row), or null. */
export async function findRevisionOfXact(db: ReadOnlyDb, xact: number | null): Promise<number | null> {
  if (xact === null) return null;
  const row = await db
    .selectFrom('changeLog')
    .select((eb) => eb.fn.max('revision').as('revision'))
    .where('xact', '=', xact)
    .executeTakeFirst();
  return row?.revision == null ? null : Number(row.revision);
}
