import { randomUUID } from 'node:crypto';
import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { Secret } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { requireTagsByIds, setSecretTags, tagsOfSecrets, toTagSummary } from '../tags/tag-service.ts';
import { secretChangesFor } from './secret-changes.ts';
import { assertReferencesReadable } from './secret-references.ts';
import { normalizeSecretKey, normalizeSecretValue, type RawSecret } from './secret-schema.ts';
import {
  auditScope,
  resolveSecretScope,
  type SecretLocation,
  type SecretScope,
  secretAuditMetadata,
  secretChange,
  toRawSecret,
} from './secret-scope.ts';
import {
  deletePersonalOverrides,
  deleteSecretsByIds,
  findSecret,
  insertSecrets,
  insertSecretVersions,
  renamePersonalOverrides,
  type SecretType,
  updateSecret,
} from './secret-store.ts';

export interface CreateSecretInput extends SecretLocation {
  secretName: string;
  secretValue: string;
  secretComment?: string;
  skipMultilineEncoding?: boolean;
  type: SecretType;
  tagIds?: string[];
  secretReminderNote?: string | null;
  secretReminderRepeatDays?: number | null;
}

export interface UpdateSecretInput extends SecretLocation {
  secretName: string;
  type: SecretType;
  secretValue?: string;
  secretComment?: string;
  skipMultilineEncoding?: boolean;
  newSecretName?: string;
  tagIds?: string[];
  secretReminderNote?: string | null;
  secretReminderRepeatDays?: number | null;
}

export interface DeleteSecretInput extends SecretLocation {
  secretName: string;
  type: SecretType;
}

/** The owner of a secret of `type`: personal secrets belong to users only. */
export function personalOwner(actor: Actor, type: SecretType, verb: string): string | null {
  if (type === 'shared') return null;
  if (actor.kind !== 'user') throw new BadRequestError(`Must be user to ${verb} personal secret`, 'PersonalSecretRequiresUser');
  return actor.id;
}

/** Creates, updates and deletes single secrets; every change is one transaction with its version, audit and change rows. */
export class SecretService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, input: CreateSecretInput): Promise<RawSecret> {
    const key = normalizeSecretKey(input.secretName);
    const value = normalizeSecretValue(input.secretValue);
    const owner = personalOwner(actor, input.type, 'create');
    return this.#mutate(actor, input, 'create', async (trx, scope) => {
      if (input.type === 'shared' && (await findSecret(trx, scope.folder.id, key, 'shared', null))) {
        throw new BadRequestError(`Secret '${key}' already exists in '${scope.path}'`, 'SecretExists');
      }
      if (input.type === 'personal' && !(await findSecret(trx, scope.folder.id, key, 'shared', null))) {
        throw new BadRequestError('Failed to create personal secret override for no corresponding shared secret', 'NoSharedSecret');
      }
      const tags = input.tagIds ? await requireTagsByIds(trx, scope.project.id, input.tagIds) : [];
      await assertReferencesReadable(this.#deps, trx, actor, scope, [value]);
      const id = randomUUID();
      const [secret] = await insertSecrets(trx, [
        {
          id,
          folderId: scope.folder.id,
          type: input.type,
          userId: owner,
          key,
          encryptedValue: scope.cipher.seal(id, 'value', value),
          encryptedComment: scope.cipher.sealComment(id, input.secretComment?.trim() ?? ''),
          skipMultilineEncoding: input.skipMultilineEncoding ?? false,
          reminderNote: input.secretReminderNote ?? null,
          reminderRepeatDays: input.secretReminderRepeatDays ?? null,
        },
      ]).catch((error: unknown) => {
        if (isUniqueViolation(error)) throw new BadRequestError(`Secret '${key}' already exists in '${scope.path}'`, 'SecretExists');
        throw error;
      });
      const tagIds = tags.map((tag) => tag.id);
      await setSecretTags(trx, id, tagIds);
      await insertSecretVersions(trx, [secret!], new Map([[id, tagIds]]));
      return { secret: secret!, event: 'create-secret', tags: tags.map(toTagSummary) };
    });
  }

  async update(actor: Actor, input: UpdateSecretInput): Promise<RawSecret> {
    const key = normalizeSecretKey(input.secretName);
    const owner = personalOwner(actor, input.type, 'update');
    return this.#mutate(actor, input, 'edit', async (trx, scope) => {
      const current = await this.#requireSecret(trx, scope, key, input.type, owner, true);
      const changes = await secretChangesFor(this.#deps, trx, actor, scope, current, input);
      const tags = input.tagIds ? await requireTagsByIds(trx, scope.project.id, input.tagIds) : undefined;
      const secret = await updateSecret(trx, current.id, changes).catch((error: unknown) => {
        if (isUniqueViolation(error)) throw new BadRequestError(`Secret '${changes.key}' already exists in '${scope.path}'`, 'SecretExists');
        throw error;
      });
      if (changes.key && current.type === 'shared') await renamePersonalOverrides(trx, scope.folder.id, current.key, changes.key);
      if (tags) await setSecretTags(trx, secret.id, tags.map((tag) => tag.id));
      const tagSummaries = (await tagsOfSecrets(trx, [secret.id])).get(secret.id) ?? [];
      await insertSecretVersions(trx, [secret], new Map([[secret.id, tagSummaries.map((tag) => tag.id)]]));
      return { secret, event: 'update-secret', tags: tagSummaries };
    });
  }

  async delete(actor: Actor, input: DeleteSecretInput): Promise<RawSecret> {
    const key = normalizeSecretKey(input.secretName);
    const owner = personalOwner(actor, input.type, 'delete');
    return this.#mutate(actor, input, 'delete', async (trx, scope) => {
      const secret = await this.#requireSecret(trx, scope, key, input.type, owner, true);
      const tags = (await tagsOfSecrets(trx, [secret.id])).get(secret.id) ?? [];
      await deleteSecretsByIds(trx, [secret.id]);
      if (secret.type === 'shared') await deletePersonalOverrides(trx, scope.folder.id, [secret.key]);
      return { secret, event: 'delete-secret', tags };
    });
  }

  async #requireSecret(trx: Executor, scope: SecretScope, key: string, type: SecretType, owner: string | null, lock: boolean) {
    const secret = await findSecret(trx, scope.folder.id, key, type, owner, { lock });
    if (!secret) throw new NotFoundError(`Secret with name '${key}' not found in '${scope.path}'`);
    return secret;
  }

  /**
   * One transaction: scope and permission, the change itself, then the audit row
   * and (for shared secrets) the change-feed row; subscribers hear of it after commit.
   */
  async #mutate(
    actor: Actor,
    location: SecretLocation,
    action: 'create' | 'edit' | 'delete',
    change: (trx: Executor, scope: SecretScope) => Promise<{ secret: Secret; event: string; tags: RawSecret['tags'] }>,
  ): Promise<RawSecret> {
    const { db, audit, changes } = this.#deps;
    const result = await db.transaction().execute(async (trx) => {
      const scope = await resolveSecretScope(this.#deps, trx, actor, location, action);
      const { secret, event, tags } = await change(trx, scope);
      await audit.record(trx, actor, auditScope(scope.project), { type: event, metadata: secretAuditMetadata(scope, secret) });
      if (secret.type === 'shared') await changes.record(trx, [secretChange(scope)]);
      return { raw: toRawSecret(secret, scope, tags), shared: secret.type === 'shared' };
    });
    if (result.shared) changes.committed();
    return result.raw;
  }
}
