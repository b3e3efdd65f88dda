import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { Change, ChangeRecord } from './change.ts';

/** Takes the change log's transaction lock (held to commit) and, with `notifyChannel`, sends the NOTIFY in the same round trip. */
export async function lockChangeLog(db: Executor, lockKey: number, notifyChannel: string | null): Promise<void> {
  if (notifyChannel === null) await sql`SELECT pg_advisory_xact_lock(${lockKey})`.execute(db);
  else await sql`SELECT pg_advisory_xact_lock(${lockKey}), pg_notify(${notifyChannel}, '')`.execute(db);
}

export async function insertChanges(db: Executor, changes: Change[]): Promise<{ revision: number }[]> {
  return db.insertInto('changeLog').values(changes).returning('revision').execute();
}

export async function changesAfter(db: Executor, revision: number, limit: number): Promise<ChangeRecord[]> {
  const rows = await db
    .selectFrom('changeLog')
    .select(['revision', 'projectId', 'environmentId', 'environmentSlug', 'secretPath', 'kind', 'createdAt'])
    .where('revision', '>', revision)
    .orderBy('revision')
    .limit(limit)
    .execute();
  return rows as ChangeRecord[];
}

/** The newest committed revision, of one project's changes when `projectId` is given (0 before any). */
export async function latestRevision(db: Executor, projectId?: string): Promise<number> {
  let query = db.selectFrom('changeLog').select((eb) => eb.fn.max('revision').as('revision'));
  if (projectId) query = query.where('projectId', '=', projectId);
  const row = await query.executeTakeFirst();
  return row?.revision ?? 0;
}

/** The newest committed revision of these projects' changes (0 before any): one index look-up per project. */
export async function latestRevisionOf(db: Executor, projectIds: string[]): Promise<number> {
  if (projectIds.length === 0) return 0;
  const rows = await db
    .selectFrom('projects')
    .where('projects.id', 'in', projectIds)
    .select((eb) =>
      eb
        .selectFrom('changeLog')
        .whereRef('changeLog.projectId', '=', 'projects.id')
        .select((inner) => inner.fn.max('revision').as('revision'))
        .as('revision'),
    )
    .execute();
  return Math.max(0, ...rows.map((row) => Number(row.revision ?? 0)));
}

/** Every change the transaction that recorded `revision` recorded (none when there is no such revision), oldest first. */
export async function changesCommittedWith(db: Executor, revision: number): Promise<ChangeRecord[]> {
  const rows = await db
    .selectFrom('changeLog')
    .select(['revision', 'projectId', 'environmentId', 'environmentSlug', 'secretPath', 'kind', 'createdAt'])
    .where('xact', '=', (eb) => eb.selectFrom('changeLog as written').select('written.xact').where('written.revision', '=', revision))
    .orderBy('revision')
    .execute();
  return rows as ChangeRecord[];
}
