import { sql } from 'kysely';
import type { ChangeRecord } from '../changes/change-feed.ts';
import type { Secret, SecretVersion } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

/** A shared secret's version as it stood at a revision. */
export type SecretState = SecretVersion;

/**
 * The shared secrets of the folders as they stood at `revision`: for each secret, its newest version written by a
 * transaction whose change rows are at or below the revision (versions from before history was kept count as
 * older than all), unless a deletion at or below the revision came after it.
 */
export async function listSecretStatesAt(db: ReadOnlyDb, folderIds: readonly string[], revision: number): Promise<SecretState[]> {
  if (folderIds.length === 0) return [];
  const folders = sql.join(folderIds.map((id) => sql`${id}::uuid`));
  const { rows } = await sql<SecretState & { revision: number }>`
    WITH written AS (
      SELECT c.xact, max(c.revision) AS revision FROM change_log c
      WHERE c.xact IN (SELECT xact FROM secret_versions WHERE folder_id IN (${folders}) UNION SELECT xact FROM secret_deletions WHERE folder_id IN (${folders}))
      GROUP BY c.xact
    ),
    versions AS (
      SELECT DISTINCT ON (v.secret_id) v.*, coalesce(w.revision, 0) AS revision
      FROM secret_versions v LEFT JOIN written w ON w.xact = v.xact
      WHERE v.folder_id IN (${folders}) AND v.type = 'shared' AND (v.xact IS NULL OR w.revision <= ${revision})
      ORDER BY v.secret_id, v.version DESC
    ),
    deleted AS (
      SELECT d.secret_id, max(w.revision) AS revision
      FROM secret_deletions d JOIN written w ON w.xact = d.xact
      WHERE d.folder_id IN (${folders}) AND w.revision <= ${revision}
      GROUP BY d.secret_id
    )
    SELECT versions.id, versions.secret_id AS "secretId", versions.folder_id AS "folderId", versions.version, versions.type,
      versions.user_id AS "userId", versions.key, versions.encrypted_value AS "encryptedValue", versions.encrypted_comment AS "encryptedComment",
      versions.skip_multiline_encoding AS "skipMultilineEncoding", versions.reminder_note AS "reminderNote",
      versions.reminder_repeat_days AS "reminderRepeatDays", versions.metadata, versions.tag_ids AS "tagIds",
      versions.created_at AS "createdAt", versions.xact
    FROM versions LEFT JOIN deleted ON deleted.secret_id = versions.secret_id
    WHERE deleted.revision IS NULL OR deleted.revision < versions.revision
    ORDER BY versions.key`.execute(db);
  return rows;
}

/** The change rows of secret writes at one folder (by environment and path), newest first. */
export async function listFolderSecretChanges(
  db: ReadOnlyDb,
  place: { projectId: string; environmentId: string; secretPath: string },
  page: { limit: number; offset: number },
): Promise<ChangeRecord[]> {
  const rows = await folderSecretChanges(db, place)
    .select(['revision', 'projectId', 'environmentId', 'environmentSlug', 'secretPath', 'kind', 'createdAt'])
    .orderBy('revision', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return rows as ChangeRecord[];
}

export async function countFolderSecretChanges(db: ReadOnlyDb, place: { projectId: string; environmentId: string; secretPath: string }): Promise<number> {
  const row = await folderSecretChanges(db, place)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

function folderSecretChanges(db: ReadOnlyDb, place: { projectId: string; environmentId: string; secretPath: string }) {
  return db
    .selectFrom('changeLog')
    .where('projectId', '=', place.projectId)
    .where('environmentId', '=', place.environmentId)
    .where('secretPath', '=', place.secretPath)
    .where('kind', '=', 'secret');
}

export async function findChange(db: ReadOnlyDb, revision: number): Promise<ChangeRecord | undefined> {
  const row = await db
    .selectFrom('changeLog')
    .select(['revision', 'projectId', 'environmentId', 'environmentSlug', 'secretPath', 'kind', 'createdAt'])
    .where('revision', '=', revision)
    .executeTakeFirst();
  return row as ChangeRecord | undefined;
}

/** The newest revision committed at or before `time` (0 before any). */
export async function findRevisionAt(db: Executor, time: Date): Promise<number> {
  const row = await db
    .selectFrom('changeLog')
    .select((eb) => eb.fn.max('revision').as('revision'))
    .where('createdAt', '<=', time)
    .executeTakeFirst();
  return Number(row?.revision ?? 0);
}

/** Puts a deleted secret back under its own id (its sealed fields are bound to it), at the version after its last. */
export async function insertRestoredSecret(db: Executor, state: SecretState): Promise<Secret> {
  const last = await db
    .selectFrom('secretVersions')
    .select((eb) => eb.fn.max('version').as('version'))
    .where('secretId', '=', state.secretId)
    .executeTakeFirst();
  return db
    .insertInto('secrets')
    .values({
      id: state.secretId,
      folderId: state.folderId,
      type: 'shared',
      userId: null,
      key: state.key,
      version: Number(last?.version ?? 0) + 1,
      encryptedValue: state.encryptedValue,
      encryptedComment: state.encryptedComment,
      skipMultilineEncoding: state.skipMultilineEncoding,
      reminderNote: state.reminderNote,
      reminderRepeatDays: state.reminderRepeatDays,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Sets a secret's fields to a past version's, as a new version. */
export async function updateSecretToState(db: Executor, id: string, state: SecretState, key: string): Promise<Secret> {
  return db
    .updateTable('secrets')
    .set((eb) => ({
      key,
      encryptedValue: state.encryptedValue,
      encryptedComment: state.encryptedComment,
      skipMultilineEncoding: state.skipMultilineEncoding,
      reminderNote: state.reminderNote,
      reminderRepeatDays: state.reminderRepeatDays,
      version: eb('version', '+', 1),
      updatedAt: new Date(),
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
