import type { Change, ChangeKind, ChangeRecord } from './change.ts';
import { compiledSelect } from '../db/compiled-select.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';
import { type Statement, statement } from '../db/statements.ts';

/**
 * Takes the change log's lock (and, with `notifyChannel`, sends a NOTIFY delivered at commit), then inserts the rows,
 * in one statement, to be the transaction's last (finishTransaction: on PostgreSQL sent with its COMMIT): the lock
 * is held from here to commit, and every writer queues behind it. The revisions are taken as the rows are
 * inserted, after the join with `locked` ran the lock.
 */
export function changeLogInsertion(lockKey: number, notifyChannel: string | null, changes: Change[]): Statement<{ revision: number }> {
  const lock =
    notifyChannel === null ? statement`SELECT pg_advisory_xact_lock(${lockKey})` : statement`SELECT pg_advisory_xact_lock(${lockKey}), pg_notify(${notifyChannel}, '')`;
  return statement<{ revision: number }>`
      WITH locked AS MATERIALIZED (${lock})
      INSERT INTO change_log (project_id, environment_id, environment_slug, secret_path, kind, rotation)
      SELECT c.project_id, c.environment_id, c.environment_slug, c.secret_path, c.kind, c.rotation
      FROM locked CROSS JOIN ROWS FROM (
        jsonb_to_recordset(${JSON.stringify(changes.map(toRow))}::jsonb)
          AS (project_id uuid, environment_id uuid, environment_slug text, secret_path text, kind text, rotation jsonb)
      ) WITH ORDINALITY AS c(project_id, environment_id, environment_slug, secret_path, kind, rotation, position)
      ORDER BY c.position
      RETURNING revision`;
}

/** A change as change_log's columns name it. */
function toRow(change: Change) {
  return {
    project_id: change.projectId,
    environment_id: change.environmentId,
    environment_slug: change.environmentSlug,
    secret_path: change.secretPath,
    kind: change.kind,
    rotation: change.rotation ?? null,
  };
}

export async function changesAfter(db: Executor, revision: number, limit: number): Promise<ChangeRecord[]> {
  return (await selectChangesAfter(db, revision, limit)) as ChangeRecord[];
}

const selectChangesAfter = compiledSelect((db, revision: number, limit: number) =>
  db
    .selectFrom('changeLog')
    .select(['revision', 'projectId', 'environmentId', 'environmentSlug', 'secretPath', 'kind', 'rotation', 'createdAt'])
    .where('revision', '>', revision)
    .orderBy('revision')
    .limit(limit),
);

/** The newest committed revision, of one project's changes when `projectId` is given (0 before any). */
export async function latestRevision(db: ReadOnlyDb, projectId?: string): Promise<number> {
  let query = db.selectFrom('changeLog').select((eb) => eb.fn.max('revision').as('revision'));
  if (projectId) query = query.where('projectId', '=', projectId);
  const row = await query.executeTakeFirst();
  return row?.revision ?? 0;
}

/** The newest committed revision of one project's changes of these kinds (0 before any): a walk down its (project_id, revision) index. */
export async function latestRevisionOfKinds(db: ReadOnlyDb, projectId: string, kinds: readonly ChangeKind[]): Promise<number> {
  const row = await db
    .selectFrom('changeLog')
    .select((eb) => eb.fn.max('revision').as('revision'))
    .where('projectId', '=', projectId)
    .where('kind', 'in', kinds)
    .executeTakeFirst();
  return row?.revision ?? 0;
}

/** The newest committed revision of these projects' changes (0 before any): one index look-up per project. */
export async function latestRevisionOf(db: ReadOnlyDb, projectIds: string[]): Promise<number> {
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
export async function changesCommittedWith(db: ReadOnlyDb, revision: number): Promise<ChangeRecord[]> {
  const rows = await db
    .selectFrom('changeLog')
    .select(['revision', 'projectId', 'environmentId', 'environmentSlug', 'secretPath', 'kind', 'rotation', 'createdAt'])
    .where('xact', '=', (eb) => eb.selectFrom('changeLog as written').select('written.xact').where('written.revision', '=', revision))
    .orderBy('revision')
    .execute();
  return rows as ChangeRecord[];
}
