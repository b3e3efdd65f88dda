import type { Executor } from '../db/database.ts';
import type { ChangeRecord } from './change-feed.ts';

export async function changesAfter(db: Executor, revision: number, limit: number): Promise<ChangeRecord[]> {
  const rows = await db.selectFrom('changeLog').selectAll().where('revision', '>', revision).orderBy('revision').limit(limit).execute();
  return rows as ChangeRecord[];
}

export async function latestRevision(db: Executor): Promise<number> {
  const row = await db.selectFrom('changeLog').select((eb) => eb.fn.max('revision').as('revision')).executeTakeFirst();
  return row?.revision ?? 0;
}

export async function latestProjectRevision(db: Executor, projectId: string): Promise<number> {
  const row = await db
    .selectFrom('changeLog')
    .select((eb) => eb.fn.max('revision').as('revision'))
    .where('projectId', '=', projectId)
    .executeTakeFirst();
  return Number(row?.revision ?? 0);
}
