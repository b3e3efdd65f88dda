import type { Secret } from '../db/schema.ts';
import { BadRequestError } from '../errors.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { assertReferencesReadable } from './secret-references.ts';
import { normalizeSecretKey, normalizeSecretValue } from './secret-schema.ts';
import type { SecretScope } from './secret-scope.ts';
import { findSecret, type SecretChanges } from './secret-store.ts';

/** The fields an update may change; absent ones stay as they are. */
export interface SecretFieldChanges {
  newSecretName?: string;
  secretValue?: string;
  secretComment?: string;
  skipMultilineEncoding?: boolean;
  secretReminderNote?: string | null;
  secretReminderRepeatDays?: number | null;
}

/**
 * The column changes for an update of `current`, checked (rename clash,
 * references) and sealed: only the fields whose new value differs from the
 * stored one, so an update that stores what is there yields no change.
 */
export async function secretChangesFor(tx: WriteContext, scope: SecretScope, current: Secret, input: SecretFieldChanges): Promise<SecretChanges> {
  const changes: SecretChanges = {};
  if (input.newSecretName !== undefined) {
    const newKey = normalizeSecretKey(input.newSecretName);
    if (newKey !== current.key) {
      if (current.type === 'personal') throw new BadRequestError('Personal secret cannot change the key name', 'PersonalSecretRename');
      if (await findSecret(tx.db, scope.folder.id, newKey, 'shared', null)) {
        throw new BadRequestError(`Secret '${newKey}' already exists in '${scope.path}'`, 'SecretExists');
      }
      changes.key = newKey;
    }
  }
  if (input.secretValue !== undefined) {
    const value = normalizeSecretValue(input.secretValue);
    // checked even when unchanged: the answer must not depend on whether the caller guessed the stored value
    await assertReferencesReadable(tx, scope, [value]);
    if (value !== scope.cipher.open(current.id, 'value', current.encryptedValue)) changes.encryptedValue = scope.cipher.seal(current.id, 'value', value);
  }
  if (input.secretComment !== undefined) {
    const comment = input.secretComment.trim();
    if (comment !== scope.cipher.open(current.id, 'comment', current.encryptedComment)) changes.encryptedComment = scope.cipher.sealComment(current.id, comment);
  }
  if (input.skipMultilineEncoding !== undefined && input.skipMultilineEncoding !== current.skipMultilineEncoding) {
    changes.skipMultilineEncoding = input.skipMultilineEncoding;
  }
  if (input.secretReminderNote !== undefined && input.secretReminderNote !== current.reminderNote) changes.reminderNote = input.secretReminderNote;
  if (input.secretReminderRepeatDays !== undefined && input.secretReminderRepeatDays !== current.reminderRepeatDays) {
    changes.reminderRepeatDays = input.secretReminderRepeatDays;
  }
  return changes;
}

/** The secret's tags would be replaced by other ones (`requested` undefined: left as they are). */
export function tagsChange(current: readonly { id: string }[], requested: readonly string[] | undefined): boolean {
  if (requested === undefined) return false;
  const wanted = new Set(requested);
  return wanted.size !== current.length || current.some((tag) => !wanted.has(tag.id));
}
