import type { Executor } from '../db/database.ts';
import { isUuid } from '../db/uuid.ts';
import type { Environment, Integration } from '../db/schema.ts';

/** An integration with its source environment's slug and name, and the project it belongs to. */
export type IntegrationRow = Integration & { envSlug: string; envName: string; projectId: string };

/** The columns a create or an update may set. */
export interface IntegrationValues {
  envId: string;
  isActive: boolean;
  secretPath: string;
  url: string | null;
  app: string | null;
  appId: string | null;
  targetEnvironment: string | null;
  targetEnvironmentId: string | null;
  targetService: string | null;
  targetServiceId: string | null;
  owner: string | null;
  path: string | null;
  region: string | null;
  scope: string | null;
  metadata: unknown;
}

function selectIntegrationRows(db: Executor) {
  return db
    .selectFrom('integrations')
    .innerJoin('projectEnvironments', 'projectEnvironments.id', 'integrations.envId')
    .selectAll('integrations')
    .select(['projectEnvironments.slug as envSlug', 'projectEnvironments.name as envName', 'projectEnvironments.projectId as projectId']);
}

export async function findIntegrationById(db: Executor, id: string): Promise<IntegrationRow | undefined> {
  if (!isUuid(id)) return undefined;
  return selectIntegrationRows(db).where('integrations.id', '=', id).executeTakeFirst();
}

/** The record an Integration resource keeps: by its cluster and `<namespace>/<name>`. */
export async function findIntegrationByManagedBy(db: Executor, cluster: string, managedBy: string): Promise<IntegrationRow | undefined> {
  return selectIntegrationRows(db).where('integrations.cluster', '=', cluster).where('integrations.managedBy', '=', managedBy).executeTakeFirst();
}

export async function listIntegrationsOfProject(db: Executor, projectId: string): Promise<IntegrationRow[]> {
  return selectIntegrationRows(db).where('projectEnvironments.projectId', '=', projectId).orderBy('integrations.createdAt').orderBy('integrations.id').execute();
}

export async function listIntegrationsOfAuths(db: Executor, authIds: string[]): Promise<IntegrationRow[]> {
  if (authIds.length === 0) return [];
  return selectIntegrationRows(db).where('integrations.integrationAuthId', 'in', authIds).orderBy('integrations.id').execute();
}

/** Inserts an integration whose source environment is `environment`; returns the row as the finds above do. */
export async function insertIntegration(
  db: Executor,
  environment: Environment,
  values: Omit<IntegrationValues, 'envId'> & { integrationAuthId: string; integration: string; managedBy?: string | null; cluster?: string | null },
): Promise<IntegrationRow> {
  const { metadata, ...rest } = values;
  const row = await db
    .insertInto('integrations')
    .values({ ...rest, envId: environment.id, metadata: JSON.stringify(metadata ?? {}) })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...row, envSlug: environment.slug, envName: environment.name, projectId: environment.projectId };
}

export async function updateIntegration(db: Executor, id: string, changes: Partial<IntegrationValues> & { integrationAuthId?: string }): Promise<void> {
  const { metadata, ...rest } = changes;
  await db
    .updateTable('integrations')
    .set({ ...rest, ...(metadata === undefined ? {} : { metadata: JSON.stringify(metadata) }), updatedAt: new Date() })
    .where('id', '=', id)
    .execute();
}

export async function deleteIntegration(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('integrations').where('id', '=', id).execute();
}

/** Stores the outcome of a sync; leaves `updatedAt` alone (the record's settings did not change). */
export async function setIntegrationSyncResult(
  db: Executor,
  id: string,
  result: { isSynced: boolean; syncMessage: string | null; syncedRevision: number | null; lastUsed: Date },
): Promise<void> {
  // A sync that changes nothing (same outcome, same revision) writes nothing.
  await db
    .updateTable('integrations')
    .set(result)
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('isSynced', 'is distinct from', result.isSynced),
        eb('syncMessage', 'is distinct from', result.syncMessage),
        eb('syncedRevision', 'is distinct from', result.syncedRevision),
      ]),
    )
    .execute();
}
