import { sql } from 'kysely';
import { isUuid } from '../db/uuid.ts';
import type { SecretTag } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

/** Byte order, so both backends list slugs alike whatever the database collation. */
const bySlug = sql`${sql.ref('secretTags.slug')} collate "C"`;

export async function insertTag(
  db: Executor,
  values: { projectId: string; slug: string; color: string; createdBy: string; createdByActorType: string },
): Promise<SecretTag> {
  return db.insertInto('secretTags').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function listTags(db: ReadOnlyDb, projectId: string): Promise<SecretTag[]> {
  return db.selectFrom('secretTags').selectAll().where('projectId', '=', projectId).orderBy(bySlug).execute();
}

export async function findTagById(db: ReadOnlyDb, id: string): Promise<SecretTag | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('secretTags').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findTagBySlug(db: ReadOnlyDb, projectId: string, slug: string): Promise<SecretTag | undefined> {
  return db.selectFrom('secretTags').selectAll().where('projectId', '=', projectId).where('slug', '=', slug).executeTakeFirst();
}

export async function findTagsByIds(db: Executor, projectId: string, ids: string[]): Promise<SecretTag[]> {
  const uuids = ids.filter(isUuid);
  if (uuids.length === 0) return [];
  return db.selectFrom('secretTags').selectAll().where('projectId', '=', projectId).where('id', 'in', uuids).orderBy(bySlug).execute();
}

export async function findTagsBySlugs(db: ReadOnlyDb, projectId: string, slugs: string[]): Promise<SecretTag[]> {
  if (slugs.length === 0) return [];
  return db.selectFrom('secretTags').selectAll().where('projectId', '=', projectId).where('slug', 'in', slugs).orderBy(bySlug).execute();
}

export async function updateTag(db: Executor, id: string, changes: { slug?: string; color?: string }): Promise<SecretTag> {
  return db
    .updateTable('secretTags')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteTag(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('secretTags').where('id', '=', id).execute();
}

/** The tags linked to each of the secrets, one row per link, in slug order. */
export async function listTagLinks(db: ReadOnlyDb, secretIds: string[]): Promise<Array<SecretTag & { secretId: string }>> {
  const uuids = secretIds.filter(isUuid);
  if (uuids.length === 0) return [];
  return db
    .selectFrom('secretTagLinks')
    .innerJoin('secretTags', 'secretTags.id', 'secretTagLinks.tagId')
    .selectAll('secretTags')
    .select('secretTagLinks.secretId')
    .where('secretTagLinks.secretId', 'in', uuids)
    .orderBy(bySlug)
    .execute();
}

export async function deleteTagLinksOfSecret(db: Executor, secretId: string): Promise<void> {
  await db.deleteFrom('secretTagLinks').where('secretId', '=', secretId).execute();
}

export async function insertTagLinks(db: Executor, secretId: string, tagIds: string[]): Promise<void> {
  if (tagIds.length === 0) return;
  await db
    .insertInto('secretTagLinks')
    .values(tagIds.map((tagId) => ({ secretId, tagId })))
    .execute();
}
