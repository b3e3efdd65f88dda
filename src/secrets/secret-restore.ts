import type { Secret } from '../db/schema.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { setSecretTags, tagsOfSecrets } from '../tags/tag-service.ts';
import { listTags } from '../tags/tag-store.ts';
import { insertRestoredSecret, type SecretState, updateSecretToState } from './secret-history-store.ts';
import type { SecretScope } from './secret-scope.ts';
import { secretChange } from './secret-scope.ts';
import { deletePersonalOverrides, deleteSecretsByIds, insertSecretVersions, listSecretsOfFolders } from './secret-store.ts';

export interface RestoreCounts {
  created: number;
  updated: number;
  deleted: number;
}

/**
 * Makes a folder's shared secrets what they were (`target`, from listSecretStatesAt) as new versions: secrets made
 * since are deleted (with their personal overrides), deleted ones come back under their own ids, changed ones get
 * their past fields and tags (tags deleted since are left off). Records one change row when anything changed.
 */
export async function restoreFolderSecrets(tx: WriteContext, scope: SecretScope, target: readonly SecretState[]): Promise<RestoreCounts> {
  const current = (await listSecretsOfFolders(tx.db, [scope.folder.id], null)).filter((secret) => secret.type === 'shared');
  const wanted = new Map(target.map((state) => [state.secretId, state]));
  const gone = current.filter((secret) => !wanted.has(secret.id));
  await deleteSecretsByIds(
    tx.db,
    gone.map((secret) => secret.id),
  );
  await deletePersonalOverrides(
    tx.db,
    scope.folder.id,
    gone.map((secret) => secret.key),
  );
  const existingTags = new Set((await listTags(tx.db, scope.project.id)).map((tag) => tag.id));
  const currentTags = await tagsOfSecrets(
    tx.db,
    current.map((secret) => secret.id),
  );
  const kept = current.filter((secret) => wanted.has(secret.id));
  // a rename may take a key another kept secret frees in the same restore: every renamed one steps aside first
  const renamed = kept.filter((secret) => secret.key !== wanted.get(secret.id)!.key);
  for (const secret of renamed) await updateSecretToState(tx.db, secret.id, wanted.get(secret.id)!, `${secret.id}.restoring`);
  const written: { secret: Secret; tagIds: string[] }[] = [];
  for (const secret of kept) {
    const state = wanted.get(secret.id)!;
    const tagIds = state.tagIds.filter((id) => existingTags.has(id));
    const sameTags = sameSet(
      tagIds,
      (currentTags.get(secret.id) ?? []).map((tag) => tag.id),
    );
    if (secret.version === state.version && sameTags && !renamed.includes(secret)) continue;
    const updated = await updateSecretToState(tx.db, secret.id, state, state.key);
    if (!sameTags) await setSecretTags(tx.db, secret.id, tagIds);
    written.push({ secret: updated, tagIds });
  }
  const returning = target.filter((state) => !current.some((secret) => secret.id === state.secretId));
  for (const state of returning) {
    const tagIds = state.tagIds.filter((id) => existingTags.has(id));
    const secret = await insertRestoredSecret(tx.db, state);
    if (tagIds.length > 0) await setSecretTags(tx.db, secret.id, tagIds);
    written.push({ secret, tagIds });
  }
  await insertSecretVersions(
    tx.db,
    written.map((entry) => entry.secret),
    new Map(written.map((entry) => [entry.secret.id, entry.tagIds])),
  );
  const counts = { created: returning.length, updated: written.length - returning.length, deleted: gone.length };
  if (counts.created + counts.updated + counts.deleted > 0) tx.change(secretChange(scope));
  return counts;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id) => b.includes(id));
}
