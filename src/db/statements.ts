import { sql } from 'kysely';
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
