import { type Compilable, type RawBuilder, sql } from 'kysely';
import pg from 'pg';
import type { Executor, ReadOnlyDb } from './database.ts';

/**
 * Statements about the session and the transaction rather than a table: the
 * callers above db/ name what they want, the SQL stays down here.
 */

/** One round trip to the database (the readiness probe). */
export async function ping(db: ReadOnlyDb): Promise<void> {
  await sql`SELECT 1`.execute(db);
}

export async function savepoint(db: Executor, name: string): Promise<void> {
  await sql`SAVEPOINT ${sql.id(name)}`.execute(db);
}

export async function releaseSavepoint(db: Executor, name: string): Promise<void> {
  await sql`RELEASE SAVEPOINT ${sql.id(name)}`.execute(db);
}

export async function rollbackToSavepoint(db: Executor, name: string): Promise<void> {
  await sql`ROLLBACK TO SAVEPOINT ${sql.id(name)}`.execute(db);
}

/** NOTIFY `channel`, delivered when the caller's transaction commits. */
export async function notifyAtCommit(db: Executor, channel: string): Promise<void> {
  await sql`SELECT pg_notify(${channel}, '')`.execute(db);
}

/** NOTIFY `channel` as a statement of a transaction's closing script (finishTransaction): it answers no rows. */
export function notifyStatement(channel: string): StatementOf<unknown> {
  return () => sql`NOTIFY ${sql.id(channel)}`;
}

/** A value a statement of a script can have written into its text (inlineValue). */
export type StatementValue = string | number | boolean | Date | null;

/** Puts a value into a statement: bound as a parameter (boundValue), or written into its text (inlineValue). */
export type ValueWriter = (value: StatementValue) => RawBuilder<unknown>;

/** A statement built with either way of putting its values in: a script (below) needs them written into its text. */
export type StatementOf<Row> = (value: ValueWriter) => RawBuilder<Row>;

export const boundValue: ValueWriter = (value) => sql`${value}`;

/**
 * `value` written into the statement's text rather than bound, for a script (several statements in one message:
 * the simple-query protocol has no parameters): a string as node-postgres's escaped literal (quotes doubled, and
 * an E'' literal with doubled backslashes when it has any, right whatever standard_conforming_strings says), a
 * number only when it is a safe integer, a time as its ISO text, true, false and null as their keywords (a literal
 * takes the type of the column it is compared with or written to, as a parameter does). Callers write structured
 * values as one JSON text (no control character in it: JSON escapes them; input validation keeps NUL and lone
 * surrogates out of every field).
 */
export const inlineValue: ValueWriter = (value) => {
  if (value === null) return sql.raw('NULL');
  if (typeof value === 'boolean') return sql.raw(value ? 'TRUE' : 'FALSE');
  if (value instanceof Date) return sql.raw(pg.escapeLiteral(value.toISOString()));
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer to write into a statement: ${value}`);
    return sql.raw(String(value));
  }
  if (typeof value !== 'string') throw new Error(`not a value to write into a statement: ${typeof value}`);
  return sql.raw(pg.escapeLiteral(value));
};

/**
 * A query built with Kysely as a statement of either kind: its compiled text with each `$n` given back its value
 * by the writer. Kysely puts every value in as a parameter; the query has no literal of its own with a `$` in it.
 */
export function statementOf(query: Compilable): StatementOf<unknown> {
  const { sql: text, parameters } = query.compile();
  const parts = text.split(/\$(\d+)/);
  return (value) =>
    sql.join(
      parts.map((part, index) => (index % 2 === 0 ? sql.raw(part) : value(parameters[Number(part) - 1] as StatementValue))),
      sql.raw(''),
    );
}

/**
 * Runs `statements` as the transaction's last, in order. With `script` (Database.scriptCommits) they go with the
 * COMMIT in one message, their values written into the text: no round trip to this process comes between them and
 * the commit, and the transaction is over when it answers (the caller's COMMIT is then answered without a round
 * trip: postgres-pool.ts). Without, they are one statement, its values bound (each but the last in a
 * data-modifying WITH of the last, which must then answer rows: they run on one snapshot, so none may read what
 * another writes), and the caller commits. Answers the rows of the last.
 */
export async function finishTransaction<Row>(
  db: Executor,
  statements: readonly [...StatementOf<unknown>[], StatementOf<Row>],
  { script }: { script: boolean },
): Promise<Row[]> {
  const text = script
    ? sql<Row>`${sql.join([...statements.map((statement) => statement(inlineValue)), sql.raw('COMMIT')], sql.raw(';\n'))}`
    : combined(statements, boundValue);
  const { rows } = await text.execute(db);
  return rows;
}

function combined<Row>(statements: readonly [...StatementOf<unknown>[], StatementOf<Row>], value: ValueWriter): RawBuilder<Row> {
  const last = statements.length - 1;
  if (last === 0) return statements[0](value) as RawBuilder<Row>;
  const parts = statements.map((statement, index) => sql`${sql.id(`statement_${index}`)} AS (${statement(value)})`);
  return sql<Row>`WITH ${sql.join(parts)} SELECT * FROM ${sql.id(`statement_${last}`)}`;
}
