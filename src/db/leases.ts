import { type RawBuilder, sql } from 'kysely';
import type { Executor } from './database.ts';

/** Where a background job's rows live: a table with `id`, `next_attempt_at` and `lease_until`, and each row's organization. */
export interface LeasedRows {
  table: string;
  /** The FROM clause naming the table `t` (joined with what gives its organization). */
  source: RawBuilder<unknown>;
  /** Each row's organization, in terms of `source`. */
  org: RawBuilder<unknown>;
  /** A further condition for a row to be due (`true` when none). */
  eligible: RawBuilder<boolean>;
}

/**
 * Leases due rows to this replica until `leaseUntil`: due by `now`, not leased by a live claim, at most `perOrg` of one
 * organization and `limit` in all; answers their ids. SKIP LOCKED: replicas claiming at once take different rows.
 */
export async function claimDueRows(db: Executor, rows: LeasedRows, now: Date, leaseUntil: Date, limit: number, perOrg: number): Promise<string[]> {
  const table = sql.table(rows.table);
  const { rows: claimed } = await sql<{ id: string }>`
    WITH due AS (
      SELECT t.id, row_number() OVER (PARTITION BY ${rows.org} ORDER BY t.next_attempt_at, t.id) AS place
      FROM ${rows.source}
      WHERE ${rows.eligible} AND t.next_attempt_at <= ${now} AND (t.lease_until IS NULL OR t.lease_until < ${now})
    ),
    picked AS (
      SELECT t.id FROM ${table} t JOIN due ON due.id = t.id
      WHERE due.place <= ${perOrg}
      ORDER BY t.next_attempt_at LIMIT ${limit}
      FOR UPDATE OF t SKIP LOCKED
    )
    UPDATE ${table} SET lease_until = ${leaseUntil} FROM picked WHERE ${table}.id = picked.id RETURNING ${table}.id`.execute(db);
  return claimed.map((row) => row.id);
}
