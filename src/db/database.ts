import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { CamelCasePlugin, Kysely, PGliteDialect, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { DataDirLock } from './data-dir-lock.ts';
import type { DB } from './schema.ts';
import { WriteWatch } from './write-watch.ts';

export type Backend = 'postgres' | 'pglite';
/** Anything a store can run SQL on: the database or an open transaction. */
export type Executor = Kysely<DB> | Transaction<DB>;

export interface Database {
  readonly db: Kysely<DB>;
  readonly backend: Backend;
  /** Statements run through `db` since the database was opened (the coffer_db_queries_total metric). */
  readonly queryCount: () => number;
  /** Writes made through `db` (and its transactions), for in-process caches. */
  readonly writes: WriteWatch;
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

export interface DatabaseOptions {
  databaseUrl?: string;
  /** PGlite data directory, or `memory://` for a throwaway in-memory database. */
  dataDir: string;
  poolSize?: number;
  /** PostgreSQL application_name of the pool's connections (default `coffer`). */
  applicationName?: string;
  /** The data directory's lock (taken by the caller before anything is read from it); released by close(). */
  dataDirLock?: DataDirLock;
}

/** Counts the statements Kysely runs (its log hook); a transaction's BEGIN/COMMIT are not counted. */
function queryCounter() {
  let count = 0;
  return { log: () => void count++, queryCount: () => count };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10, options.applicationName ?? 'coffer');
  return openPglite(options.dataDir, options.dataDirLock);
}

function openPostgres(connectionString: string, max: number, applicationName: string): Database {
  const pool = new pg.Pool({ connectionString, max, application_name: applicationName });
  // An idle client losing its server connection must not crash the process.
  pool.on('error', () => {});
  const { log, queryCount } = queryCounter();
  const writes = new WriteWatch();
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), plugins: [writes, new CamelCasePlugin()], log });
  return {
    db,
    backend: 'postgres',
    queryCount,
    writes,
    async listen(channel, onNotify, onLost) {
      const client = new pg.Client({ connectionString, application_name: 'coffer-listen' });
      let closing = false;
      let lost = false;
      const reportLost = () => {
        if (closing || lost) return;
        lost = true;
        onLost?.();
      };
      client.on('error', reportLost);
      client.on('end', reportLost);
      await client.connect();
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      return async () => {
        closing = true;
        await client.end().catch(() => {});
      };
    },
    async execScript(connection, script) {
      await sql.raw(script).execute(connection);
    },
    close: () => db.destroy(),
  };
}

async function openPglite(dataDir: string, dataDirLock: DataDirLock | undefined): Promise<Database> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  const pglite = await PGlite.create(dataDir, {
    parsers: {
      [INT8_OID]: (value: string) => Number(value),
      // Same type as node-postgres gives: a Buffer, from bytea's hex text form.
      [BYTEA_OID]: parseBytea,
    },
  });
  const { log, queryCount } = queryCounter();
  const writes = new WriteWatch();
  const db = new Kysely<DB>({ dialect: new PGliteDialect({ pglite }), plugins: [writes, new CamelCasePlugin()], log });
  return {
    db,
    backend: 'pglite',
    queryCount,
    writes,
    async listen(channel, onNotify) {
      const unsubscribe = await pglite.listen(channel, onNotify);
      return async () => unsubscribe();
    },
    async execScript(_connection, script) {
      await pglite.exec(script);
    },
    dataDirLock,
    async close() {
      await db.destroy();
      await dataDirLock?.release();
    },
  };
}
