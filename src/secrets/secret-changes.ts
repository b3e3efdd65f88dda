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

/** The column changes for an update of `current`, checked (rename clash, references) and sealed. */
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
    await assertReferencesReadable(tx, scope, [value]);
    changes.encryptedValue = scope.cipher.seal(current.id, 'value', value);
  }
  if (input.secretComment !== undefined) changes.encryptedComment = scope.cipher.sealComment(current.id, input.secretComment.trim());
  if (input.skipMultilineEncoding !== undefined) changes.skipMultilineEncoding = input.skipMultilineEncoding;
  if (input.secretReminderNote !== undefined) changes.reminderNote = input.secretReminderNote;
  if (input.secretReminderRepeatDays !== undefined) changes.reminderRepeatDays = input.secretReminderRepeatDays;
  return changes;
}
