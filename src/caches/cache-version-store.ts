import { sql } from 'kysely';
import { compiledSelect } from '../db/compiled-select.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

/** Moves each named version by one (a missing row starts at 1), rows taken in name order; answers the new versions. */
export async function bumpCacheVersions(db: Executor, names: readonly string[]): Promise<{ name: string; version: number }[]> {
  return db
    .insertInto('cacheVersions')
    .values([...names].sort().map((name) => ({ name, version: 1 })))
    .onConflict((conflict) => conflict.column('name').doUpdateSet({ version: sql`cache_versions.version + 1` }))
    .returning(['name', 'version'])
    .execute();
}

/** Every cache version, and the newest committed change-feed revision as the row named `revision`, in one statement. */
export const listCacheVersionsAndRevision: (db: ReadOnlyDb) => Promise<{ name: string; version: number }[]> = compiledSelect((db) =>
  db
    .selectFrom('cacheVersions')
    .select(['name', 'version'])
    .unionAll(db.selectFrom('changeLog').select([sql.lit('revision').as('name'), sql<number>`coalesce(max(revision), 0)`.as('version')])),
);
