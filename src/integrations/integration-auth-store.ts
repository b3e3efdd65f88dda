import { isUuid } from '../db/uuid.ts';
import type { IntegrationAuth } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

/** The sealed credential columns; null clears one. */
export interface SealedCredentials {
  encryptedAccess: Buffer | null;
  encryptedAccessId: Buffer | null;
  encryptedRefresh: Buffer | null;
  encryptedAwsAssumeIamRoleArn: Buffer | null;
}

export async function insertIntegrationAuth(
  db: Executor,
  values: { projectId: string; integration: string; url?: string | null; namespace?: string | null },
): Promise<IntegrationAuth> {
  return db.insertInto('integrationAuths').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function setIntegrationAuthCredentials(db: Executor, id: string, sealed: SealedCredentials): Promise<IntegrationAuth> {
  return db.updateTable('integrationAuths').set(sealed).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function findIntegrationAuthById(db: ReadOnlyDb, id: string): Promise<IntegrationAuth | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('integrationAuths').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A project's integration auths, oldest first; only those of one type when `integration` is given. */
export async function listIntegrationAuthsOfProject(db: ReadOnlyDb, projectId: string, integration?: string): Promise<IntegrationAuth[]> {
  let query = db.selectFrom('integrationAuths').selectAll().where('projectId', '=', projectId);
  if (integration !== undefined) query = query.where('integration', '=', integration);
  return query.orderBy('createdAt').orderBy('id').execute();
}

/** Deletes the auths; their integrations go with them (foreign key cascade). */
export async function deleteIntegrationAuths(db: Executor, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('integrationAuths').where('id', 'in', ids).execute();
}
