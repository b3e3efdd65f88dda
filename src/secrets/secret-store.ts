import { type AliasableExpression, type ExpressionBuilder, type QueryCreator, sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { DB, Secret, SecretTag, SecretVersion } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export type SecretType = 'shared' | 'personal';

export type NewSecret = Pick<
  Secret,
  'id' | 'folderId' | 'type' | 'userId' | 'key' | 'encryptedValue' | 'encryptedComment' | 'skipMultilineEncoding' | 'reminderNote' | 'reminderRepeatDays'
>;

export type SecretChanges = Partial<Pick<Secret, 'key' | 'encryptedValue' | 'encryptedComment' | 'skipMultilineEncoding' | 'reminderNote' | 'reminderRepeatDays'>>;

export async function insertSecrets(db: Executor, secrets: NewSecret[]): Promise<Secret[]> {
  if (secrets.length === 0) return [];
  return db.insertInto('secrets').values(secrets).returningAll().execute();
}

/** The shared secret of a key, or the user's personal override of it. */
export async function findSecret(
  db: ReadOnlyDb,
  folderId: string,
  key: string,
  type: SecretType,
  userId: string | null,
  options: { lock?: boolean } = {},
): Promise<Secret | undefined> {
  let query = db.selectFrom('secrets').selectAll().where('folderId', '=', folderId).where('key', '=', key).where('type', '=', type);
  if (type === 'personal') query = query.where('userId', '=', userId);
  if (options.lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Shared secrets of the given keys in a folder, locked for update. */
export async function lockSharedSecrets(db: Executor, folderId: string, keys: string[]): Promise<Secret[]> {
  if (keys.length === 0) return [];
  return db.selectFrom('secrets').selectAll().where('folderId', '=', folderId).where('type', '=', 'shared').where('key', 'in', keys).orderBy('key').forUpdate().execute();
}

/** Shared secrets of the folders, plus the personal overrides of `userId` when given; by key. */
/** The folders' shared secrets and `userId`'s personal overrides, by folder, key, shared first. */
function secretsOfFolders(db: ReadOnlyDb, folderIds: string[], userId: string | null) {
  return db
    .selectFrom('secrets')
    .where('folderId', 'in', folderIds)
    .where((eb) => (userId ? eb.or([eb('type', '=', 'shared'), eb('userId', '=', userId)]) : eb('type', '=', 'shared')))
    .orderBy('folderId')
    .orderBy('key')
    .orderBy('type', 'desc');
}

export async function listSecretsOfFolders(db: ReadOnlyDb, folderIds: string[], userId: string | null): Promise<Secret[]> {
  if (folderIds.length === 0) return [];
  return secretsOfFolders(db, folderIds, userId).selectAll().execute();
}

/** A tag as listed with a secret. */
export type LinkedTag = Pick<SecretTag, 'id' | 'slug' | 'color'>;

/** listSecretsOfFolders, each secret with its tags (slug order) in the same statement. */
export async function listSecretsWithTagsOfFolders(db: ReadOnlyDb, folderIds: string[], userId: string | null): Promise<(Secret & { tags: LinkedTag[] })[]> {
  if (folderIds.length === 0) return [];
  return secretsOfFolders(db, folderIds, userId).selectAll('secrets').select(linkedTags(db, 'secrets.id').as('tags')).execute();
}

/** The tags linked to the secret whose id is `secretId` (a column of the outer query), as a JSON array in slug order. */
function linkedTags(qb: Pick<ReadOnlyDb, 'selectFrom'>, secretId: 'secrets.id' | 'written.id') {
  return jsonArrayFrom(
    qb
      .selectFrom('secretTagLinks')
      .innerJoin('secretTags', 'secretTags.id', 'secretTagLinks.tagId')
      .select(['secretTags.id', 'secretTags.slug', 'secretTags.color'])
      .whereRef('secretTagLinks.secretId', '=', sql.ref(secretId))
      .orderBy(sql`${sql.ref('secretTags.slug')} collate "C"`),
  );
}

export async function updateSecret(db: Executor, id: string, changes: SecretChanges): Promise<Secret> {
  return db
    .updateTable('secrets')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1), updatedAt: new Date() }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Renames the personal overrides that follow a renamed shared secret. */
export async function renamePersonalOverrides(db: Executor, folderId: string, oldKey: string, newKey: string): Promise<void> {
  await db
    .updateTable('secrets')
    .set({ key: newKey, updatedAt: new Date() })
    .where('folderId', '=', folderId)
    .where('type', '=', 'personal')
    .where('key', '=', oldKey)
    .execute();
}

export async function deleteSecretsByIds(db: Executor, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('secrets').where('id', 'in', ids).execute();
}

/** Every user's personal overrides of the given shared keys. */
export async function deletePersonalOverrides(db: Executor, folderId: string, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.deleteFrom('secrets').where('folderId', '=', folderId).where('type', '=', 'personal').where('key', 'in', keys).execute();
}

/** What a version row copies from its secret, in the order of `versionOf`'s columns. */
const VERSION_COLUMNS = [
  'secretId',
  'folderId',
  'version',
  'type',
  'userId',
  'key',
  'encryptedValue',
  'encryptedComment',
  'skipMultilineEncoding',
  'reminderNote',
  'reminderRepeatDays',
  'tagIds',
] as const;

/** The version row of each secret a WITH clause named `written` returned, with `tagIds` (an expression over `written`). */
function versionOf(
  qb: QueryCreator<DB & { written: Secret }>,
  tagIds: (written: ExpressionBuilder<DB & { written: Secret }, 'written'>) => AliasableExpression<string[]>,
) {
  return qb
    .insertInto('secretVersions')
    .columns(VERSION_COLUMNS)
    .expression(
      qb
        .selectFrom('written')
        .select([
          'written.id',
          'written.folderId',
          'written.version',
          'written.type',
          'written.userId',
          'written.key',
          'written.encryptedValue',
          'written.encryptedComment',
          'written.skipMultilineEncoding',
          'written.reminderNote',
          'written.reminderRepeatDays',
        ])
        .select((eb) => tagIds(eb).as('tagIds')),
    );
}

/**
 * A new secret and its first version, in one statement; undefined when its key is taken in the folder (for a
 * personal secret: by the same user). The unique index decides, so a concurrent create of the same key gets
 * undefined too, once it commits. The version records `tagIds`; the caller links them after.
 */
export async function insertSecretIfAbsent(db: Executor, secret: NewSecret, tagIds: readonly string[]): Promise<Secret | undefined> {
  const sameKey = secret.type === 'shared' ? (['folderId', 'key'] as const) : (['folderId', 'key', 'userId'] as const);
  return db
    .with('written', (qb) =>
      qb
        .insertInto('secrets')
        .values(secret)
        .onConflict((conflict) =>
          // a literal: a parameter here leaves a prepared statement's generic plan no index to infer (postgres-pool.ts)
          conflict
            .columns([...sameKey])
            .where('type', '=', sql.lit(secret.type))
            .doNothing(),
        )
        .returningAll(),
    )
    .with('versioned', (qb) => versionOf(qb, () => sql<string[]>`${[...tagIds]}::uuid[]`))
    .selectFrom('written')
    .selectAll()
    .executeTakeFirst();
}

/**
 * updateSecret and the new version's row in one statement, the version with the tags linked to the secret now
 * (earlier statements of the transaction included); answers the secret with those tags, in slug order.
 */
export async function updateSecretWithVersion(db: Executor, id: string, changes: SecretChanges): Promise<Secret & { tags: LinkedTag[] }> {
  const linkedTagIds = (eb: ExpressionBuilder<DB & { written: Secret }, 'written'>) =>
    eb.fn.coalesce(
      eb
        .selectFrom('secretTagLinks')
        .whereRef('secretTagLinks.secretId', '=', 'written.id')
        .select((inner) => sql<string[]>`array_agg(${inner.ref('secretTagLinks.tagId')})`.as('ids')),
      sql<string[]>`'{}'::uuid[]`,
    );
  return db
    .with('written', (qb) =>
      qb
        .updateTable('secrets')
        .set((eb) => ({ ...changes, version: eb('version', '+', 1), updatedAt: new Date() }))
        .where('id', '=', id)
        .returningAll(),
    )
    .with('versioned', (qb) => versionOf(qb, linkedTagIds))
    .selectFrom('written')
    .selectAll('written')
    .select(linkedTags(db, 'written.id').as('tags'))
    .executeTakeFirstOrThrow();
}

export async function insertSecretVersions(db: Executor, secrets: Secret[], tagIds: Map<string, string[]>): Promise<void> {
  if (secrets.length === 0) return;
  await db
    .insertInto('secretVersions')
    .values(
      secrets.map((secret) => ({
        secretId: secret.id,
        folderId: secret.folderId,
        version: secret.version,
        type: secret.type,
        userId: secret.userId,
        key: secret.key,
        encryptedValue: secret.encryptedValue,
        encryptedComment: secret.encryptedComment,
        skipMultilineEncoding: secret.skipMultilineEncoding,
        reminderNote: secret.reminderNote,
        reminderRepeatDays: secret.reminderRepeatDays,
        tagIds: tagIds.get(secret.id) ?? [],
      })),
    )
    .execute();
}

export async function findSecretVersion(db: ReadOnlyDb, secretId: string, version: number): Promise<SecretVersion | undefined> {
  return db.selectFrom('secretVersions').selectAll().where('secretId', '=', secretId).where('version', '=', version).executeTakeFirst();
}

export async function listSecretVersions(db: Executor, secretId: string): Promise<SecretVersion[]> {
  return db.selectFrom('secretVersions').selectAll().where('secretId', '=', secretId).orderBy('version').execute();
}
