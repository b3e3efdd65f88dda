import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { CamelCasePlugin, Kysely, PGliteDialect, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { DataDirLock } from './data-dir-lock.ts';
import { PreparedPglite } from './pglite-prepared.ts';
import { scriptCommittingPool } from './postgres-pool.ts';
import type { DB } from './schema.ts';
import { WriteWatch } from './write-watch.ts';

export type Backend = 'postgres' | 'pglite';
/** Anything a store can run SQL on: the database or an open transaction. */
export type Executor = Kysely<DB> | Transaction<DB>;
/**
 * A handle that can only build reads: what every domain is given (ServiceDeps.db) and what a store's read
 * functions take. Writes are made on the unit of work's transaction, so a service that tries to write
 * outside one does not compile.
 */
export type ReadOnlyDb = Omit<
  Kysely<DB>,
  'insertInto' | 'replaceInto' | 'updateTable' | 'deleteFrom' | 'mergeInto' | 'transaction' | 'startTransaction' | 'connection' | 'schema' | 'destroy'
>;

export interface Database {
  readonly db: Kysely<DB>;
  readonly backend: Backend;
  /** Statements run through `db` since the database was opened (the coffer_db_queries_total metric). */
  readonly queryCount: () => number;
  /**
   * Messages sent to the database through `db` and answered (coffer_db_round_trips_total): fewer than the statements
   * on PostgreSQL, where a BEGIN goes with the transaction's first statement and a COMMIT with its last when they
   * can (postgres-pool.ts); the statements on PGlite, each a call into the embedded engine.
   */
  readonly roundTrips: () => number;
  /** Writes made through `db` (and its transactions), for in-process caches. */
  readonly writes: WriteWatch;
  /**
   * A transaction may end with a script: its last statement and COMMIT in one message, without bound parameters
   * (PostgreSQL: one round trip fewer; postgres-pool.ts). PGlite runs each statement in-process: nothing to save.
   */
  readonly scriptCommits: boolean;
  /**
   * Subscribes to a NOTIFY channel; resolves to an unsubscribe function.
   * `onLost` is called once if the listening connection breaks.
   */
  listen(channel: string, onNotify: (payload: string) => void, onLost?: () => void): Promise<() => Promise<void>>;
  /**
   * Runs a multi-statement SQL script (simple query protocol) on a connection
   * held by the caller. PGlite has a single connection, so it runs there.
   */
  execScript(connection: Executor, script: string): Promise<void>;
  /** The embedded data directory's lock, held by this process until close(). */
  readonly dataDirLock?: DataDirLock;
  /**
   * PostgreSQL only: a connection of its own, outside the pool, for session
   * state that must last (an advisory lock), shown in pg_stat_activity under
   * `applicationName` whatever DATABASE_URL sets. `onLost` is called once if it breaks.
   */
  openSession?(applicationName: string, onLost: () => void): Promise<DedicatedSession>;
  /** PGlite only: the whole data directory as one uncompressed tarball, to start another database from (`initialDataDir`). */
  dumpDataDir?(): Promise<Blob>;
  close(): Promise<void>;
}

const INT8_OID = 20;
const BYTEA_OID = 17;
// Counts and revisions are int8; they stay far below 2^53.
pg.types.setTypeParser(INT8_OID, (value) => Number(value));
pg.types.setTypeParser(BYTEA_OID, parseBytea);

/**
 * bytea's hex text form (`\x…`) as a Buffer of its own. Buffer.from() would
 * take small buffers from Node's shared 64 KiB pool, so one cached row (a
 * project's wrapped data key, a ciphertext in the decryption cache) would keep
 * a whole 64 KiB slab alive: 70 MiB for the rows a 10,000-Integration operator keeps.
 */
function parseBytea(value: string): Buffer {
  const hex = value.slice(2);
  const buffer = Buffer.allocUnsafeSlow(hex.length >>> 1);
  buffer.write(hex, 'hex');
  return buffer;
}

/** One connection held by its owner until close(); see Database.openSession. */
export interface DedicatedSession {
  query<Row>(text: string, values?: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** PGlite data directory, or `memory://` for a throwaway in-memory database. */
  dataDir: string;
  poolSize?: number;
  /** Statements sent again run prepared (PostgreSQL: postgres-pool.ts, per connection; PGlite: pglite-prepared.ts; default true). */
  preparedStatements?: boolean;
  /** PostgreSQL application_name of the pool's connections (default `coffer`). */
  applicationName?: string;
  /** The data directory's lock (taken by the caller before anything is read from it); released by close(). */
  dataDirLock?: DataDirLock;
  /** PostgreSQL: the longest a statement waits for a connection (connecting, or for a free one in the pool). */
  connectTimeoutMs?: number;
  /** PostgreSQL: the longest one statement runs, and a transaction may sit idle, before the server ends it. */
  statementTimeoutMs?: number;
  /** Connection errors the database recovers from by itself (a broken idle or busy connection is dropped). */
  onConnectionError?: (error: Error) => void;
  /**
   * PGlite in memory: a data directory to start from (a dumpDataDir() tarball) instead of creating an empty one,
   * which takes PGlite seconds; the tests start each file from a migrated one.
   */
  initialDataDir?: Blob;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;

/** Counts the statements Kysely runs (its log hook), a transaction's BEGIN and COMMIT included. */
function queryCounter() {
  let count = 0;
  return { log: () => void count++, queryCount: () => count };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openPglite(options);
}

/**
 * Connection settings every client shares: bounded waits for a connection and
 * for a statement, and TCP keepalive so a connection to a vanished server is
 * noticed even while idle.
 */
function clientSettings(options: DatabaseOptions) {
  const statementTimeout = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  return {
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    statement_timeout: statementTimeout,
    idle_in_transaction_session_timeout: statementTimeout,
  };
}

function openPostgres(connectionString: string, options: DatabaseOptions): Database {
  const settings = clientSettings(options);
  const onConnectionError = options.onConnectionError ?? (() => {});
  const pool = new pg.Pool({ connectionString, max: options.poolSize ?? 10, application_name: options.applicationName ?? 'coffer', ...settings });
  // node-postgres emits 'error' on a client whose connection breaks; with no
  // listener that is an uncaught exception. The pool listens on idle clients
  // only, so every client gets a listener of its own for its whole life: a
  // checked-out client's failure reaches its caller as a rejected query, and
  // the pool drops the client when it is released.
  pool.on('error', onConnectionError);
  pool.on('connect', (client) => client.on('error', onConnectionError));
  const { log, queryCount } = queryCounter();
  let roundTrips = 0;
  const writes = new WriteWatch();
  const dialect = new PostgresDialect({ pool: scriptCommittingPool(pool, () => void roundTrips++, options.preparedStatements ?? true) });
  const db = new Kysely<DB>({ dialect, plugins: [writes, new CamelCasePlugin()], log });
  const sessions = new Set<DedicatedSession>();
  return {
    db,
    backend: 'postgres',
    queryCount,
    roundTrips: () => roundTrips,
    writes,
    scriptCommits: true,
    async listen(channel, onNotify, onLost) {
      const client = new pg.Client({ connectionString, application_name: 'coffer-listen', ...settings });
      let closing = false;
      let lost = false;
      const reportLost = () => {
        if (closing || lost) return;
        lost = true;
        onLost?.();
      };
      client.on('error', reportLost);
      client.on('end', reportLost);
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      } catch (error) {
        closing = true;
        await client.end().catch(() => {});
        throw error;
      }
      return async () => {
        closing = true;
        await client.end().catch(() => {});
      };
    },
    async openSession(applicationName, onLost) {
      const client = new pg.Client({ connectionString, application_name: applicationName, ...settings });
      let closing = false;
      let lost = false;
      const reportLost = () => {
        if (closing || lost) return;
        lost = true;
        onLost();
      };
      client.on('error', reportLost);
      client.on('end', reportLost);
      try {
        await client.connect();
        // a DATABASE_URL's own application_name would win over the connection option
        await client.query("SELECT set_config('application_name', $1, false)", [applicationName]);
      } catch (error) {
        closing = true;
        await client.end().catch(() => {});
        throw error;
      }
      const session: DedicatedSession = {
        query: async <Row>(text: string, values?: unknown[]) => (await client.query(text, values)).rows as Row[],
        async close() {
          closing = true;
          sessions.delete(session);
          await client.end().catch(() => {});
        },
      };
      sessions.add(session);
      return session;
    },
    async execScript(connection, script) {
      await sql.raw(script).execute(connection);
    },
    async close() {
      await Promise.all([...sessions].map((session) => session.close()));
      await db.destroy();
    },
  };
}

async function openPglite({ dataDir, dataDirLock, initialDataDir, preparedStatements = true }: DatabaseOptions): Promise<Database> {
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  if (initialDataDir && !inMemory) throw new Error('initialDataDir starts an in-memory database only: a data directory on disk keeps its own');
  const pglite = await PGlite.create(dataDir, {
    loadDataDir: initialDataDir,
    parsers: {
      [INT8_OID]: (value: string) => Number(value),
      // Same type as node-postgres gives: a Buffer, from bytea's hex text form.
      [BYTEA_OID]: parseBytea,
    },
  });
  const { log, queryCount } = queryCounter();
  const writes = new WriteWatch();
  const dialect = new PGliteDialect({ pglite: preparedStatements ? new PreparedPglite(pglite) : pglite });
  const db = new Kysely<DB>({ dialect, plugins: [writes, new CamelCasePlugin()], log });
  return {
    db,
    backend: 'pglite',
    queryCount,
    roundTrips: queryCount,
    writes,
    scriptCommits: false,
    async listen(channel, onNotify) {
      const unsubscribe = await pglite.listen(channel, onNotify);
      return async () => unsubscribe();
    },
    async execScript(_connection, script) {
      await pglite.exec(script);
    },
    dataDirLock,
    dumpDataDir: () => pglite.dumpDataDir('none'),
    async close() {
      await db.destroy();
      await dataDirLock?.release();
    },
  };
}
