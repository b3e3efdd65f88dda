import { type Compilable, type RawBuilder, sql } from 'kysely';
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
export function notifyStatement(channel: string): Statement {
  return new Statement([`NOTIFY ${quotedIdentifier(channel)}`], []);
}

/** A value a statement can have bound as a parameter or written into its text (literalOf). */
export type StatementValue = string | number | boolean | Date | null;

/**
 * A statement that goes either way: on its own, its values bound as parameters (`bound`), or as one of a script's
 * statements (several in one message: the simple-query protocol has no parameters), its values written into its
 * text (`written`). A value may be a statement itself, put in where it stands.
 *
 * The text is put together here, not by Kysely: built as Kysely nodes (a raw node per value) and compiled through
 * its plugins, the closing scripts of a 3,000-Integration cold start were a sixth of the operator's allocations.
 */
export class Statement<Row = unknown> {
  readonly #fragments: readonly string[];
  readonly #values: readonly (StatementValue | Statement)[];

  /** `fragments` has one more entry than `values`, which go between them. */
  constructor(fragments: readonly string[], values: readonly (StatementValue | Statement)[]) {
    if (fragments.length !== values.length + 1) throw new Error(`a statement of ${fragments.length} fragments takes ${fragments.length - 1} values`);
    this.#fragments = fragments;
    this.#values = values;
  }

  /** Its values as parameters. */
  bound(): RawBuilder<Row> {
    // Kysely's sql tag reads no more of a template than its fragments
    const template = this.#fragments as unknown as TemplateStringsArray;
    return sql<Row>(template, ...this.#values.map((value) => (value instanceof Statement ? value.bound() : value)));
  }

  /** Its text with every value written in (literalOf). */
  written(): string {
    let text = this.#fragments[0]!;
    this.#values.forEach((value, index) => {
      text += (value instanceof Statement ? value.written() : literalOf(value)) + this.#fragments[index + 1]!;
    });
    return text;
  }
}

/** A Statement written as a template: statement`UPDATE t SET a = ${value}`. */
export function statement<Row = unknown>(fragments: TemplateStringsArray, ...values: (StatementValue | Statement)[]): Statement<Row> {
  return new Statement<Row>(fragments, values);
}

/**
 * `value` as a literal written into a statement's text: a string as an escaped literal (quotes doubled, and an E''
 * literal with doubled backslashes when it has any, right whatever standard_conforming_strings says: what
 * node-postgres's escapeLiteral gives, without building it a character at a time), a number only when it is a safe
 * integer, a time as its ISO text, true, false and null as their keywords (a literal takes the type of the column it
 * is compared with or written to, as a parameter does). Callers write structured values as one JSON text (no
 * control character in it: JSON escapes them; input validation keeps NUL and lone surrogates out of every field).
 */
export function literalOf(value: StatementValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return stringLiteral(value.toISOString());
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer to write into a statement: ${value}`);
    return String(value);
  }
  if (typeof value !== 'string') throw new Error(`not a value to write into a statement: ${typeof value}`);
  return stringLiteral(value);
}

function stringLiteral(value: string): string {
  const quoted = `'${value.replaceAll("'", "''")}'`;
  return value.includes('\\') ? ` E${quoted.replaceAll('\\', '\\\\')}` : quoted;
}

function quotedIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * A query built with Kysely as a Statement: its compiled text, each `$n` a place for its value. Kysely puts every
 * value in as a parameter, numbered in the order they appear; the query has no literal of its own with a `$` in it.
 */
export function statementOf(query: Compilable): Statement {
  const { sql: text, parameters } = query.compile();
  const parts = text.split(/\$(\d+)/);
  const fragments = parts.filter((_, index) => index % 2 === 0);
  const values = parts.filter((_, index) => index % 2 === 1).map((number) => parameters[Number(number) - 1] as StatementValue);
  return new Statement(fragments, values);
}

/**
 * Runs `statements` as the transaction's last, in order. With `script` (Database.scriptCommits) they go with the
 * COMMIT in one message, their values written into the text: no round trip to this process comes between them and
 * the commit, and the transaction is over when it answers (the caller's COMMIT is then answered without a round
 * trip: postgres-pool.ts). Without, they are one statement, its values bound (each but the last in a
 * data-modifying WITH of the last, which must then answer rows: they run on one snapshot, so none may read what
 * another writes), and the caller commits. Answers the rows of the last.
 */
export async function finishTransaction<Row>(db: Executor, statements: readonly [...Statement[], Statement<Row>], { script }: { script: boolean }): Promise<Row[]> {
  const query = script ? sql.raw<Row>([...statements.map((each) => each.written()), 'COMMIT'].join(';\n')) : combined(statements);
  const { rows } = await query.execute(db);
  return rows;
}

function combined<Row>(statements: readonly [...Statement[], Statement<Row>]): RawBuilder<Row> {
  const last = statements.length - 1;
  if (last === 0) return statements[0].bound() as RawBuilder<Row>;
  const parts = statements.map((each, index) => sql`${sql.id(`statement_${index}`)} AS (${each.bound()})`);
  return sql<Row>`WITH ${sql.join(parts)} SELECT * FROM ${sql.id(`statement_${last}`)}`;
}
