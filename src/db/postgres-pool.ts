import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import pg from 'pg';
import { BEGIN_STATEMENT, type BeginMessages, StatementAfterBegin } from './begin-with-statement.ts';
import { isOutdatedPreparedStatement, PreparedStatements } from './prepared-statements.ts';

const { DatabaseError } = pg;

/**
 * The pool as Kysely sees it: node-postgres's, sending a transaction's BEGIN and COMMIT with the statement beside
 * them when it can, each in one message (a script: the simple-query protocol, which has no bound parameters),
 * instead of a round trip of their own. A write's transaction then costs two round trips fewer, and the change
 * log's lock, taken by its last statement, is held while PostgreSQL commits, not across a round trip to this
 * process (ChangeFeed.recordLast).
 *
 * - BEGIN waits for the transaction's first statement and goes with it in one message: in front of its text when
 *   it has no parameters (a versions read, a savepoint), as the extended protocol's messages before its own
 *   otherwise (begin-with-statement.ts; once per connection, before the first prepared statement, on its own, to
 *   prepare BEGIN); not at all when the transaction ends first. A BEGIN with settings (`start transaction isolation
 *   level …`) is sent as it comes.
 * - A script answers with the result of its first statement that returns rows (Kysely reads one result per query;
 *   node-postgres answers a script with one per statement), or its first when none does.
 * - A script ending in COMMIT has ended the transaction when Kysely sends its own COMMIT. PostgreSQL answers a
 *   COMMIT or ROLLBACK outside a transaction as a no-op with a warning; with no transaction open on the connection,
 *   this answers it so, without the round trip.
 *
 * - A statement with parameters sent again on a connection runs prepared (prepared-statements.ts). One that a
 *   migration outdated fails once: outside a transaction it is sent again unnamed; inside one the transaction fails
 *   (503, try again); either way the connection is dropped when released, its other statements with it. Off with
 *   `prepare` false (COFFER_DB_PREPARED_STATEMENTS), for a pooler in front of PostgreSQL that does not keep them.
 *
 * `onRoundTrip` is called for each message sent (Database.roundTrips).
 */
export function scriptCommittingPool(pool: pg.Pool, onRoundTrip: () => void, prepare = true): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    options: pool.options,
    async connect() {
      const client = await pool.connect();
      let wrapped = clients.get(client);
      if (!wrapped) {
        // Kysely keeps its connection per client object: the same wrapper for the same client every time
        wrapped = new ScriptCommittingClient(client, onRoundTrip, prepare);
        clients.set(client, wrapped);
      }
      return wrapped;
    },
    end: () => pool.end(),
  };
}

const BEGIN = /^\s*begin\s*;?\s*$/i;
const TRANSACTION_END = /^\s*(commit|rollback)\s*;?\s*$/i;

class ScriptCommittingClient implements PostgresPoolClient {
  readonly #client: pg.PoolClient;
  readonly #onRoundTrip: () => void;
  /** Kysely sent BEGIN; it goes with the transaction's first statement. */
  #beginWaiting = false;
  /** The last query succeeded: the client's transaction status is the one after it (#noTransactionOpen). */
  #statusKnown = true;
  /** Undefined when statements are not to be prepared (DatabaseOptions.preparedStatements). */
  readonly #prepared: PreparedStatements | undefined;
  /** A prepared statement was outdated by a migration: the connection goes when released. */
  #outdated = false;
  /** BEGIN is prepared on the connection (BEGIN_STATEMENT): it can go before a named statement (#queryAfterBegin). */
  #beginPrepared = false;

  constructor(client: pg.PoolClient, onRoundTrip: () => void, prepare: boolean) {
    this.#client = client;
    this.#onRoundTrip = onRoundTrip;
    this.#prepared = prepare ? new PreparedStatements() : undefined;
  }

  // (not in pg's types) Kysely cancels a statement by its backend's process id
  get processID(): number | undefined {
    return (this.#client as { processID?: number }).processID;
  }

  query<R>(text: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(text: string | PostgresCursor<R>, parameters: readonly unknown[] = []): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Kysely streams through a cursor only when the dialect is given one; this one is not
    if (typeof text !== 'string') throw new Error('streaming (a cursor) is not set up on this pool');
    return this.#run(text, parameters);
  }

  release(destroy?: boolean): void {
    this.#beginWaiting = false;
    this.#client.release(destroy || this.#outdated);
  }

  async #run<R>(text: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
    if (this.#noTransactionOpen() && !this.#beginWaiting && BEGIN.test(text)) {
      this.#beginWaiting = true;
      return { command: 'BEGIN' as PostgresQueryResult<R>['command'], rowCount: 0, rows: [] };
    }
    const begin = this.#beginWaiting;
    this.#beginWaiting = false;
    if ((begin || this.#noTransactionOpen()) && TRANSACTION_END.test(text)) {
      return { command: /commit/i.test(text) ? 'COMMIT' : 'ROLLBACK', rowCount: 0, rows: [] };
    }
    return this.#send(begin && parameters.length === 0 ? `BEGIN;\n${text}` : text, parameters, begin && parameters.length > 0);
  }

  /**
   * 'I' is the status of the last ReadyForQuery, noted before its query answered. A failed query answers at its
   * error, which may come before that ReadyForQuery: until a query succeeds again the status is not trusted, and
   * everything is sent as it comes.
   */
  #noTransactionOpen(): boolean {
    return this.#statusKnown && this.#client.getTransactionStatus() === 'I';
  }

  /** `afterBegin`: the transaction's BEGIN is still to be sent, and goes with this statement (which has parameters). */
  async #send<R>(text: string, parameters: readonly unknown[], afterBegin = false): Promise<PostgresQueryResult<R>> {
    if (parameters.length === 0) return this.#answer<R>(await this.#query({ text }));
    const inTransaction = afterBegin || !this.#noTransactionOpen();
    // an eviction's DEALLOCATE goes before the BEGIN still to be sent: outside the transaction
    const { name, evict } = this.#outdated || !this.#prepared ? {} : this.#prepared.plan(text, this.#noTransactionOpen());
    if (evict !== undefined) await this.#deallocate(evict);
    const values = parameters as unknown[];
    const query = name === undefined ? { text, values } : { name, text, values };
    try {
      return afterBegin ? this.#answerAfterBegin<R>(await this.#queryAfterBegin(query)) : this.#answer<R>(await this.#query(query));
    } catch (error) {
      // a value node-postgres could not send: it closed the statement on the server, but its note keeps it prepared
      if (name !== undefined && !(error instanceof DatabaseError)) this.#outdated = true;
      if (name === undefined || !isOutdatedPreparedStatement(error)) throw error;
      // nothing is prepared on this connection any more: it is dropped when released
      this.#outdated = true;
      if (inTransaction) throw error;
      return this.#answer<R>(await this.#query({ text, values }));
    }
  }

  async #query(query: pg.QueryConfig): Promise<pg.QueryResult | pg.QueryResult[]> {
    this.#onRoundTrip();
    this.#statusKnown = false;
    const result = (await this.#client.query(query)) as pg.QueryResult | pg.QueryResult[];
    this.#statusKnown = true;
    return result;
  }

  /**
   * BEGIN and `query` in one message (begin-with-statement.ts). BEGIN is prepared (BEGIN_STATEMENT) in front of the
   * connection's first such unnamed statement, and runs prepared after that; a named statement before then has
   * BEGIN go on its own, prepared. Without prepared statements, BEGIN is parsed unnamed each time.
   */
  async #queryAfterBegin(query: pg.QueryConfig): Promise<pg.QueryResult | pg.QueryResult[]> {
    if (!this.#prepared) return this.#queryWithBegin(query, { name: '', parse: true });
    if (this.#beginPrepared) return this.#queryWithBegin(query, { name: BEGIN_STATEMENT, parse: false });
    if (query.name !== undefined) {
      await this.#query({ name: BEGIN_STATEMENT, text: 'BEGIN', values: [] });
      this.#beginPrepared = true;
      return this.#query(query);
    }
    // a Parse this message carries is done whatever the statement after it does: PostgreSQL keeps it outside the transaction
    this.#beginPrepared = true;
    return this.#queryWithBegin(query, { name: BEGIN_STATEMENT, parse: true });
  }

  async #queryWithBegin(query: pg.QueryConfig, begin: BeginMessages): Promise<pg.QueryResult | pg.QueryResult[]> {
    this.#onRoundTrip();
    this.#statusKnown = false;
    const result = await new Promise<pg.QueryResult | pg.QueryResult[]>((resolve, reject) => {
      const callback = (error: Error | undefined, answer: pg.QueryResult | pg.QueryResult[]) => (error ? reject(error) : resolve(answer));
      this.#client.query(new StatementAfterBegin({ ...query, callback }, begin));
    }).catch((error: unknown) => {
      // BEGIN deallocated under it (DISCARD ALL, a pooler resetting sessions): nothing ran, so the transaction still
      // opens with its next statement; the connection goes when released
      if (isMissingStatement(error, BEGIN_STATEMENT)) {
        this.#beginPrepared = false;
        this.#beginWaiting = true;
        this.#outdated = true;
      }
      throw error;
    });
    this.#statusKnown = true;
    return result;
  }

  #answer<R>(result: pg.QueryResult | pg.QueryResult[]): PostgresQueryResult<R> {
    const answer = Array.isArray(result) ? (result.find((statement) => statement.fields.length > 0) ?? result[0]!) : result;
    return answer as unknown as PostgresQueryResult<R>;
  }

  /** The statement's own result: BEGIN's comes first. */
  #answerAfterBegin<R>(result: pg.QueryResult | pg.QueryResult[]): PostgresQueryResult<R> {
    return (Array.isArray(result) ? result.at(-1)! : result) as unknown as PostgresQueryResult<R>;
  }

  /**
   * Frees a prepared statement on the server, and in node-postgres's note of what this connection has prepared. One
   * whose Parse failed was never prepared: nothing to free. Should the server refuse, the connection is dropped when
   * released rather than the caller's statement failed for it.
   */
  async #deallocate(name: string): Promise<void> {
    // node-postgres has no API for this; its note would otherwise grow by one name per eviction
    const { parsedStatements } = (this.#client as unknown as { connection: { parsedStatements: Record<string, string> } }).connection;
    if (parsedStatements[name] === undefined) return;
    delete parsedStatements[name];
    await this.#query({ text: `DEALLOCATE ${name}` }).catch(() => {
      this.#outdated = true;
    });
  }
}

/** PostgreSQL's answer to a Bind or Execute of a prepared statement it does not have (26000, invalid_sql_statement_name). */
function isMissingStatement(error: unknown, name: string): boolean {
  return error instanceof DatabaseError && error.code === '26000' && error.message.includes(`"${name}"`);
}
