import { type QueryCreator, type RawBuilder, sql } from 'kysely';
import { compiledSelect } from '../db/compiled-select.ts';
import { isUuid } from '../db/uuid.ts';
import type { DB, Environment, Integration } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';
import { type Statement, statementOf } from '../db/statements.ts';
import type { TargetKeys } from './target-keys.ts';
import { targetKeysWrite } from './target-keys-store.ts';
import type { WorkloadRef } from './workload-rollout.ts';

/** An integration with its source environment's slug and name, and the project it belongs to. */
export type IntegrationRow = Integration & { envSlug: string; envName: string; projectId: string };

/** The columns a create or an update may set. */
export type IntegrationValues = Pick<
  Integration,
  | 'envId'
  | 'isActive'
  | 'secretPath'
  | 'url'
  | 'app'
  | 'appId'
  | 'targetEnvironment'
  | 'targetEnvironmentId'
  | 'targetService'
  | 'targetServiceId'
  | 'owner'
  | 'path'
  | 'region'
  | 'scope'
  | 'metadata'
>;

function selectIntegrationRows(db: ReadOnlyDb) {
  return db
    .selectFrom('integrations')
    .innerJoin('projectEnvironments', 'projectEnvironments.id', 'integrations.envId')
    .selectAll('integrations')
    .select(['projectEnvironments.slug as envSlug', 'projectEnvironments.name as envName', 'projectEnvironments.projectId as projectId']);
}

export async function findIntegrationById(db: ReadOnlyDb, id: string): Promise<IntegrationRow | undefined> {
  if (!isUuid(id)) return undefined;
  return selectIntegrationRows(db).where('integrations.id', '=', id).executeTakeFirst();
}

/** An integration row with the stored report of its target's keys (null when there is none). */
export interface IntegrationWithTargetKeys {
  row: IntegrationRow;
  targetKeys: TargetKeys | null;
}

type IntegrationRowQuery = ReturnType<typeof selectIntegrationRows>;

/** The rows `query` selects, with the stored report of their target's keys in the same statement. */
function withTargetKeys(query: IntegrationRowQuery) {
  return query.leftJoin('integrationTargetKeys', 'integrationTargetKeys.integrationId', 'integrations.id').select('integrationTargetKeys.report as targetKeysReport');
}

// compiled once, as the read by managed_by below: every sync result reads its record so, and building it each time was 4 % of a resync's CPU
const selectWithTargetKeysById = compiledSelect((db, id: string) => withTargetKeys(selectIntegrationRows(db).where('integrations.id', '=', id)));

function withTargetKeysOf(found: (IntegrationRow & { targetKeysReport: unknown }) | undefined): IntegrationWithTargetKeys | undefined {
  if (!found) return undefined;
  const { targetKeysReport, ...row } = found;
  return { row, targetKeys: (targetKeysReport as TargetKeys | null) ?? null };
}

/** findIntegrationById with the stored report of its target's keys. */
export async function findIntegrationWithTargetKeys(db: ReadOnlyDb, id: string): Promise<IntegrationWithTargetKeys | undefined> {
  if (!isUuid(id)) return undefined;
  return withTargetKeysOf((await selectWithTargetKeysById(db, id))[0]);
}

/**
 * Each wanted managed_by looked up by the unique key (organization, cluster, managed_by), one array parameter for any
 * number of them. A plain `managed_by = any($3)` let the planner scan the cluster's every record and filter them
 * (11 ms for 16 of 10,000 before the table's first ANALYZE, PostgreSQL's CPU 4× on a resync); the lateral lookup
 * with its LIMIT cannot be flattened into a join, so it stays a lookup of the key whatever the statistics say.
 */
const selectWithTargetKeysByManagedByIn = compiledSelect((db, orgId: string, cluster: string, managedBy: readonly string[]) =>
  db
    .selectFrom(sql<{ wanted: string }>`unnest(${managedBy}::text[])`.as('wanted'))
    .innerJoinLateral(
      withTargetKeys(byManagedBy(selectIntegrationRows(db), orgId, cluster, sql.ref<string>('wanted.wanted')))
        .limit(1)
        .as('found'),
      (join) => join.onTrue(),
    )
    .selectAll('found'),
);

/** findIntegrationByManagedBy with the stored report of each record's target's keys, for many records of one cluster in one statement. */
export async function findIntegrationsByManagedByWithTargetKeys(
  db: ReadOnlyDb,
  orgId: string,
  cluster: string,
  managedBy: readonly string[],
): Promise<Map<string, IntegrationWithTargetKeys>> {
  const rows = await selectWithTargetKeysByManagedByIn(db, orgId, cluster, managedBy);
  return new Map(rows.map((found) => [found.managedBy!, withTargetKeysOf(found)!]));
}

function byManagedBy(query: IntegrationRowQuery, orgId: string, cluster: string, managedBy: string | RawBuilder<string>): IntegrationRowQuery {
  return query.where('integrations.clusterOrgId', '=', orgId).where('integrations.cluster', '=', cluster).where('integrations.managedBy', '=', managedBy);
}

/** The record an Integration resource keeps: by its cluster and `<namespace>/<name>`. */
export async function findIntegrationByManagedBy(db: ReadOnlyDb, orgId: string, cluster: string, managedBy: string): Promise<IntegrationRow | undefined> {
  return byManagedBy(selectIntegrationRows(db), orgId, cluster, managedBy).executeTakeFirst();
}

/**
 * The `<namespace>/<name>` of the records an operator's Integration resources keep in one cluster: in order, after
 * `after`, at most `limit`; only those of `namespace` when given (a namespace name has no LIKE wildcard).
 */
export async function listManagedByOfCluster(
  db: ReadOnlyDb,
  orgId: string,
  cluster: string,
  page: { namespace?: string; after?: string; limit: number },
): Promise<string[]> {
  let query = db.selectFrom('integrations').select('managedBy').where('clusterOrgId', '=', orgId).where('cluster', '=', cluster).where('managedBy', 'is not', null);
  if (page.namespace !== undefined) query = query.where('managedBy', 'like', `${page.namespace}/%`);
  if (page.after !== undefined) query = query.where('managedBy', '>', page.after);
  const rows = await query.orderBy('managedBy').limit(page.limit).execute();
  return rows.map((row) => row.managedBy!);
}

export async function listIntegrationsOfProject(db: ReadOnlyDb, projectId: string): Promise<IntegrationRow[]> {
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
  values: Omit<IntegrationValues, 'envId'> & {
    integrationAuthId: string;
    integration: string;
    managedBy?: string | null;
    cluster?: string | null;
    clusterOrgId?: string | null;
    reloads?: boolean;
  },
): Promise<IntegrationRow> {
  const { metadata, ...rest } = values;
  const row = await db
    .insertInto('integrations')
    .values({ ...rest, envId: environment.id, metadata: JSON.stringify(metadata ?? {}) })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...row, envSlug: environment.slug, envName: environment.name, projectId: environment.projectId };
}

/**
 * insertIntegration of a record an Integration resource keeps, unless one of its cluster and managed_by exists: its
 * integration auth is the project's oldest of its kind, chosen in the same statement. Undefined, and nothing
 * written, when such a record exists or the project has no such auth yet.
 */
export async function insertManagedIntegrationIfAbsent(
  db: Executor,
  environment: Environment,
  values: Omit<Parameters<typeof insertIntegration>[2], 'integrationAuthId'>,
): Promise<IntegrationRow | undefined> {
  const { metadata, ...rest } = values;
  const row: Record<string, unknown> = { ...rest, envId: environment.id, metadata: JSON.stringify(metadata ?? {}) };
  const columns = Object.keys(row).filter((column) => row[column] !== undefined) as (keyof Integration)[];
  const inserted = await db
    .insertInto('integrations')
    .columns([...columns, 'integrationAuthId'])
    .expression((eb) =>
      eb
        .selectFrom('integrationAuths')
        // the parameters take the types of the columns they are inserted into
        .select([...columns.map((column) => eb.val(row[column]).as(column)), 'integrationAuths.id'])
        .where('integrationAuths.projectId', '=', environment.projectId)
        .where('integrationAuths.integration', '=', values.integration)
        .orderBy('integrationAuths.createdAt')
        .orderBy('integrationAuths.id')
        .limit(1),
    )
    .onConflict((conflict) => conflict.constraint('integrations_cluster_managed_by_key').doNothing())
    .returningAll()
    .executeTakeFirst();
  return inserted && { ...inserted, envSlug: environment.slug, envName: environment.name, projectId: environment.projectId };
}

export async function updateIntegration(
  db: Executor,
  id: string,
  changes: Partial<IntegrationValues> & { integrationAuthId?: string; reloads?: boolean },
): Promise<void> {
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

/** What a sync's outcome stores on its record. */
export interface SyncOutcome {
  isSynced: boolean;
  syncMessage: string | null;
  syncedRevision?: number | null;
  lastUsed: Date;
  readPlaces?: unknown;
}

/**
 * Stores the outcome of a sync (with the report of the target's keys, when given, written in a WITH clause), leaving
 * `updatedAt` alone (the record's settings did not change), as the statement a transaction sends with its COMMIT
 * (WriteContext.writeAtCommit): it answers nothing, so its caller decides beforehand, on the record it read, whether
 * it writes anything and whether the report changes.
 */
export function syncResultAtCommit(db: QueryCreator<DB>, id: string, result: SyncOutcome, report?: TargetKeys | null): Statement {
  if (report === undefined) return statementOf(syncResultUpdate(db, id, result));
  // the WITH's table is not read by the UPDATE: the creator that knows it is a creator of the same tables for it
  const withReport = db.with('keys', (creator) => targetKeysWrite(creator, id, report)) as unknown as QueryCreator<DB>;
  return statementOf(syncResultUpdate(withReport, id, result));
}

/** A sync that changes nothing (same outcome, same revision, same places read) writes nothing. */
function syncResultUpdate(db: QueryCreator<DB>, id: string, result: SyncOutcome) {
  const { readPlaces, syncedRevision, ...rest } = result;
  const places = readPlaces === undefined ? undefined : JSON.stringify(readPlaces);
  return db
    .updateTable('integrations')
    .set({ ...rest, ...(syncedRevision === undefined ? {} : { syncedRevision }), ...(places === undefined ? {} : { readPlaces: places }) })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('isSynced', 'is distinct from', result.isSynced),
        eb('syncMessage', 'is distinct from', result.syncMessage),
        ...(syncedRevision === undefined ? [] : [eb('syncedRevision', 'is distinct from', syncedRevision)]),
        ...(places === undefined ? [] : [eb('readPlaces', 'is distinct from', sql<unknown>`cast(${places} as jsonb)`)]),
      ]),
    );
}

/** Stores how far an Integration's workload reload got, and which of its workloads are still rolling out. True when it changed. */
export async function setIntegrationReloadResult(db: Executor, id: string, result: { reloadedRevision: number; rolling?: readonly WorkloadRef[] }): Promise<boolean> {
  const rolling = result.rolling === undefined ? undefined : JSON.stringify(result.rolling);
  const updated = await db
    .updateTable('integrations')
    .set({ reloadedRevision: result.reloadedRevision, ...(rolling === undefined ? {} : { rollingWorkloads: rolling }) })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('reloadedRevision', 'is distinct from', result.reloadedRevision),
        ...(rolling === undefined ? [] : [eb('rollingWorkloads', 'is distinct from', sql<unknown>`cast(${rolling} as jsonb)`)]),
      ]),
    )
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** The records Integration resources keep in a project (any cluster); the first `limit` when given. */
export async function listManagedIntegrationsOfProject(db: ReadOnlyDb, projectId: string, limit?: number): Promise<IntegrationRow[]> {
  const query = selectIntegrationRows(db)
    .where('projectEnvironments.projectId', '=', projectId)
    .where('integrations.managedBy', 'is not', null)
    .orderBy('integrations.createdAt')
    .orderBy('integrations.id');
  return (limit === undefined ? query : query.limit(limit)).execute();
}
