import { type Selectable, sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { LoginThrottlesTable } from '../db/schema.ts';

export type ThrottleRow = Selectable<LoginThrottlesTable>;

/** The rows of these keys (absent keys have no failures). */
/** Serialises attempts on one credential until the transaction ends. */
export async function lockCredential(db: Executor, credential: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${credential}, 0))`.execute(db);
}

export async function findThrottles(db: Executor, keys: string[]): Promise<ThrottleRow[]> {
  if (keys.length === 0) return [];
  return db.selectFrom('loginThrottles').selectAll().where('key', 'in', keys).execute();
}

/** The row of `key`, made if missing and locked (FOR UPDATE) for the rest of the transaction. */
export async function lockThrottle(db: Executor, key: string, now: Date): Promise<ThrottleRow> {
  await db
    .insertInto('loginThrottles')
    .values({ key, windowStartedAt: now, lastFailureAt: now })
    .onConflict((conflict) => conflict.column('key').doNothing())
    .execute();
  return db.selectFrom('loginThrottles').selectAll().where('key', '=', key).forUpdate().executeTakeFirstOrThrow();
}

export async function updateThrottle(db: Executor, row: ThrottleRow): Promise<void> {
  const { key, ...values } = row;
  await db.updateTable('loginThrottles').set(values).where('key', '=', key).execute();
}

export async function deleteThrottle(db: Executor, key: string): Promise<void> {
  await db.deleteFrom('loginThrottles').where('key', '=', key).execute();
}

/** Rows with no failure since `before` and no lockout still running. */
export async function deleteIdleThrottles(db: Executor, before: Date, now: Date): Promise<number> {
  const result = await db
    .deleteFrom('loginThrottles')
    .where('lastFailureAt', '<', before)
    .where((eb) => eb.or([eb('lockedUntil', 'is', null), eb('lockedUntil', '<', now)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
