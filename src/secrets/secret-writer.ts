import { randomUUID } from 'node:crypto';
import type { Secret } from '../db/schema.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { tagsOfSecrets } from '../tags/tag-service.ts';
import { type SecretScope, secretAuditMetadata, secretChange } from './secret-scope.ts';
import { insertSecrets, insertSecretVersions, lockSharedSecrets, updateSecret } from './secret-store.ts';

/**
 * Sets shared secrets of one folder to the given values, creating the keys that are missing, as one change of the
 * place: what a secret rotation publishes (a username and its password land together, never one without the other).
 * The caller has decided who may do this; each secret's entry is audited without its value.
 */
export async function putSharedSecrets(tx: WriteContext, scope: SecretScope, values: ReadonlyMap<string, string>): Promise<Secret[]> {
  const keys = [...values.keys()];
  const existing = new Map((await lockSharedSecrets(tx.db, scope.folder.id, keys)).map((secret) => [secret.key, secret]));
  const written: Secret[] = [];
  for (const [key, value] of values) {
    const current = existing.get(key);
    if (current && scope.cipher.open(current.id, 'value', current.encryptedValue) === value) continue;
    if (current) {
      written.push(await updateSecret(tx.db, current.id, { encryptedValue: scope.cipher.seal(current.id, 'value', value) }));
      continue;
    }
    const id = randomUUID();
    const [created] = await insertSecrets(tx.db, [
      {
        id,
        folderId: scope.folder.id,
        type: 'shared',
        userId: null,
        key,
        encryptedValue: scope.cipher.seal(id, 'value', value),
        encryptedComment: null,
        skipMultilineEncoding: false,
        reminderNote: null,
        reminderRepeatDays: null,
      },
    ]);
    written.push(created!);
  }
  if (written.length === 0) return written;
  const tags = await tagsOfSecrets(
    tx.db,
    written.map((secret) => secret.id),
  );
  await insertSecretVersions(tx.db, written, new Map([...tags].map(([id, summaries]) => [id, summaries.map((tag) => tag.id)])));
  for (const secret of written) {
    tx.audit({ project: scope.project, type: existing.has(secret.key) ? 'update-secret' : 'create-secret', metadata: secretAuditMetadata(scope, secret) });
  }
  tx.change(secretChange(scope));
  return written;
}

/** The current values of shared secrets in the scope's folder, by key (missing keys absent). */
export async function readSharedSecrets(tx: WriteContext, scope: SecretScope, keys: string[]): Promise<Map<string, string>> {
  const secrets = await lockSharedSecrets(tx.db, scope.folder.id, keys);
  return new Map(secrets.map((secret) => [secret.key, scope.cipher.open(secret.id, 'value', secret.encryptedValue)]));
}
