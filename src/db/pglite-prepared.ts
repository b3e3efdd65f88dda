import { type PGlite, protocol, types } from '@electric-sql/pglite';
import type { PGlite as KyselyPglite, PGliteQueryResults, PGliteTransaction } from 'kysely';
import { isOutdatedPreparedStatement, PreparedStatements } from './prepared-statements.ts';

const { serialize } = protocol;

/** A prepared statement's shape, from its Describe: how to send its parameters and read its rows. */
interface Described {
  parameterTypes: number[];
  fields: { name: string; dataTypeID: number }[];
}

interface BackendMessage {
  name: string;
  dataTypeIDs?: number[];
  fields?: unknown[];
  text?: string;
}

/** The commands whose count PGlite's query() answers as affectedRows (a SELECT's rows are not "affected"). */
const COUNTED_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/**
 * PGlite as Kysely sees it, running each statement in one call into the engine, prepared once it is seen again.
 *
 * PGlite's own query() sends a statement as six calls into the engine (Parse, Describe, Bind, Describe, Execute,
 * Sync), each parsed and planned afresh: on an update, a third of the CPU was in the engine (bench/RESULTS.md).
 * Here a statement seen before on the instance is a Bind, Execute and Sync in one call, with no parse and, once
 * PostgreSQL settles on a generic plan, no planning; the first sight of one is a Parse and Describe, then that.
 *
 * - Which statements are prepared, and which one makes room: prepared-statements.ts, as on a PostgreSQL connection.
 * - Values are written and rows read with the instance's own serializers and parsers, as its query() does.
 * - A prepared statement a migration outdated (a `select *` of a table that gained a column) fails once: every one
 *   is freed and forgotten; outside a transaction the statement is sent again unprepared, inside one the
 *   transaction fails (503, try again).
 */
export class PreparedPglite implements KyselyPglite {
  readonly #pglite: PGlite;
  #prepared = new PreparedStatements();
  readonly #described = new Map<string, Described>();
  /** A migration outdated the prepared statements: they are freed before the next statement outside a transaction. */
  #outdated = false;

  constructor(pglite: PGlite) {
    this.#pglite = pglite;
  }

  get closed(): boolean {
    return this.#pglite.closed;
  }

  get ready(): boolean {
    return this.#pglite.ready;
  }

  get waitReady(): Promise<void> {
    return this.#pglite.waitReady;
  }

  close(): Promise<void> {
    return this.#pglite.close();
  }

  async query<T>(text: string, parameters: readonly unknown[] = []): Promise<PGliteQueryResults<T>> {
    const pglite = this.#pglite;
    await pglite._checkReady();
    const result = await pglite._runExclusiveTransaction(() => pglite._runExclusiveQuery(() => this.#run(text, parameters)));
    // what PGlite's query() does after a statement outside a transaction (a no-op in memory)
    await pglite.syncToFs();
    return result as PGliteQueryResults<T>;
  }

  transaction<T>(callback: (transaction: PGliteTransaction) => Promise<T>): Promise<T> {
    return this.#pglite.transaction((inner) =>
      callback({
        query: async <R>(text: string, parameters: readonly unknown[] = []) => {
          // the same refusal PGlite's own transaction object gives after its end
          if (inner.closed) throw new Error('Transaction is closed');
          return (await this.#pglite._runExclusiveQuery(() => this.#run(text, parameters))) as PGliteQueryResults<R>;
        },
        rollback: () => inner.rollback(),
      }),
    );
  }

  /** Runs `text` with the engine held (no other statement in between). */
  async #run(text: string, parameters: readonly unknown[]): Promise<PGliteQueryResults<unknown>> {
    const outsideTransaction = !this.#pglite.isInTransaction();
    if (this.#outdated && outsideTransaction) await this.#freeAll();
    const { name, evict } = this.#outdated ? {} : this.#prepared.plan(text, outsideTransaction);
    if (name === undefined) return this.#runUnnamed(text, parameters);
    try {
      return await this.#runNamed(name, text, parameters, evict);
    } catch (error) {
      if (!isOutdatedPreparedStatement(error)) throw error;
      this.#outdated = true;
      if (!outsideTransaction) throw error;
      await this.#freeAll();
      return this.#runUnnamed(text, parameters);
    }
  }

  async #runNamed(name: string, text: string, parameters: readonly unknown[], evict: string | undefined): Promise<PGliteQueryResults<unknown>> {
    let described = this.#described.get(name);
    if (described === undefined) {
      if (evict !== undefined) this.#described.delete(evict);
      try {
        described = await this.#describe(name, text, evict);
      } catch (error) {
        // a statement PostgreSQL refused to parse was never prepared
        this.#prepared.forget(text);
        throw error;
      }
      this.#described.set(name, described);
    }
    return this.#execute(name, described, parameters);
  }

  /** Parsed afresh and dropped by the next unnamed one, as PGlite's query() would, in two calls instead of six. */
  async #runUnnamed(text: string, parameters: readonly unknown[]): Promise<PGliteQueryResults<unknown>> {
    return this.#execute('', await this.#describe('', text, undefined), parameters);
  }

  async #describe(name: string, text: string, evict: string | undefined): Promise<Described> {
    const close = evict === undefined ? [] : [serialize.close({ type: 'S', name: evict })];
    const answer = await this.#send([...close, serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()]);
    const parameters = answer.find((message) => message.name === 'parameterDescription');
    const rows = answer.find((message) => message.name === 'rowDescription');
    return {
      parameterTypes: parameters?.dataTypeIDs ?? [],
      fields: ((rows?.fields ?? []) as Described['fields']).map(({ name: field, dataTypeID }) => ({ name: field, dataTypeID })),
    };
  }

  async #execute(name: string, described: Described, parameters: readonly unknown[]): Promise<PGliteQueryResults<unknown>> {
    const values = parameters.map((value, index) => this.#written(value, described.parameterTypes[index]));
    const answer = await this.#send([serialize.bind({ statement: name, values }), serialize.execute({}), serialize.sync()]);
    return this.#result(answer, described.fields);
  }

  /** The text PGlite's query() sends for a value of this type; an object of a type it has no serializer for, as JSON. */
  #written(value: unknown, type: number | undefined): string | null {
    if (value === null || value === undefined) return null;
    const serializer = type === undefined ? undefined : this.#pglite.serializers[type];
    if (serializer) return serializer(value);
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
    return JSON.stringify(value) ?? null;
  }

  /** Rows as objects, and the rows an INSERT, UPDATE or DELETE changed, as PGlite's query() answers. */
  #result(answer: BackendMessage[], fields: Described['fields']): PGliteQueryResults<unknown> {
    const parsers = this.#pglite.parsers;
    const rows: Record<string, unknown>[] = [];
    let affectedRows = 0;
    for (const message of answer) {
      if (message.name === 'dataRow') {
        const row: Record<string, unknown> = {};
        (message.fields as (string | null)[]).forEach((value, index) => {
          const { name, dataTypeID } = fields[index]!;
          row[name] = types.parseType(value, dataTypeID, parsers);
        });
        rows.push(row);
      } else if (message.name === 'commandComplete') {
        const words = (message.text ?? '').split(' ');
        if (COUNTED_COMMANDS.has(words[0]!)) affectedRows = Number(words.at(-1));
      }
    }
    return { rows, fields, affectedRows };
  }

  /** Frees every prepared statement (a migration outdated them), with no transaction open. */
  async #freeAll(): Promise<void> {
    await this.#send([serialize.query('DEALLOCATE ALL')]);
    this.#prepared = new PreparedStatements();
    this.#described.clear();
    this.#outdated = false;
  }

  /** One call into the engine; its error (after the Sync's answer) is thrown, as PGlite's query() throws it. */
  async #send(messages: Uint8Array[]): Promise<BackendMessage[]> {
    return this.#pglite.execProtocolStream(Buffer.concat(messages), { syncToFs: false });
  }
}
