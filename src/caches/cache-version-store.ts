import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

/** Moves each named version by one (a missing row starts at 1), rows taken in name order; answers the new versions. */
export async function bumpCacheVersions(db: Executor, names: readonly string[]): Promise<{ name: string; version: number }[]> {
  return db
    .insertInto('cacheVersions')
    .values([...names].sort().map((name) => ({ name, version: 1 })))
    .onConflict((conflict) => conflict.column('name').doUpdateSet({ version: sql`cache_versions.version + 1` }))
    .returning(['name', 'version'])
    .execute();
}

export async function listCacheVersions(db: Executor): Promise<{ name: string; version: number }[]> {
  return db.selectFrom('cacheVersions').select(['name', 'version']).execute();
}
