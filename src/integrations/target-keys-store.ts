import { type QueryCreator, sql } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { ReadOnlyDb } from '../db/database.ts';
import type { KeyFacts, KeyPlace, TargetKeys } from './target-keys.ts';

/**
 * Stores what an Integration's operator reported of its target's keys (null: forgets it), writing only what differs:
 * a WITH clause of the sync result's statement (integration-store.ts syncResultAtCommit).
 */
export function targetKeysWrite(db: QueryCreator<DB>, integrationId: string, report: TargetKeys | null) {
  if (report === null) return db.deleteFrom('integrationTargetKeys').where('integrationId', '=', integrationId).returning('integrationId');
  const json = JSON.stringify(report);
  // from the record itself: a record deleted since is skipped, not a foreign-key failure
  return db
    .insertInto('integrationTargetKeys')
    .columns(['integrationId', 'report'])
    .expression((eb) =>
      eb
        .selectFrom('integrations')
        .select(['id as integrationId', sql<string>`cast(${json} as jsonb)`.as('report')])
        .where('id', '=', integrationId),
    )
    .onConflict((conflict) =>
      conflict
        .column('integrationId')
        .doUpdateSet({ report: sql<string>`excluded.report`, updatedAt: new Date() })
        .where(sql<boolean>`integration_target_keys.report is distinct from excluded.report`),
    )
    .returning('integrationId');
}

/** The reports of these Integrations, by id (those without one are absent). */
export async function listIntegrationTargetKeys(db: ReadOnlyDb, integrationIds: readonly string[]): Promise<Map<string, TargetKeys>> {
  if (integrationIds.length === 0) return new Map();
  const rows = await db.selectFrom('integrationTargetKeys').select(['integrationId', 'report']).where('integrationId', 'in', integrationIds).execute();
  return new Map(rows.map((row) => [row.integrationId, row.report as TargetKeys]));
}

/** What the reports of these Integrations say of one key of one folder (computed in the database: the reports stay there). */
export async function listKeyFacts(db: ReadOnlyDb, integrationIds: readonly string[], place: Required<KeyPlace>): Promise<Map<string, KeyFacts>> {
  if (integrationIds.length === 0) return new Map();
  const folder = JSON.stringify({ carried: [{ environment: place.environment, path: place.path }] });
  const key = JSON.stringify({ carried: [{ environment: place.environment, path: place.path, keys: [{ key: place.key }] }] });
  const rows = await db
    .selectFrom('integrationTargetKeys')
    .select([
      'integrationId',
      sql<boolean>`report @> cast(${folder} as jsonb)`.as('namesFolder'),
      sql<boolean>`report @> cast(${key} as jsonb)`.as('carriesKey'),
      sql<boolean>`(report->>'templated')::bigint = 0 and report->>'carriedTruncated' = 'false'`.as('complete'),
    ])
    .where('integrationId', 'in', integrationIds)
    .execute();
  return new Map(rows.map(({ integrationId, ...facts }) => [integrationId, facts]));
}
