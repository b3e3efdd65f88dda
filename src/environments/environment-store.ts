import { isUuid } from '../db/uuid.ts';
import type { Environment } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function insertEnvironment(db: Executor, values: { projectId: string; name: string; slug: string; position: number }): Promise<Environment> {
  return db.insertInto('projectEnvironments').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function listEnvironments(db: ReadOnlyDb, projectId: string): Promise<Environment[]> {
  return db.selectFrom('projectEnvironments').selectAll().where('projectId', '=', projectId).orderBy('position').execute();
}

/** Environments of several projects, in position order, grouped by project id. */
export async function listEnvironmentsOfProjects(db: ReadOnlyDb, projectIds: string[]): Promise<Map<string, Environment[]>> {
  const byProject = new Map<string, Environment[]>(projectIds.map((id) => [id, []]));
  if (projectIds.length === 0) return byProject;
  const rows = await db.selectFrom('projectEnvironments').selectAll().where('projectId', 'in', projectIds).orderBy('position').execute();
  for (const row of rows) byProject.get(row.projectId)?.push(row);
  return byProject;
}

export async function findEnvironmentById(db: ReadOnlyDb, id: string): Promise<Environment | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('projectEnvironments').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findEnvironmentBySlug(db: ReadOnlyDb, projectId: string, slug: string): Promise<Environment | undefined> {
  return db.selectFrom('projectEnvironments').selectAll().where('projectId', '=', projectId).where('slug', '=', slug).executeTakeFirst();
}

export async function maxEnvironmentPosition(db: Executor, projectId: string): Promise<number> {
  const row = await db
    .selectFrom('projectEnvironments')
    .select((eb) => eb.fn.max('position').as('max'))
    .where('projectId', '=', projectId)
    .executeTakeFirst();
  return row?.max ?? 0;
}

/** Adds `delta` to the positions in [from, to] (inclusive; `to` open-ended when null). */
export async function isEnvironmentPositionTaken(db: Executor, projectId: string, position: number): Promise<boolean> {
  const row = await db.selectFrom('projectEnvironments').select('id').where('projectId', '=', projectId).where('position', '=', position).executeTakeFirst();
  return row !== undefined;
}

export async function shiftEnvironmentPositions(db: Executor, projectId: string, from: number, to: number | null, delta: 1 | -1): Promise<void> {
  let query = db
    .updateTable('projectEnvironments')
    .set((eb) => ({ position: eb('position', '+', delta) }))
    .where('projectId', '=', projectId)
    .where('position', '>=', from);
  if (to !== null) query = query.where('position', '<=', to);
  await query.execute();
}

export async function updateEnvironment(db: Executor, id: string, changes: { name?: string; slug?: string; position?: number }): Promise<Environment> {
  return db
    .updateTable('projectEnvironments')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteEnvironment(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('projectEnvironments').where('id', '=', id).execute();
}
