import { randomUUID } from 'node:crypto';
import type { Actor } from '../actor/actor.ts';
import type { Secret } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { requireTagsByIds, setSecretTags, tagsOfSecrets, toTagSummary } from '../tags/tag-service.ts';
import { directWriteAllowance } from './protected-places.ts';
import { secretChangesFor, tagsChange } from './secret-changes.ts';
import { assertReferencesReadable } from './secret-references.ts';
import { normalizeSecretKey, normalizeSecretValue, type RawSecret } from './secret-schema.ts';
import { resolveSecretScope, type SecretLocation, type SecretScope, secretAuditMetadata, secretChange, toRawSecret } from './secret-scope.ts';
import {
  deletePersonalOverrides,
  deleteSecretsByIds,
  findSecret,
  insertSecretIfAbsent,
  type NewSecret,
  renamePersonalOverrides,
  type SecretType,
  updateSecretWithVersion,
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

/** Creates, updates and deletes single secrets; each change is a new version, audited, and (shared secrets) in the change feed. */
export class SecretService {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async create(actor: Actor, input: CreateSecretInput): Promise<RawSecret> {
    const key = normalizeSecretKey(input.secretName);
    const value = normalizeSecretValue(input.secretValue);
    const owner = personalOwner(actor, input.type, 'create');
    return this.#write(actor, input, 'create', key, async (tx, scope) => {
      if (input.type === 'personal' && !(await findSecret(tx.db, scope.folder.id, key, 'shared', null))) {
        throw new BadRequestError('Failed to create personal secret override for no corresponding shared secret', 'NoSharedSecret');
      }
      const tags = input.tagIds ? await requireTagsByIds(tx.db, scope.project.id, input.tagIds) : [];
      await assertReferencesReadable(tx, scope, [value]);
      const id = randomUUID();
      const tagIds = tags.map((tag) => tag.id);
      const row: NewSecret = {
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
      };
      const secret = await insertSecretIfAbsent(tx.db, row, tagIds);
      if (!secret) throw secretExists(key, scope.path);
      // a new secret has no links to replace
      if (tagIds.length > 0) await setSecretTags(tx.db, id, tagIds);
      return { secret, event: 'create-secret', tags: tags.map(toTagSummary) };
    });
  }

  async update(actor: Actor, input: UpdateSecretInput): Promise<RawSecret> {
    const key = normalizeSecretKey(input.secretName);
    const owner = personalOwner(actor, input.type, 'update');
    const newKey = input.newSecretName === undefined ? key : normalizeSecretKey(input.newSecretName);
    return this.#write(actor, input, 'edit', newKey, async (tx, scope) => {
      const current = await this.#requireSecret(tx, scope, key, input.type, owner);
      const changes = await secretChangesFor(tx, scope, current, input);
      const tags = input.tagIds ? await requireTagsByIds(tx.db, scope.project.id, input.tagIds) : undefined;
      // without tags asked for, the tags stay: read with the update itself, unless there is nothing to update
      const currentTags = tags || Object.keys(changes).length === 0 ? ((await tagsOfSecrets(tx.db, [current.id])).get(current.id) ?? []) : undefined;
      const retag = tagsChange(
        currentTags ?? [],
        tags?.map((tag) => tag.id),
      );
      // storing what is there is no write: no version, no change row, no audit entry, no revision
      if (Object.keys(changes).length === 0 && !retag) return { secret: current, event: 'update-secret', tags: currentTags ?? [], unchanged: true };
      if (tags && retag)
        await setSecretTags(
          tx.db,
          current.id,
          tags.map((tag) => tag.id),
        );
      const { tags: linked, ...secret } = await updateSecretWithVersion(tx.db, current.id, changes);
      if (changes.key && current.type === 'shared') await renamePersonalOverrides(tx.db, scope.folder.id, current.key, changes.key);
      return { secret, event: 'update-secret', tags: linked.map(toTagSummary) };
    });
  }

  async delete(actor: Actor, input: DeleteSecretInput): Promise<RawSecret> {
    const key = normalizeSecretKey(input.secretName);
    const owner = personalOwner(actor, input.type, 'delete');
    return this.#write(actor, input, 'delete', key, async (tx, scope) => {
      const secret = await this.#requireSecret(tx, scope, key, input.type, owner);
      const tags = (await tagsOfSecrets(tx.db, [secret.id])).get(secret.id) ?? [];
      await deleteSecretsByIds(tx.db, [secret.id]);
      if (secret.type === 'shared') await deletePersonalOverrides(tx.db, scope.folder.id, [secret.key]);
      return { secret, event: 'delete-secret', tags };
    });
  }

  /** The secret, locked for the rest of the transaction; 404 when missing. */
  async #requireSecret(tx: WriteContext, scope: SecretScope, key: string, type: SecretType, owner: string | null) {
    const secret = await findSecret(tx.db, scope.folder.id, key, type, owner, { lock: true });
    if (!secret) throw new NotFoundError(`Secret with name '${key}' not found in '${scope.path}'`);
    return secret;
  }

  /** A single-secret write: its scope and permission first; its audit entry and (shared secrets) change row after. */
  #write(
    actor: Actor,
    location: SecretLocation,
    action: 'create' | 'edit' | 'delete',
    key: string,
    change: (tx: WriteContext, scope: SecretScope) => Promise<{ secret: Secret; event: string; tags: RawSecret['tags']; unchanged?: boolean }>,
  ): Promise<RawSecret> {
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const scope = await resolveSecretScope(this.#deps, tx, location, action);
        const { secret, event, tags, unchanged } = await change(tx, scope);
        if (!unchanged) {
          const bypass = secret.type === 'shared' ? await directWriteAllowance(tx, scope) : undefined;
          tx.audit({ project: scope.project, type: event, metadata: { ...secretAuditMetadata(scope, secret), ...bypass } });
          if (secret.type === 'shared') tx.change(secretChange(scope));
        }
        return toRawSecret(secret, scope, tags);
      },
      { conflicts: secretConflicts(key, normalizeSecretPath(location.secretPath)) },
    );
  }
}

export function secretExists(key: string, path: string): BadRequestError {
  return new BadRequestError(`Secret '${key}' already exists in '${path}'`, 'SecretExists');
}

/** A concurrent write took the key first: the same answer as when it was there before. */
export function secretConflicts(key: string, path: string) {
  return { secrets_shared_key: () => secretExists(key, path), secrets_personal_key: () => secretExists(key, path) };
}
