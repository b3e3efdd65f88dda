import { randomUUID } from 'node:crypto';
import type { Secret } from '../db/schema.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { tagsOfSecrets } from '../tags/tag-service.ts';
import { secretChangesFor } from './secret-changes.ts';
import { assertReferencesReadable } from './secret-references.ts';
import { normalizeSecretValue } from './secret-schema.ts';
import { type SecretScope, secretAuditMetadata, secretChange } from './secret-scope.ts';
import { deletePersonalOverrides, deleteSecretsByIds, findSecret, insertSecrets, insertSecretVersions, renamePersonalOverrides, updateSecret } from './secret-store.ts';

/** The shared secret and version an edit was proposed against; null: the key was free. */
export interface EditBase {
  secretId: string;
  version: number;
}

/** A change to one shared secret proposed earlier and applied later (an approval request's merge). */
export interface SecretEdit {
  op: 'create' | 'update' | 'delete';
  key: string;
  newKey?: string | null;
  value?: string;
  comment?: string;
  skipMultilineEncoding?: boolean | null;
  base: EditBase | null;
}

export interface EditConflict {
  secretKey: string;
  op: SecretEdit['op'];
}

/** The shared secret at `key` now, as a base for an edit proposed against it. */
export async function editBase(tx: WriteContext, scope: SecretScope, key: string): Promise<EditBase | null> {
  const secret = await findSecret(tx.db, scope.folder.id, key, 'shared', null);
  return secret ? { secretId: secret.id, version: secret.version } : null;
}

/**
 * The edits whose secret changed since they were proposed (another version, deleted, or a key taken meanwhile),
 * read under row locks so nothing changes them before the transaction ends.
 */
export async function editConflicts(tx: WriteContext, scope: SecretScope, edits: readonly SecretEdit[]): Promise<EditConflict[]> {
  const conflicts: EditConflict[] = [];
  for (const edit of edits) {
    const current = await findSecret(tx.db, scope.folder.id, edit.key, 'shared', null, { lock: true });
    const moved = edit.base === null ? current !== undefined : current?.id !== edit.base.secretId || current.version !== edit.base.version;
    const renamedOnto = edit.newKey && edit.newKey !== edit.key && (await findSecret(tx.db, scope.folder.id, edit.newKey, 'shared', null));
    if (moved || renamedOnto) conflicts.push({ secretKey: edit.key, op: edit.op });
  }
  return conflicts;
}

/** Applies edits checked by editConflicts in this transaction: each a new version and an audit entry, one change row. */
export async function applySecretEdits(tx: WriteContext, scope: SecretScope, edits: readonly SecretEdit[]): Promise<Secret[]> {
  const applied: Secret[] = [];
  for (const edit of edits) {
    const { secret, event } = await applyEdit(tx, scope, edit);
    tx.audit({ project: scope.project, type: event, metadata: secretAuditMetadata(scope, secret) });
    applied.push(secret);
  }
  if (applied.length > 0) tx.change(secretChange(scope));
  return applied;
}

async function applyEdit(tx: WriteContext, scope: SecretScope, edit: SecretEdit): Promise<{ secret: Secret; event: string }> {
  if (edit.op === 'create') return { secret: await createShared(tx, scope, edit), event: 'create-secret' };
  const current = await findSecret(tx.db, scope.folder.id, edit.key, 'shared', null, { lock: true });
  if (!current) throw new Error('applySecretEdits: an edit without its base (editConflicts first)');
  if (edit.op === 'delete') {
    await deleteSecretsByIds(tx.db, [current.id]);
    await deletePersonalOverrides(tx.db, scope.folder.id, [current.key]);
    return { secret: current, event: 'delete-secret' };
  }
  const changes = await secretChangesFor(tx, scope, current, {
    newSecretName: edit.newKey ?? undefined,
    secretValue: edit.value,
    secretComment: edit.comment,
    skipMultilineEncoding: edit.skipMultilineEncoding ?? undefined,
  });
  if (Object.keys(changes).length === 0) return { secret: current, event: 'update-secret' };
  const secret = await updateSecret(tx.db, current.id, changes);
  if (changes.key) await renamePersonalOverrides(tx.db, scope.folder.id, current.key, changes.key);
  const tags = (await tagsOfSecrets(tx.db, [secret.id])).get(secret.id) ?? [];
  await insertSecretVersions(tx.db, [secret], new Map([[secret.id, tags.map((tag) => tag.id)]]));
  return { secret, event: 'update-secret' };
}

async function createShared(tx: WriteContext, scope: SecretScope, edit: SecretEdit): Promise<Secret> {
  const value = normalizeSecretValue(edit.value ?? '');
  await assertReferencesReadable(tx, scope, [value]);
  const id = randomUUID();
  const [secret] = await insertSecrets(tx.db, [
    {
      id,
      folderId: scope.folder.id,
      type: 'shared',
      userId: null,
      key: edit.key,
      encryptedValue: scope.cipher.seal(id, 'value', value),
      encryptedComment: scope.cipher.sealComment(id, edit.comment?.trim() ?? ''),
      skipMultilineEncoding: edit.skipMultilineEncoding ?? false,
      reminderNote: null,
      reminderRepeatDays: null,
    },
  ]);
  await insertSecretVersions(tx.db, [secret!], new Map());
  return secret!;
}
