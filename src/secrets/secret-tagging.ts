import type { Actor } from '../actor/actor.ts';
import { splitSealed } from '../crypto/aead.ts';
import type { Secret } from '../db/schema.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { requireTagsBySlugs, setSecretTags, tagsOfSecrets } from '../tags/tag-service.ts';
import type { SecretCipher } from './secret-cipher.ts';
import type { TagSummary } from './secret-schema.ts';
import { resolveSecretScope, secretAuditMetadata, secretChange } from './secret-scope.ts';
import { personalOwner } from './secret-service.ts';
import { findSecret, insertSecretVersions, type SecretType, updateSecret } from './secret-store.ts';

export interface SecretTagsInput {
  projectSlug: string;
  environment: string;
  secretPath: string;
  secretName: string;
  type: SecretType;
  tagSlugs: string[];
}

function sealedParts(blob: Buffer, prefix: string) {
  const { iv, tag, ciphertext } = splitSealed(blob);
  return {
    [`${prefix}Ciphertext`]: ciphertext.toString('base64'),
    [`${prefix}IV`]: iv.toString('base64'),
    [`${prefix}Tag`]: tag.toString('base64'),
  };
}

/** The reference's encrypted form of a secret: the stored AES-256-GCM parts, base64. */
export function toEncryptedSecret(secret: Secret, cipher: SecretCipher, tags: TagSummary[]) {
  return {
    id: secret.id,
    version: secret.version,
    type: secret.type,
    ...sealedParts(cipher.seal(secret.id, 'key', secret.key), 'secretKey'),
    ...sealedParts(secret.encryptedValue, 'secretValue'),
    ...sealedParts(secret.encryptedComment ?? cipher.seal(secret.id, 'comment', ''), 'secretComment'),
    secretReminderNote: secret.reminderNote,
    secretReminderRepeatDays: secret.reminderRepeatDays,
    skipMultilineEncoding: secret.skipMultilineEncoding,
    algorithm: 'aes-256-gcm',
    keyEncoding: 'base64',
    metadata: secret.metadata ?? null,
    userId: secret.userId,
    folderId: secret.folderId,
    createdAt: secret.createdAt.toISOString(),
    updatedAt: secret.updatedAt.toISOString(),
    tags,
  };
}

/** Attaches and detaches project tags by slug; each is a new version of the secret. */
export class SecretTagging {
  readonly #deps: ServiceDeps;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  attach(actor: Actor, input: SecretTagsInput) {
    return this.#change(actor, input, 'attach-secret-tags', (current, requested) => {
      if (requested.some((id) => current.includes(id))) throw new BadRequestError('One or more tags already exist on the secret', 'TagAlreadyAttached');
      return [...current, ...requested];
    });
  }

  detach(actor: Actor, input: SecretTagsInput) {
    return this.#change(actor, input, 'detach-secret-tags', (current, requested) => {
      if (requested.some((id) => !current.includes(id))) throw new BadRequestError('One or more tags are not attached to the secret', 'TagNotAttached');
      return current.filter((id) => !requested.includes(id));
    });
  }

  #change(actor: Actor, input: SecretTagsInput, event: string, next: (current: string[], requested: string[]) => string[]) {
    const owner = personalOwner(actor, input.type, 'tag');
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const scope = await resolveSecretScope(this.#deps, tx, input, 'edit');
      const key = input.secretName.trim();
      const secret = await findSecret(tx.db, scope.folder.id, key, input.type, owner, { lock: true });
      if (!secret) throw new NotFoundError(`Secret with name '${key}' not found in '${scope.path}'`);
      const requested = [...new Set((await requireTagsBySlugs(tx.db, scope.project.id, input.tagSlugs)).map((tag) => tag.id))];
      const current = ((await tagsOfSecrets(tx.db, [secret.id])).get(secret.id) ?? []).map((tag) => tag.id);
      const tagIds = next(current, requested);
      await setSecretTags(tx.db, secret.id, tagIds);
      const updated = await updateSecret(tx.db, secret.id, {});
      await insertSecretVersions(tx.db, [updated], new Map([[updated.id, tagIds]]));
      const tags = (await tagsOfSecrets(tx.db, [secret.id])).get(secret.id) ?? [];
      tx.audit({ project: scope.project, type: event, metadata: { ...secretAuditMetadata(scope, updated), tagSlugs: input.tagSlugs } });
      if (updated.type === 'shared') tx.change({ ...secretChange(scope), kind: 'tags' });
      return toEncryptedSecret(updated, scope.cipher, tags);
    });
  }
}
