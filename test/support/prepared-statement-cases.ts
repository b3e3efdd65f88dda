import { sql } from 'kysely';
import { expect } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { PREPARED_PER_CONNECTION } from '../../src/db/prepared-statements.ts';

/**
 * The cases every backend's prepared statements must pass (postgres-pool.ts on one connection, pglite-prepared.ts),
 * shared by test/e2e/prepared-statements.test.ts and pglite-prepared-statements.test.ts. `prepared` reads what the
 * database holds prepared, leaving itself out.
 */
type PreparedReader = () => Promise<string[]>;

const sum = (db: Database['db'], n: number) => sql<{ n: number }>`SELECT ${n}::int + ${sql.lit(n)} AS n`.execute(db);

/** The least recently used one is freed at the bound, and runs again (prepared anew) when sent again. */
export async function expectBoundAndEviction(database: Database, prepared: PreparedReader): Promise<void> {
  for (let n = 0; n <= PREPARED_PER_CONNECTION; n++) {
    await sum(database.db, n);
    expect((await sum(database.db, n)).rows).toEqual([{ n: 2 * n }]);
  }
  const held = await prepared();
  expect(held).toHaveLength(PREPARED_PER_CONNECTION);
  expect(held).not.toContain('SELECT $1::int + 0 AS n');
  expect(held).toContain(`SELECT $1::int + ${PREPARED_PER_CONNECTION} AS n`);
  // the evicted one is sent again, twice: unnamed, then prepared anew
  for (const _ of [1, 2]) expect((await sum(database.db, 0)).rows).toEqual([{ n: 0 }]);
  expect(await prepared()).toContain('SELECT $1::int + 0 AS n');
  expect(await prepared()).toHaveLength(PREPARED_PER_CONNECTION);
}

/** At the bound, a new statement inside a transaction runs unprepared: nothing is freed while it is open. */
export async function expectNothingFreedInTransaction(database: Database, prepared: PreparedReader): Promise<void> {
  for (let n = 0; n < PREPARED_PER_CONNECTION; n++) for (const _ of [1, 2]) await sum(database.db, n);
  const before = await prepared();
  expect(before).toHaveLength(PREPARED_PER_CONNECTION);
  const products = await database.db.transaction().execute(async (trx) => {
    const product = (n: number) => sql<{ n: number }>`SELECT ${n}::int * ${sql.lit(n)} AS n`.execute(trx);
    const answers = [];
    for (let n = 1; n <= 3; n++) answers.push((await product(n)).rows[0]!.n, (await product(n)).rows[0]!.n);
    return answers;
  });
  expect(products).toEqual([1, 1, 4, 4, 9, 9]);
  expect(await prepared()).toEqual(before);
}
