import type { Actor } from '../actor/actor.ts';
import { projectScope } from '../audit/audit-service.ts';
import { CACHE_POLICIES } from '../caches/cache-policies.ts';
import { RevisionCache } from '../caches/revision-cache.ts';
import type { Environment, Project, Secret } from '../db/schema.ts';
import { AppError, NotFoundError } from '../errors.ts';
import { requireFolderSubtree } from '../folders/folder-lookup.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { PermissionSet } from '../permissions/permission-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { requireTagsBySlugs, tagsOfSecrets } from '../tags/tag-service.ts';
import { type FolderRef, folderKey } from './folder-ref.ts';
import { ImportResolver } from './import-resolver.ts';
import { SecretCipher } from './secret-cipher.ts';
import { ReferenceExpander } from './secret-references.ts';
import type { ImportedGroup, ListedSecret, RawSecret } from './secret-schema.ts';
import { secretAuditMetadata, secretProject, toRawSecret } from './secret-scope.ts';
import { personalOwner } from './secret-service.ts';
import { findSecret, findSecretVersion, listSecretsWithTagsOfFolders, type SecretType } from './secret-store.ts';
import { SharedSecretsCache } from './shared-secrets-cache.ts';

export const MAX_RECURSION_DEPTH = 20;
/** The most a listing's secrets may weigh (keys, values, comments, per-secret fields), checked before they are decrypted. */
export const MAX_LISTING_BYTES = 32 * 1024 * 1024;
/** What one listed secret adds to the response besides its key, value and comment (ids, dates, flags, JSON). */
const LISTED_SECRET_OVERHEAD_BYTES = 400;

export interface ListSecretsInput {
  projectId?: string;
  projectSlug?: string;
  environment: string;
  secretPath: string;
  recursive: boolean;
  includeImports: boolean;
  expandSecretReferences: boolean;
  tagSlugs?: string[];
  /**
   * A user's personal overrides: listed beside the shared secrets (`all`, the v3 listing), left out
   * (`none`), or in place of the shared secret they override (`priority`). Only users have them.
   */
  personalOverrides?: 'all' | 'none' | 'priority';
  /** When given, receives every "<environment id>:<path>" the listing depended on (folders, imports, references). */
  dependencies?: Set<string>;
  /** Imported secrets carry their tags (the operator selects keys by tag; the API lists imported secrets without them, as the reference does). */
  importedTags?: boolean;
  /** Read from the database, past the listings shared by revision: a forced sync repairs what a change made outside the change log. */
  fresh?: boolean;
}

export interface GetSecretInput extends Omit<ListSecretsInput, 'recursive' | 'tagSlugs' | 'dependencies' | 'importedTags'> {
  secretName: string;
  type: SecretType;
  version?: number;
  /** The read shows a user the value on purpose (the console's reveal): audited as `reveal-secret`, not `get-secret`. */
  reveal?: boolean;
}

/** Applies a listing's personal-override mode to secrets sorted by path and key (personal first). */
function withPersonalOverrides(secrets: ListedSecret[], mode: 'all' | 'none' | 'priority'): ListedSecret[] {
  if (mode === 'all') return secrets;
  if (mode === 'none') return secrets.filter((secret) => secret.type !== 'personal');
  const overridden = new Set(secrets.filter((secret) => secret.type === 'personal').map((secret) => `${secret.secretPath}\u0000${secret.secretKey}`));
  return secrets.filter((secret) => secret.type === 'personal' || !overridden.has(`${secret.secretPath}\u0000${secret.secretKey}`));
}

function byPathThenKey(a: ListedSecret, b: ListedSecret): number {
  return a.secretPath.localeCompare(b.secretPath) || a.secretKey.localeCompare(b.secretKey) || b.type.localeCompare(a.type);
}

/** Identifies a listing's content: the same key at the same revision lists the same secrets. */
export interface ListingVersion {
  key: string;
  revision: number;
}

export interface SecretListing {
  secrets: ListedSecret[];
  imports?: ImportedGroup[];
  /** Set for a plain listing (no imports, tags filter or expansion) that every machine caller sees alike at this version. */
  version?: ListingVersion;
}

/** What one read needs: project, environment, cipher and per-request caches. */
interface ReadContext {
  actor: Actor;
  project: Project;
  environment: Environment;
  cipher: SecretCipher;
  cache: SharedSecretsCache;
  expander: ReferenceExpander | null;
  permission: PermissionSet;
}

/** A listing past MAX_LISTING_BYTES is refused before its secrets are decrypted (ciphertexts are a little longer than the text). */
function assertListingSize(rows: readonly Secret[]): void {
  let bytes = 0;
  for (const row of rows) bytes += row.key.length + row.encryptedValue.length + (row.encryptedComment?.length ?? 0) + LISTED_SECRET_OVERHEAD_BYTES;
  if (bytes > MAX_LISTING_BYTES) {
    throw new AppError(
      422,
      'ListingTooLarge',
      `The listing would be larger than ${MAX_LISTING_BYTES / 1024 / 1024} MiB; list fewer folders (a deeper path, or without recursive)`,
    );
  }
}

/** Reads secrets: listings (recursive, with imports and references expanded) and single secrets, by version too. */
export class SecretReader {
  readonly #deps: ServiceDeps;
  /** Shared listings by environment and folders; see #listedSecrets. */
  readonly #listings = new RevisionCache<ListedSecret[]>({ ...CACHE_POLICIES.listings, weigh: (secrets) => secrets.length + 1 });

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
  }

  async list(actor: Actor, input: ListSecretsInput): Promise<SecretListing> {
    const { context, path, secrets, imports, version } = await this.#read(actor, input);
    await this.#deps.audit.recordRead(actor, projectScope(context.project), {
      type: 'get-secrets',
      metadata: { environment: context.environment.slug, secretPath: path, numberOfSecrets: secrets.length },
    });
    if (imports) return { secrets, imports };
    // only the plain listing is the same for every caller at this version
    const plain = !input.tagSlugs?.length && !context.expander;
    return plain && version ? { secrets, version } : { secrets };
  }

  /**
   * Every "<environment id>:<path>" a listing with these settings reads (its folders, imported and
   * referenced ones), without recording a read: no value leaves. Project events use it to tell a
   * subscriber about changes that reach it through imports and references.
   */
  async foldersRead(actor: Actor, input: Omit<ListSecretsInput, 'dependencies' | 'tagSlugs' | 'personalOverrides'>): Promise<Set<string>> {
    const dependencies = new Set<string>();
    await this.#read(actor, { ...input, dependencies });
    return dependencies;
  }

  /**
   * Of these folders of the project, those where the caller may read secrets:
   * all an answer may name (a listing also depends on folders it reads through
   * imports the caller may not read).
   */
  async readablePlaces(actor: Actor, projectId: string, places: Iterable<FolderRef>): Promise<FolderRef[]> {
    const { db, permissions, lookups } = this.#deps;
    const permission = await permissions.forProject(actor, await lookups.requireProject(db, { id: projectId }));
    const slugs = new Map((await lookups.listEnvironments(db, projectId)).map((environment) => [environment.id, environment.slug]));
    return [...places].filter((place) => {
      const environment = slugs.get(place.environmentId);
      return environment !== undefined && permission.can('read', 'secrets', { environment, secretPath: place.path });
    });
  }

  async #read(actor: Actor, input: ListSecretsInput) {
    const context = await this.#context(actor, input);
    const path = normalizeSecretPath(input.secretPath);
    const folders = await this.#readableFolders(context, path, input.recursive);
    const { secrets: listed, version } = await this.#listedSecrets(context, folders, input.fresh ?? false);
    let secrets = withPersonalOverrides(listed, input.personalOverrides ?? 'all');
    if (input.tagSlugs?.length) {
      const wanted = new Set((await requireTagsBySlugs(this.#deps.db, context.project.id, input.tagSlugs)).map((tag) => tag.id));
      secrets = secrets.filter((secret) => secret.tags.some((tag) => wanted.has(tag.id)));
    }
    const { expander } = context;
    if (expander) {
      await Promise.all(
        secrets.map(async (secret) => {
          secret.secretValue = await expander.expand(secret.secretValue, { environment: context.environment, path: secret.secretPath }, secret.secretKey);
        }),
      );
    }
    const imports = input.includeImports ? await this.#importedGroups(context, folders, input.importedTags ?? false) : undefined;
    if (input.dependencies) {
      for (const folder of folders) input.dependencies.add(folderKey({ environmentId: context.environment.id, path: folder.path }));
      for (const key of context.cache.readKeys()) input.dependencies.add(key);
    }
    return { context, path, secrets, imports, version };
  }

  /**
   * The folders' secrets (a user's personal overrides included), sorted, values
   * not yet expanded; fresh objects the caller may change. Machine callers share
   * listings while the project's revision stays the same.
   */
  async #listedSecrets(context: ReadContext, folders: { id: string; path: string }[], fresh: boolean): Promise<{ secrets: ListedSecret[]; version?: ListingVersion }> {
    if (context.actor.kind === 'user') return { secrets: await this.#loadListing(context, folders, context.actor.id) };
    const { listed, version } = await this.#sharedListing(context, folders, fresh);
    return { secrets: listed.map((secret) => ({ ...secret })), version };
  }

  /** The listing machine callers share at the project's current revision: kept objects, not to be changed. */
  async #sharedListing(context: ReadContext, folders: { id: string; path: string }[], fresh: boolean) {
    const revision = await this.#deps.changes.projectRevision(this.#deps.db, context.project.id);
    // the environment's slug and the folders' paths are in the listing, and may come from a lookup a moment old
    const key = `${context.environment.id}:${context.environment.slug}|${folders.map((folder) => `${folder.id}=${folder.path}`).join('|')}`;
    const load = () => this.#loadListing(context, folders, null);
    const listed = await (fresh ? this.#listings.refresh(key, revision, load) : this.#listings.get(key, revision, load));
    return { listed, version: { key, revision } };
  }

  /** The folders' secrets, decrypted and sorted; `userId`: with that user's personal overrides. */
  async #loadListing(context: ReadContext, folders: { id: string; path: string }[], userId: string | null): Promise<ListedSecret[]> {
    const pathOf = new Map(folders.map((folder) => [folder.id, folder.path]));
    const rows = await listSecretsWithTagsOfFolders(this.#deps.db, [...pathOf.keys()], userId);
    assertListingSize(rows);
    return rows
      .map(({ tags, ...row }): ListedSecret => {
        const summaries = tags.map((tag) => ({ id: tag.id, slug: tag.slug, name: tag.slug, color: tag.color }));
        return { ...toRawSecret(row, context, summaries), secretPath: pathOf.get(row.folderId)! };
      })
      .sort(byPathThenKey);
  }

  /** Recursive listings silently leave out the folders the caller may not read; a single folder must be readable. */
  async #readableFolders(context: ReadContext, path: string, recursive: boolean) {
    const environment = context.environment.slug;
    if (!recursive) {
      context.permission.assert('read', 'secrets', { environment, secretPath: path });
      return [{ id: (await this.#deps.lookups.requireFolder(this.#deps.db, context.environment, path)).id, path }];
    }
    const subtree = await requireFolderSubtree(this.#deps.db, context.environment, path, MAX_RECURSION_DEPTH);
    return subtree.filter((folder) => context.permission.can('read', 'secrets', { environment, secretPath: folder.path }));
  }

  #canRead(context: ReadContext, group: { environment: { slug: string }; secretPath: string }): boolean {
    return context.permission.can('read', 'secrets', { environment: group.environment.slug, secretPath: group.secretPath });
  }

  async get(actor: Actor, input: GetSecretInput): Promise<RawSecret> {
    const context = await this.#context(actor, input);
    const path = normalizeSecretPath(input.secretPath);
    context.permission.assert('read', 'secrets', { environment: context.environment.slug, secretPath: path });
    const folder = await this.#deps.lookups.requireFolder(this.#deps.db, context.environment, path);
    const owner = personalOwner(actor, input.type, 'read');
    const key = input.secretName.trim();
    const listed = await this.#fromSharedListing(context, { id: folder.id, path }, key, input);
    if (listed) {
      await this.#deps.audit.recordRead(actor, projectScope(context.project), {
        type: input.reveal ? 'reveal-secret' : 'get-secret',
        metadata: { environment: context.environment.slug, secretPath: path, secretId: listed.id, secretKey: listed.secretKey, secretVersion: listed.version },
      });
      return listed;
    }
    const found = await findSecret(this.#deps.db, folder.id, key, input.type, owner);
    const result = found
      ? await this.#ownSecret(context, found, path, input.version)
      : input.includeImports && input.version === undefined
        ? await this.#importedSecret(context, folder.id, path, key)
        : undefined;
    if (!result) throw new NotFoundError(`Secret with name '${key}' not found in '${path}'`);
    await this.#deps.audit.recordRead(actor, projectScope(context.project), {
      type: input.reveal ? 'reveal-secret' : 'get-secret',
      metadata: secretAuditMetadata({ ...context, path, folder, cipher: context.cipher }, result.secret),
    });
    return result.raw;
  }

  /**
   * A machine caller's get of a current shared secret, from the folder's listing that machine callers share by
   * revision (#listedSecrets): the same row, decrypted once for all of them. Undefined when the get is of another
   * kind (a user's, a past version, with references expanded), the key is not in the folder (then the get reads
   * the database: imports, and the 404), or the folder is too large to list.
   */
  async #fromSharedListing(context: ReadContext, folder: { id: string; path: string }, key: string, input: GetSecretInput): Promise<RawSecret | undefined> {
    if (context.actor.kind === 'user' || input.type !== 'shared' || input.version !== undefined || context.expander) return undefined;
    const listed = await this.#sharedListing(context, [folder], false).then(
      ({ listed }) => listed,
      (error: unknown) => {
        // a folder too large to list still answers a get of one of its secrets, from its own row
        if (error instanceof AppError && error.code === 'ListingTooLarge') return undefined;
        throw error;
      },
    );
    if (!listed) return undefined;
    const found = listed.find((secret) => secret.secretKey === key && secret.type === 'shared');
    if (!found) return undefined;
    const { secretPath: _path, ...raw } = found;
    return { ...raw, tags: raw.tags.map((tag) => ({ ...tag })) };
  }

  async #ownSecret(context: ReadContext, secret: Secret, path: string, version: number | undefined) {
    const tags = (await tagsOfSecrets(this.#deps.db, [secret.id])).get(secret.id) ?? [];
    if (version === undefined || version === secret.version) return { secret, raw: await this.#raw(context, secret, path, tags) };
    const old = await findSecretVersion(this.#deps.db, secret.id, version);
    if (!old) throw new NotFoundError(`Secret '${secret.key}' has no version ${version}`);
    const asSecret: Secret = { ...secret, ...old, id: secret.id, updatedAt: old.createdAt, metadata: old.metadata };
    const oldTags = tags.filter((tag) => old.tagIds.includes(tag.id));
    return { secret: asSecret, raw: await this.#raw(context, asSecret, path, oldTags) };
  }

  /** The last import holding the key wins. */
  async #importedSecret(context: ReadContext, folderId: string, path: string, key: string) {
    const resolver = new ImportResolver(this.#deps.db, context.cache);
    const groups = await resolver.importsOf(folderId, { environmentId: context.environment.id, path }, (source) => this.#canRead(context, source));
    for (const group of groups.reverse()) {
      const secret = group.secrets.find((candidate) => candidate.key === key);
      if (!secret) continue;
      const tags = (await tagsOfSecrets(this.#deps.db, [secret.id])).get(secret.id) ?? [];
      const environment = { ...context.environment, ...group.environment };
      return { secret, raw: await this.#raw({ ...context, environment }, secret, group.secretPath, tags) };
    }
    return undefined;
  }

  async #importedGroups(context: ReadContext, folders: { id: string; path: string }[], withTags: boolean): Promise<ImportedGroup[]> {
    const resolver = new ImportResolver(this.#deps.db, context.cache);
    const groups: ImportedGroup[] = [];
    for (const folder of folders) {
      for (const group of await resolver.importsOf(folder.id, { environmentId: context.environment.id, path: folder.path }, (source) => this.#canRead(context, source))) {
        const environment = { ...context.environment, ...group.environment };
        const tagsOf = withTags
          ? await tagsOfSecrets(
              this.#deps.db,
              group.secrets.map((secret) => secret.id),
            )
          : new Map<string, RawSecret['tags']>();
        const secrets = await Promise.all(
          group.secrets.map(async (secret) => {
            const tags = tagsOf.get(secret.id) ?? [];
            const { createdAt: _created, updatedAt: _updated, ...raw } = await this.#raw({ ...context, environment }, secret, group.secretPath, tags);
            return raw;
          }),
        );
        groups.push({ secretPath: group.secretPath, environment: group.environment.slug, folderId: group.folderId, secrets });
      }
    }
    return groups;
  }

  async #raw(context: ReadContext, secret: Secret, path: string, tags: RawSecret['tags']): Promise<RawSecret> {
    const raw = toRawSecret(secret, context, tags);
    if (context.expander) raw.secretValue = await context.expander.expand(raw.secretValue, { environment: context.environment, path }, secret.key);
    return raw;
  }

  async #context(actor: Actor, input: Pick<ListSecretsInput, 'projectId' | 'projectSlug' | 'environment' | 'expandSecretReferences'>): Promise<ReadContext> {
    const { db, permissions, keyring, lookups } = this.#deps;
    const project = await lookups.requireProject(db, secretProject(actor, input));
    const permission = await permissions.forProject(actor, project);
    permission.assert('read', 'secrets');
    const environment = await lookups.requireEnvironment(db, project.id, input.environment);
    const cipher = new SecretCipher(keyring, project);
    const cache = new SharedSecretsCache(db, cipher);
    const expander = input.expandSecretReferences ? new ReferenceExpander(this.#deps, db, actor, project, cache) : null;
    return { actor, project, environment, cipher, cache, expander, permission };
  }
}
