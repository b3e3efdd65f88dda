import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeAll, beforeEach, expect, inject, test } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { BEGIN_STATEMENT } from '../../src/db/begin-with-statement.ts';
import { PREPARED_PER_CONNECTION } from '../../src/db/prepared-statements.ts';
import { expectBoundAndEviction, expectNothingFreedInTransaction } from '../support/prepared-statement-cases.ts';
import { ServiceUnavailableError } from '../../src/errors.ts';
import { translateDatabaseError } from '../../src/services/database-errors.ts';
import { adminQuery, databaseUrl } from '../support/postgres-server.ts';

// PostgreSQL (PGlite: pglite-prepared-statements.test.ts). A pool of one connection, so every
// statement below runs on the same one, and pg_prepared_statements shows what it holds.
let url: string;
/** A new pool of one connection per test: nothing prepared. */
let database: Database;

beforeAll(async () => {
  const adminUrl = inject('postgresAdminUrl');
  const name = `${inject('postgresRunPrefix')}_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  url = databaseUrl(adminUrl, name);
  await adminQuery(url, 'CREATE TABLE widgets (id int PRIMARY KEY, label text)');
  await adminQuery(url, "INSERT INTO widgets VALUES (1, 'one'), (2, 'two')");
});
beforeEach(async () => {
  database = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 1 });
});
afterEach(async () => {
  await database.close();
});

/**
 * What the pool's one connection holds prepared (a statement without parameters: never prepared itself), but BEGIN,
 * which a transaction prepares apart from these (begin-with-statement.test.ts).
 */
async function prepared(): Promise<string[]> {
  const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements WHERE name <> ${sql.lit(BEGIN_STATEMENT)} ORDER BY prepare_time`.execute(
    database.db,
  );
  return rows.map((row) => row.statement);
}

const backendPid = async () => (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(database.db)).rows[0]!.pid;

const labelOf = async (id: number) => (await sql<{ label: string }>`SELECT label FROM widgets WHERE id = ${id}`.execute(database.db)).rows[0]?.label;

test('a statement with parameters is prepared the second time the connection sends it, and answers the same each time', async () => {
  expect(await labelOf(1)).toBe('one');
  expect(await prepared()).toEqual([]);
  expect(await labelOf(2)).toBe('two');
  expect(await prepared()).toEqual(['SELECT label FROM widgets WHERE id = $1']);
  expect(await labelOf(1)).toBe('one');
  expect(await labelOf(3)).toBeUndefined();
  expect(await prepared()).toHaveLength(1);
});

test('with preparedStatements false (COFFER_DB_PREPARED_STATEMENTS=false, for a pooler that does not keep them) nothing is prepared', async () => {
  const unprepared = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 1, preparedStatements: false });
  try {
    for (const id of [1, 2, 1]) await sql`SELECT label FROM widgets WHERE id = ${id}`.execute(unprepared.db);
    const { rows } = await sql<{ count: number }>`SELECT count(*)::int AS count FROM pg_prepared_statements`.execute(unprepared.db);
    expect(rows).toEqual([{ count: 0 }]);
  } finally {
    await unprepared.close();
  }
});

test(`at most ${PREPARED_PER_CONNECTION} are kept: the least recently used is deallocated, and runs again when sent again`, async () => {
  await expectBoundAndEviction(database, prepared);
});

test('a statement PostgreSQL refused to parse is evicted like any other, and the statements after it run', async () => {
  const refused = () => sql`SELECT label FROM no_such_table WHERE id = ${1}`.execute(database.db);
  await expect(refused()).rejects.toThrow(/no_such_table/);
  await expect(refused()).rejects.toThrow(/no_such_table/);
  for (let n = 1; n <= PREPARED_PER_CONNECTION; n++) {
    for (const _ of [1, 2]) expect((await sql<{ n: number }>`SELECT ${n}::int - ${sql.lit(n)} AS n`.execute(database.db)).rows).toEqual([{ n: 0 }]);
  }
  expect(await prepared()).toHaveLength(PREPARED_PER_CONNECTION);
  expect(await labelOf(1)).toBe('one');
});

test('inside a transaction at capacity a new statement goes unnamed: nothing is deallocated while a transaction is open', async () => {
  await expectNothingFreedInTransaction(database, prepared);
});

test('a prepared statement a migration outdated is sent again unnamed outside a transaction; inside one it fails with a 503, and the connection is replaced', async () => {
  const all = (id: number) => sql<Record<string, unknown>>`SELECT * FROM widgets WHERE id = ${id}`.execute(database.db);
  await all(1);
  await all(1);
  expect(await prepared()).toContain('SELECT * FROM widgets WHERE id = $1');
  const pid = await backendPid();

  // another process's migration
  await adminQuery(url, 'ALTER TABLE widgets ADD COLUMN size int');
  expect((await all(2)).rows).toEqual([{ id: 2, label: 'two', size: null }]);
  const replaced = await backendPid();
  expect(replaced).not.toBe(pid);

  await all(1);
  await all(1);
  expect(await prepared()).toContain('SELECT * FROM widgets WHERE id = $1');
  await adminQuery(url, 'ALTER TABLE widgets ADD COLUMN colour text');
  const failed = await database.db
    .transaction()
    .execute(async (trx) => sql`SELECT * FROM widgets WHERE id = ${1}`.execute(trx))
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  expect(translateDatabaseError(failed)).toBeInstanceOf(ServiceUnavailableError);
  expect(await backendPid()).not.toBe(replaced);
  const again = await database.db.transaction().execute(async (trx) => sql`SELECT * FROM widgets WHERE id = ${1}`.execute(trx));
  expect(again.rows).toEqual([{ id: 1, label: 'one', size: null, colour: null }]);
});

test('a value that cannot be sent fails its statement alone, also the time the statement is prepared: the same statement runs after it', async () => {
  const unsendable = {
    toPostgres: () => {
      throw new Error('this value cannot be sent');
    },
  };
  const relabel = (id: number, label: unknown) => sql`UPDATE widgets SET label = ${label} WHERE id = ${id}`.execute(database.db);
  await relabel(1, 'one');
  // the second time it is sent: prepared, and its Bind fails (node-postgres then closes it on the server)
  await expect(relabel(1, unsendable)).rejects.toThrow('this value cannot be sent');
  for (const label of ['uno', 'one']) await relabel(1, label);
  expect(await labelOf(1)).toBe('one');
  await expect(relabel(1, unsendable)).rejects.toThrow('this value cannot be sent');
  await relabel(2, 'two');
  expect(await labelOf(2)).toBe('two');
});
