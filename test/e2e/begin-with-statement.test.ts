import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { BEGIN_STATEMENT } from '../../src/db/begin-with-statement.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { adminQuery, databaseUrl } from '../support/postgres-server.ts';

// A transaction's BEGIN goes in one message with its first statement, also when that statement has parameters
// (src/db/begin-with-statement.ts). PostgreSQL only, on pools of one connection (with and without prepared
// statements), so that the round trips counted and the session looked at are that connection's.
let url: string;
const pools: { label: string; database: Database; application: string }[] = [];
/** Another connection, which looks at theirs. */
let observer: Database;

beforeAll(async () => {
  const adminUrl = inject('postgresAdminUrl');
  const name = `${inject('postgresRunPrefix')}_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  url = databaseUrl(adminUrl, name);
  await adminQuery(url, 'CREATE TABLE gadgets (id int PRIMARY KEY, label text NOT NULL)');
  observer = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 1 });
  for (const prepare of [true, false]) {
    const application = `coffer-begin-test-${prepare ? 'prepared' : 'unprepared'}`;
    const database = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 1, applicationName: application, preparedStatements: prepare });
    pools.push({ label: prepare ? 'with prepared statements' : 'without prepared statements', database, application });
  }
});
afterAll(async () => {
  for (const { database } of pools) await database.close();
  await observer?.close();
});

let nextId = 1;
const labelsOf = async (ids: number[]) =>
  (await sql<{ id: number; label: string }>`SELECT id, label FROM gadgets WHERE id = ANY(${ids}::int[]) ORDER BY id`.execute(observer.db)).rows;

/** No session of the pool is in a transaction (a connection the pool dropped is replaced when next used). */
async function idle(application: string): Promise<boolean> {
  const { rows } = await sql<{ state: string }>`SELECT state FROM pg_stat_activity WHERE application_name = ${application}`.execute(observer.db);
  return rows.every((row) => row.state === 'idle');
}

for (const index of [0, 1]) {
  const pool = () => pools[index]!;

  test(`${index === 0 ? 'with' : 'without'} prepared statements: each transaction opening with a statement with parameters costs its statements' round trips, no more, and answers that statement's result`, async () => {
    const { database, application } = pool();
    for (let round = 1; round <= 4; round++) {
      const id = nextId++;
      const before = database.roundTrips();
      const { inserted, updated } = await database.db.transaction().execute(async (trx) => {
        const inserted = await sql<{ id: number }>`INSERT INTO gadgets (id, label) VALUES (${id}, ${'new'}) RETURNING id`.execute(trx);
        const updated = await trx
          .updateTable('gadgets' as never)
          .set({ label: `round ${round}` } as never)
          .where('id' as never, '=', id as never)
          .executeTakeFirst();
        return { inserted: inserted.rows, updated: Number(updated.numUpdatedRows) };
      });
      expect(inserted).toEqual([{ id }]);
      expect(updated).toBe(1);
      // BEGIN with the insert, the update, COMMIT on its own (Kysely's; a unit of work ends with a script instead)
      expect(database.roundTrips() - before).toBe(3);
      expect(await labelsOf([id])).toEqual([{ id, label: `round ${round}` }]);
      expect(await idle(application)).toBe(true);
    }
    const begins = await sql<{ count: number }>`SELECT count(*)::int AS count FROM pg_prepared_statements WHERE name = ${sql.lit(BEGIN_STATEMENT)}`.execute(database.db);
    expect(begins.rows).toEqual([{ count: index === 0 ? 1 : 0 }]);
  });

  test(`${index === 0 ? 'with' : 'without'} prepared statements: the statement runs inside the transaction BEGIN opened; a rollback keeps nothing of it`, async () => {
    const { database, application } = pool();
    for (let round = 1; round <= 3; round++) {
      const id = nextId++;
      const rolledBack = database.db.transaction().execute(async (trx) => {
        await sql`INSERT INTO gadgets (id, label) VALUES (${id}, ${'kept only if committed'})`.execute(trx);
        const open = await sql<{ open: boolean }>`SELECT now() = statement_timestamp() AS open`.execute(trx);
        // inside a transaction block now() is its start, before this statement's own timestamp
        expect(open.rows).toEqual([{ open: false }]);
        throw new Error('rolled back on purpose');
      });
      await expect(rolledBack).rejects.toThrow('rolled back on purpose');
      expect(await labelsOf([id])).toEqual([]);
      expect(await idle(application)).toBe(true);
    }
  });

  test(`${index === 0 ? 'with' : 'without'} prepared statements: a first statement that fails (a duplicate key, a value that cannot be sent) fails alone; the connection is idle and commits the next transaction`, async () => {
    const { database, application } = pool();
    const id = nextId++;
    await sql`INSERT INTO gadgets (id, label) VALUES (${id}, ${'first'})`.execute(database.db);
    for (let round = 1; round <= 3; round++) {
      const duplicate = database.db.transaction().execute((trx) => sql`INSERT INTO gadgets (id, label) VALUES (${id}, ${'second'})`.execute(trx));
      await expect(duplicate).rejects.toMatchObject({ code: '23505' });
      expect(await idle(application)).toBe(true);
      const unsendable = {
        toPostgres: () => {
          throw new Error('this value cannot be sent');
        },
      };
      const refused = database.db.transaction().execute((trx) => sql`INSERT INTO gadgets (id, label) VALUES (${nextId++}, ${unsendable})`.execute(trx));
      await expect(refused).rejects.toThrow('this value cannot be sent');
      expect(await idle(application)).toBe(true);
      const next = nextId++;
      await database.db.transaction().execute((trx) => sql`INSERT INTO gadgets (id, label) VALUES (${next}, ${'after'})`.execute(trx));
      expect(await labelsOf([id, next])).toEqual([
        { id, label: 'first' },
        { id: next, label: 'after' },
      ]);
    }
  });
}

test('BEGIN deallocated under the pool (DISCARD ALL, a pooler resetting sessions): the transaction that finds it gone fails alone, and the next one runs on a new connection', async () => {
  const { database, application } = pools[0]!;
  const insert = (id: number) => database.db.transaction().execute((trx) => sql`INSERT INTO gadgets (id, label) VALUES (${id}, ${'after a reset'})`.execute(trx));
  await insert(nextId++);
  await sql`DEALLOCATE ${sql.raw(BEGIN_STATEMENT)}`.execute(database.db);
  const lost = nextId++;
  await expect(insert(lost)).rejects.toMatchObject({ code: '26000' });
  expect(await idle(application)).toBe(true);
  const next = nextId++;
  await insert(next);
  expect(await labelsOf([lost, next])).toEqual([{ id: next, label: 'after a reset' }]);
});

test('a transaction whose first statement found BEGIN gone and that goes on is still one transaction: its rollback keeps nothing', async () => {
  const { database } = pools[0]!;
  const warm = nextId++;
  await database.db.transaction().execute((trx) => sql`INSERT INTO gadgets (id, label) VALUES (${warm}, ${'warm'})`.execute(trx));
  await sql`DEALLOCATE ${sql.raw(BEGIN_STATEMENT)}`.execute(database.db);
  const [first, second] = [nextId++, nextId++];
  const trx = await database.db.startTransaction().execute();
  await expect(sql`INSERT INTO gadgets (id, label) VALUES (${first}, ${'lost'})`.execute(trx)).rejects.toMatchObject({ code: '26000' });
  await sql`INSERT INTO gadgets (id, label) VALUES (${second}, ${'rolled back'})`.execute(trx);
  await trx.rollback().execute();
  expect(await labelsOf([first, second])).toEqual([]);
});
