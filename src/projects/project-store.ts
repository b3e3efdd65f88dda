import { compiledSelect } from '../db/compiled-select.ts';
import { isUuid } from '../db/uuid.ts';
import type { Project } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function insertProject(db: Executor, values: { name: string; slug: string; orgId: string }): Promise<Project> {
  return db.insertInto('projects').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function setProjectDataKey(db: Executor, projectId: string, encryptedDataKey: Buffer): Promise<void> {
  await db.updateTable('projects').set({ encryptedDataKey }).where('id', '=', projectId).execute();
}

/** Every project's wrapped data key, locked (FOR UPDATE) for the rest of the transaction: root key rotation. */
export async function listProjectDataKeys(db: Executor): Promise<{ id: string; encryptedDataKey: Buffer }[]> {
  const rows = await db.selectFrom('projects').select(['id', 'encryptedDataKey']).where('encryptedDataKey', 'is not', null).orderBy('id').forUpdate().execute();
  return rows.map((row) => ({ id: row.id, encryptedDataKey: row.encryptedDataKey! }));
}

/** One project's wrapped data key, if any project has one (a key check on a database recorded before check values). */
export async function findAnyProjectDataKey(db: Executor): Promise<{ id: string; encryptedDataKey: Buffer } | undefined> {
  const row = await db.selectFrom('projects').select(['id', 'encryptedDataKey']).where('encryptedDataKey', 'is not', null).limit(1).executeTakeFirst();
  return row ? { id: row.id, encryptedDataKey: row.encryptedDataKey! } : undefined;
}

export async function findProjectById(db: ReadOnlyDb, id: string): Promise<Project | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findProjectBySlug(db: ReadOnlyDb, orgId: string, slug: string): Promise<Project | undefined> {
  return db.selectFrom('projects').selectAll().where('orgId', '=', orgId).where('slug', '=', slug).executeTakeFirst();
}

/** Locks the project row for the rest of the transaction; serialises environment changes. */
export async function lockProject(db: ReadOnlyDb, id: string): Promise<Project | undefined> {
  if (!isUuid(id)) return undefined;
  const [project] = await selectProjectForUpdate(db, id);
  return project;
}

const selectProjectForUpdate = compiledSelect((db, id: string) => db.selectFrom('projects').selectAll().where('id', '=', id).forUpdate());

/** The organization's projects; with `member`, only those it is a member of. */
export async function listProjectsOfOrg(db: ReadOnlyDb, orgId: string, member: { kind: 'user' | 'identity'; id: string } | null): Promise<Project[]> {
  let query = db.selectFrom('projects').selectAll().where('orgId', '=', orgId);
  if (member?.kind === 'identity') {
    const memberships = db.selectFrom('identityProjectMemberships').select('projectId').where('identityId', '=', member.id);
    query = query.where('id', 'in', memberships);
  } else if (member) {
    query = query.where('id', 'in', db.selectFrom('projectMemberships').select('projectId').where('userId', '=', member.id));
  }
  return query.orderBy('name').orderBy('id').execute();
}

export async function updateProject(db: Executor, id: string, changes: { name?: string; autoCapitalization?: boolean }): Promise<Project> {
  return db
    .updateTable('projects')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteProject(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('projects').where('id', '=', id).execute();
}

export async function addIdentityProjectAdmin(db: Executor, projectId: string, identityId: string): Promise<void> {
  const membership = await db.insertInto('identityProjectMemberships').values({ projectId, identityId }).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('projectMembershipRoles').values({ identityProjectMembershipId: membership.id, role: 'admin' }).execute();
}

export async function addUserProjectAdmin(db: Executor, projectId: string, userId: string): Promise<void> {
  const membership = await db.insertInto('projectMemberships').values({ projectId, userId }).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('projectMembershipRoles').values({ projectMembershipId: membership.id, role: 'admin' }).execute();
}
