import { randomUUID } from 'node:crypto';
import type { Actor } from '../actor/actor.ts';
import type { Secret } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { requireTagsByIds, setSecretTags, tagsOfSecrets } from '../tags/tag-service.ts';
import { secretChangesFor, tagsChange } from './secret-changes.ts';
import { assertReferencesReadable } from './secret-references.ts';
import { normalizeSecretKey, normalizeSecretValue, type RawSecret } from './secret-schema.ts';
import { resolveSecretScope, type SecretLocation, type SecretScope, secretChange, toRawSecret } from './secret-scope.ts';
import { directWriteAllowance } from './protected-places.ts';
import { personalOwner } from './secret-service.ts';
import {
  deletePersonalOverrides,
  deleteSecretsByIds,
  findSecret,
  insertSecrets,
  insertSecretVersions,
  lockSharedSecrets,
  renamePersonalOverrides,
  type SecretType,
  updateSecret,
} from './secret-store.ts';

export interface BatchCreateItem {
  secretKey: string;
  secretValue: string;
  secretComment?: string;
  skipMultilineEncoding?: boolean;
  tagIds?: string[];
}

export interface BatchUpdateItem {
  secretKey: string;
  secretValue?: string;
  secretComment?: string;
  skipMultilineEncoding?: boolean;
  newSecretName?: string;
  tagIds?: string[];
  secretReminderNote?: string | null;
  secretReminderRepeatDays?: number | null;
}

export interface BatchDeleteItem {
  secretKey: string;
  type: SecretType;
}

/** The normalized keys; 400 `DuplicateInBatch` when one is named twice. */
export function uniqueKeys(names: string[]): string[] {
  const keys = names.map(normalizeSecretKey);
  const repeated = keys.filter((key, index) => keys.indexOf(key) !== index);
  if (repeated.length > 0) throw new BadRequestError(`Secret names repeated in the batch: ${[...new Set(repeated)].join(',')}`, 'DuplicateInBatch');
  return keys;
}

/** Batch writes: all of a batch commits, or none of it. */
export class SecretBatchService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async createMany(actor: Actor, location: SecretLocation, items: BatchCreateItem[]): Promise<RawSecret[]> {
    const keys = uniqueKeys(items.map((item) => item.secretKey));
    return this.#run(actor, location, 'create', 'create-secrets', async (tx, scope) => {
      const trx = tx.db;
      const existing = await lockSharedSecrets(trx, scope.folder.id, keys);
      if (existing.length > 0) throw new BadRequestError(`Secret already exist: ${existing.map((secret) => secret.key).join(',')}`, 'SecretExists');
      await requireTagsByIds(
        trx,
        scope.project.id,
        items.flatMap((item) => item.tagIds ?? []),
      );
      const values = items.map((item) => normalizeSecretValue(item.secretValue));
      await assertReferencesReadable(tx, scope, values);
      const rows = items.map((item, index) => {
        const id = randomUUID();
        return {
          id,
          folderId: scope.folder.id,
          type: 'shared' as const,
          userId: null,
          key: keys[index]!,
          encryptedValue: scope.cipher.seal(id, 'value', values[index]!),
          encryptedComment: scope.cipher.sealComment(id, item.secretComment?.trim() ?? ''),
          skipMultilineEncoding: item.skipMultilineEncoding ?? false,
          reminderNote: null,
          reminderRepeatDays: null,
        };
      });
      const created = await insertSecrets(trx, rows);
      const tagIds = new Map(created.map((secret, index) => [secret.id, [...new Set(items[index]!.tagIds ?? [])]]));
      for (const [secretId, ids] of tagIds) await setSecretTags(trx, secretId, ids);
      await insertSecretVersions(trx, created, tagIds);
      return { answered: created, changed: created };
    });
  }

  async updateMany(actor: Actor, location: SecretLocation, items: BatchUpdateItem[]): Promise<RawSecret[]> {
    const keys = uniqueKeys(items.map((item) => item.secretKey));
    uniqueKeys(items.flatMap((item) => (item.newSecretName ? [item.newSecretName] : [])));
    return this.#run(actor, location, 'edit', 'update-secrets', async (tx, scope) => {
      const trx = tx.db;
      const current = new Map((await lockSharedSecrets(trx, scope.folder.id, keys)).map((secret) => [secret.key, secret]));
      const missing = keys.filter((key) => !current.has(key));
      if (missing.length > 0) throw new NotFoundError(`Secret does not exist: ${missing.join(',')}`);
      await requireTagsByIds(
        trx,
        scope.project.id,
        items.flatMap((item) => item.tagIds ?? []),
      );
      const currentTags = await tagsOfSecrets(
        trx,
        [...current.values()].map((secret) => secret.id),
      );
      const answered: Secret[] = [];
      const updated: Secret[] = [];
      for (const [index, item] of items.entries()) {
        const secret = current.get(keys[index]!)!;
        const changes = await secretChangesFor(tx, scope, secret, item);
        const retag = tagsChange(currentTags.get(secret.id) ?? [], item.tagIds);
        // an item that stores what is there is left alone: no version
        if (Object.keys(changes).length === 0 && !retag) {
          answered.push(secret);
          continue;
        }
        const next = await updateSecret(trx, secret.id, changes);
        if (changes.key) await renamePersonalOverrides(trx, scope.folder.id, secret.key, changes.key);
        if (item.tagIds && retag) await setSecretTags(trx, secret.id, [...new Set(item.tagIds)]);
        answered.push(next);
        updated.push(next);
      }
      const tags = await tagsOfSecrets(
        trx,
        updated.map((secret) => secret.id),
      );
      await insertSecretVersions(trx, updated, new Map(updated.map((secret) => [secret.id, (tags.get(secret.id) ?? []).map((tag) => tag.id)])));
      return { answered, changed: updated };
    });
  }

  async deleteMany(actor: Actor, location: SecretLocation, items: BatchDeleteItem[]): Promise<RawSecret[]> {
    const keys = uniqueKeys(items.map((item) => item.secretKey));
    const owners = items.map((item) => personalOwner(actor, item.type, 'delete'));
    return this.#run(actor, location, 'delete', 'delete-secrets', async (tx, scope) => {
      const trx = tx.db;
      const found: Secret[] = [];
      const missing: string[] = [];
      for (const [index, item] of items.entries()) {
        const secret = await findSecret(trx, scope.folder.id, keys[index]!, item.type, owners[index]!, { lock: true });
        if (secret) found.push(secret);
        else missing.push(keys[index]!);
      }
      if (missing.length > 0) throw new NotFoundError(`Secret does not exist: ${missing.join(',')}`);
      await deleteSecretsByIds(
        trx,
        found.map((secret) => secret.id),
      );
      await deletePersonalOverrides(
        trx,
        scope.folder.id,
        found.filter((secret) => secret.type === 'shared').map((secret) => secret.key),
      );
      return { answered: found, changed: found };
    });
  }

  /**
   * One batch, one transaction: scope and permission, the change, one audit
   * entry for what changed, one change row; a batch that changed nothing (every
   * update storing what was there) leaves neither.
   */
  #run(
    actor: Actor,
    location: SecretLocation,
    action: 'create' | 'edit' | 'delete',
    event: string,
    change: (tx: WriteContext, scope: SecretScope) => Promise<{ answered: Secret[]; changed: Secret[] }>,
  ): Promise<RawSecret[]> {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const scope = await resolveSecretScope(this.#deps, tx, location, action);
      const { answered, changed } = await change(tx, scope);
      const tags = await tagsOfSecrets(
        tx.db,
        answered.map((secret) => secret.id),
      );
      const bypass = changed.some((secret) => secret.type === 'shared') ? await directWriteAllowance(tx, scope) : undefined;
      if (changed.length > 0) {
        tx.audit({
          project: scope.project,
          type: event,
          metadata: {
            environment: scope.environment.slug,
            secretPath: scope.path,
            secrets: changed.map((secret) => ({ secretId: secret.id, secretKey: secret.key, secretVersion: secret.version })),
            ...bypass,
          },
        });
        tx.change(secretChange(scope));
      }
      return answered.map((secret) => toRawSecret(secret, scope, tags.get(secret.id) ?? []));
    });
  }
}
