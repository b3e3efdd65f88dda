import { sql } from 'kysely';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { PREPARED_PER_CONNECTION } from '../../src/db/prepared-statements.ts';
import { expectBoundAndEviction, expectNothingFreedInTransaction } from '../support/prepared-statement-cases.ts';
import { ServiceUnavailableError } from '../../src/errors.ts';
import { translateDatabaseError, violatedConstraint } from '../../src/services/database-errors.ts';

// PGlite's statements run prepared through src/db/pglite-prepared.ts. Each test starts from the same data directory,
// nothing prepared; `plain` is the same data run through PGlite's own query() (preparedStatements false), to answer
// against.
let seeded: Blob;
let database: Database;
/** Opened by the tests that answer against it. */
let plain: Database | undefined;

beforeAll(async () => {
  const seeding = await openDatabase({ dataDir: 'memory://' });
  await seeding.execScript(
    seeding.db,
    `CREATE TABLE widgets (id int PRIMARY KEY, label text UNIQUE, size bigint, tags text[], data jsonb, blob bytea, made timestamptz, ok boolean);
     INSERT INTO widgets VALUES
       (1, 'one', 9007199254740991, '{a,"b c"}', '{"k": [1, "x"]}', '\\x00ff10', '2026-11-28 07:00:00.123+00', true),
       (2, 'two', NULL, '{}', 'null', '\\x', '1999-12-31 23:59:59+00', false),
       (3, NULL, -1, NULL, NULL, NULL, NULL, NULL);`,
  );
  seeded = await seeding.dumpDataDir!();
  await seeding.close();
});
beforeEach(async () => {
  database = await openDatabase({ dataDir: 'memory://', initialDataDir: seeded });
});
afterEach(async () => {
  await database.close();
  await plain?.close();
  plain = undefined;
});

/** The same seeded database with prepared statements off: what PGlite itself answers. */
async function openPlain(): Promise<Database> {
  plain = await openDatabase({ dataDir: 'memory://', initialDataDir: seeded, preparedStatements: false });
  return plain;
}

let looks = 0;
/** What the database holds prepared; the look itself never is (its text is new each time). */
async function prepared(on: Database = database): Promise<string[]> {
  const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements WHERE ${sql.lit(++looks)} > 0 ORDER BY prepare_time, name`.execute(
    on.db,
  );
  return rows.map((row) => row.statement);
}

const widget = (on: Database, id: number) => sql<Record<string, unknown>>`SELECT * FROM widgets WHERE id = ${id}`.execute(on.db);

test('a statement is prepared the second time it is sent, and every type answers as PGlite itself answers it', async () => {
  const plain = await openPlain();
  for (const id of [1, 2, 3, 4]) {
    const expected = (await widget(plain, id)).rows;
    // first unnamed, then prepared, then run prepared
    for (const _ of [1, 2, 3]) expect((await widget(database, id)).rows).toEqual(expected);
  }
  const first = (await widget(database, 1)).rows[0]!;
  expect(first).toMatchObject({ size: 9007199254740991, tags: ['a', 'b c'], data: { k: [1, 'x'] }, ok: true });
  expect(first.blob).toEqual(Buffer.from([0x00, 0xff, 0x10]));
  expect(first.made).toEqual(new Date('2026-11-28T07:00:00.123Z'));
  expect(await prepared()).toEqual(['SELECT * FROM widgets WHERE id = $1']);
  expect(await prepared(plain)).toEqual([]);
});

test('values are written as PGlite writes them (json, bytea, dates, arrays, null), and the rows a write changed are counted', async () => {
  const row = {
    label: 'four',
    size: 12,
    tags: ['x', 'y"z'],
    data: { nested: { list: [1, null] } },
    blob: Buffer.from('hello'),
    made: new Date('2026-01-02T03:04:05.006Z'),
    ok: null,
  };
  const plain = await openPlain();
  for (const on of [database, plain]) {
    for (const id of [4, 5, 6]) {
      const inserted = await on.db
        .insertInto('widgets' as never)
        .values({ id, ...row, label: `${row.label}-${id}`, data: JSON.stringify(row.data) })
        .executeTakeFirst();
      expect(inserted.numInsertedOrUpdatedRows).toBe(1n);
    }
    const updated = await sql`UPDATE widgets SET size = ${7} WHERE id >= ${4}`.execute(on.db);
    expect(updated.numAffectedRows).toBe(3n);
    const none = await sql`DELETE FROM widgets WHERE id = ${99}`.execute(on.db);
    expect(none.numAffectedRows).toBe(0n);
  }
  const all = async (on: Database) => (await sql`SELECT * FROM widgets ORDER BY id`.execute(on.db)).rows;
  expect(await all(database)).toEqual(await all(plain));
  expect((await widget(database, 6)).rows[0]).toMatchObject({ tags: ['x', 'y"z'], data: row.data, blob: Buffer.from('hello'), made: row.made, ok: null });
});

test(`at most ${PREPARED_PER_CONNECTION} are kept: the least recently used is freed, and runs again when sent again`, async () => {
  await expectBoundAndEviction(database, prepared);
});

test('a statement PGlite refused to parse fails the same way each time, and takes none of the places', async () => {
  const refused = () => sql`SELECT label FROM no_such_table WHERE id = ${1}`.execute(database.db);
  const difference = async (n: number) => {
    for (const _ of [1, 2]) expect((await sql<{ n: number }>`SELECT ${n}::int - ${sql.lit(n)} AS n`.execute(database.db)).rows).toEqual([{ n: 0 }]);
  };
  for (let n = 1; n < PREPARED_PER_CONNECTION; n++) await difference(n);
  const errors = [];
  for (const _ of [1, 2, 3]) errors.push(await refused().catch((error: unknown) => error));
  for (const error of errors) expect(error).toMatchObject({ code: '42P01', message: expect.stringContaining('no_such_table') });
  // the last place is still free: nothing is freed to prepare this one
  await difference(PREPARED_PER_CONNECTION);
  const held = await prepared();
  expect(held).toHaveLength(PREPARED_PER_CONNECTION);
  expect(held[0]).toBe('SELECT $1::int - 1 AS n');
  for (const _ of [1, 2]) expect((await widget(database, 2)).rows).toHaveLength(1);
});

test('a statement that fails when run keeps its error code and constraint, and runs after it, in and out of a transaction', async () => {
  const relabel = (id: number, label: string) => sql`UPDATE widgets SET label = ${label} WHERE id = ${id}`.execute(database.db);
  for (const _ of [1, 2, 3]) {
    const error = await relabel(2, 'one').catch((failure: unknown) => failure);
    expect(violatedConstraint(error)).toBe('widgets_label_key');
  }
  await expect(sql`SELECT * FROM widgets WHERE id = ${'not a number'}`.execute(database.db)).rejects.toMatchObject({ code: '22P02' });
  await relabel(2, 'deux');
  const inTransaction = await database.db
    .transaction()
    .execute(async (trx) => {
      await sql`UPDATE widgets SET label = ${'dos'} WHERE id = ${2}`.execute(trx);
      await sql`UPDATE widgets SET label = ${'one'} WHERE id = ${2}`.execute(trx);
    })
    .catch((error: unknown) => error);
  expect(violatedConstraint(inTransaction)).toBe('widgets_label_key');
  expect((await widget(database, 2)).rows[0]!.label).toBe('deux');
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  await expect(sql`SELECT ${circular}::jsonb AS j`.execute(database.db)).rejects.toThrow(/circular/);
  for (const _ of [1, 2]) expect((await sql<{ j: unknown }>`SELECT ${JSON.stringify({ a: 1 })}::jsonb AS j`.execute(database.db)).rows).toEqual([{ j: { a: 1 } }]);
});

test('inside a transaction at capacity a new statement goes unprepared: nothing is freed while a transaction is open', async () => {
  await expectNothingFreedInTransaction(database, prepared);
});

test('a prepared statement a migration outdated runs again unprepared outside a transaction; inside one it fails with a 503, and nothing stays outdated', async () => {
  for (const _ of [1, 2]) await widget(database, 3);
  expect(await prepared()).toContain('SELECT * FROM widgets WHERE id = $1');
  await database.execScript(database.db, 'ALTER TABLE widgets ADD COLUMN colour text');
  expect((await widget(database, 3)).rows[0]).toMatchObject({ id: 3, colour: null });
  expect(await prepared()).toEqual([]);

  for (const _ of [1, 2]) await widget(database, 3);
  await database.execScript(database.db, 'ALTER TABLE widgets ADD COLUMN weight int');
  const failed = await database.db
    .transaction()
    .execute(async (trx) => sql`SELECT * FROM widgets WHERE id = ${3}`.execute(trx))
    .catch((error: unknown) => error);
  expect(translateDatabaseError(failed)).toBeInstanceOf(ServiceUnavailableError);
  const again = await database.db.transaction().execute(async (trx) => sql`SELECT * FROM widgets WHERE id = ${3}`.execute(trx));
  expect(again.rows[0]).toMatchObject({ id: 3, colour: null, weight: null });
  for (const _ of [1, 2]) expect((await widget(database, 3)).rows[0]).toMatchObject({ colour: null, weight: null });
  expect(await prepared()).toEqual(['SELECT * FROM widgets WHERE id = $1']);
});

test('a notification sent by a prepared statement reaches the listener', async () => {
  const heard: string[] = [];
  const stop = await database.listen('widgets_changed', (payload) => heard.push(payload));
  for (const payload of ['first', 'second', 'third']) await sql`SELECT pg_notify('widgets_changed', ${payload})`.execute(database.db);
  expect(await prepared()).toEqual(["SELECT pg_notify('widgets_changed', $1)"]);
  await expect.poll(() => heard).toEqual(['first', 'second', 'third']);
  await stop();
});
