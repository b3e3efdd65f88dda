import { hostname } from 'node:os';
import { type Kysely, sql } from 'kysely';
import type { Database, DedicatedSession } from './database.ts';
import type { DB } from './schema.ts';

/**
 * The serving lock: a PostgreSQL advisory lock that every process working
 * with the root key (`coffer serve`, `coffer bootstrap`) holds shared, on a
 * connection of its own, for its whole life; `coffer rotate-key` takes it
 * exclusive, so a rotation and a running server exclude each other whatever
 * the connections are named. Advisory locks belong to one database, so two
 * installations on one PostgreSQL server do not meet here.
 *
 * The embedded database has no lock of this kind: its data directory's lock
 * (data-dir-lock.ts) already keeps every other process out.
 */
const LOCK_SPACE = 0x436f6672; // "Cofr"
const SERVING = 1;

/** One process holding the serving lock, as pg_stat_activity shows it. */
export interface LockHolder {
  /** The PostgreSQL backend's pid (pg_terminate_backend takes it). */
  backendPid: number;
  /** What the holder calls itself: `coffer serve pid 1234 on web-1` for a server's lock connection. */
  applicationName: string;
  /** `address:port`; null for a Unix-socket connection, or when the role may not see other sessions' addresses. */
  clientAddress: string | null;
  /** true for a `coffer rotate-key` under way (the exclusive holder). */
  rotating: boolean;
}

/** A server may not start while a rotation holds the lock exclusive. */
export class RotationUnderWayError extends Error {
  constructor() {
    super('coffer rotate-key is re-wrapping the keys of this database; start again when it has finished, with the new COFFER_ENCRYPTION_KEY');
  }
}

/** A rotation may not start while any process holds the serving lock; names them. */
export class DatabaseInUseError extends Error {
  readonly holders: LockHolder[];

  constructor(holders: LockHolder[]) {
    super(
      `this database is in use by ${holders.length} coffer process(es) holding it: ${holders.map(describeHolder).join('; ')}. ` +
        'Stop every coffer server on this database, rotate, then start them with the new key',
    );
    this.holders = holders;
  }
}

function describeHolder(holder: LockHolder): string {
  const from = holder.clientAddress ? `from ${holder.clientAddress}` : 'client address not shown (a local socket, or not visible to this role)';
  return `"${holder.applicationName}" (backend pid ${holder.backendPid}, ${from}${holder.rotating ? ', rotating the key' : ''})`;
}

export interface ServingLock {
  release(): Promise<void>;
}

export interface ServingLockOptions {
  /** The command holding it (`serve`, `bootstrap`): its lock connection is named `coffer <command> pid <pid> on <host>`. */
  command: string;
  /**
   * Called once when the lock cannot be held any more: its connection broke
   * and, reconnected, a rotation holds it, or `stillValid` failed (the root
   * key changed while the connection was down). The caller stops the process.
   */
  onLost(error: Error): void;
  /** Checked after the lock is taken again on a new connection (the root key check). */
  stillValid(): Promise<void>;
  /** How long to wait between attempts to take the lock again after its connection broke. */
  retryMs?: number;
}

/**
 * Takes the serving lock shared for this process (PostgreSQL; undefined on
 * the embedded database). Throws RotationUnderWayError while a rotation holds it.
 * If its connection breaks, it is taken again on a new one.
 */
export async function holdServingLock(database: Database, options: ServingLockOptions): Promise<ServingLock | undefined> {
  const openSession = database.openSession?.bind(database);
  if (!openSession) return undefined;
  let released = false;
  let session: DedicatedSession | undefined;
  let retry: NodeJS.Timeout | undefined;

  const take = async () => {
    const opened = await openSession(`coffer ${options.command} pid ${process.pid} on ${hostname()}`.slice(0, 63), () => void retake());
    const [row] = await opened.query<{ locked: boolean }>('SELECT pg_try_advisory_lock_shared($1, $2) AS locked', [LOCK_SPACE, SERVING]).catch(async (error) => {
      await opened.close();
      throw error;
    });
    if (!row?.locked) {
      await opened.close();
      throw new RotationUnderWayError();
    }
    session = opened;
  };

  const retake = async () => {
    session = undefined;
    if (released) return;
    try {
      await take();
      await options.stillValid();
    } catch (error) {
      const held = session as DedicatedSession | undefined;
      session = undefined;
      await held?.close();
      if (released) return;
      if (error instanceof RotationUnderWayError || !isConnectionFailure(error)) options.onLost(error as Error);
      else retry = setTimeout(() => void retake(), options.retryMs ?? 1_000).unref();
    }
  };

  await take();
  return {
    async release() {
      released = true;
      clearTimeout(retry);
      await session?.close();
    },
  };
}

/** The database cannot be reached (yet): try again. Anything else is an answer. */
function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EPIPE|57P0[1-3]|08\w{3})$/.test(code) || /terminat|timeout|Connection/i.test((error as Error).message);
}

/**
 * Runs `work` holding the serving lock exclusive on one connection, so that no
 * server runs or starts meanwhile; throws DatabaseInUseError, naming the
 * holders, if any process holds it. `work` runs on the lock's connection (a
 * pool of one still works).
 */
export async function withServingLockExclusive<T>(database: Database, work: (connection: Kysely<DB>) => Promise<T>): Promise<T> {
  return database.db.connection().execute(async (connection) => {
    const locked = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${LOCK_SPACE}::int4, ${SERVING}::int4) AS locked`.execute(connection);
    if (!locked.rows[0]?.locked) throw new DatabaseInUseError(await listHolders(database));
    try {
      return await work(connection);
    } finally {
      await sql`SELECT pg_advisory_unlock(${LOCK_SPACE}::int4, ${SERVING}::int4)`.execute(connection);
    }
  });
}

/** The processes holding the serving lock now (pg_locks joined with pg_stat_activity). */
async function listHolders(database: Database): Promise<LockHolder[]> {
  const result = await sql<{ pid: number; applicationName: string; clientAddress: string | null; mode: string }>`
    SELECT a.pid, a.application_name, host(a.client_addr) || ':' || a.client_port AS client_address, l.mode
    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid::int8 = ${LOCK_SPACE} AND l.objid::int8 = ${SERVING} AND l.objsubid = 2
    ORDER BY a.pid`.execute(database.db);
  return result.rows.map((row) => ({
    backendPid: row.pid,
    applicationName: row.applicationName,
    clientAddress: row.clientAddress,
    rotating: row.mode === 'ExclusiveLock',
  }));
}
