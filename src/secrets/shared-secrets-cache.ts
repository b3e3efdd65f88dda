import type { Environment, Secret } from '../db/schema.ts';
import { findFolderAtPath } from '../folders/folder-lookup.ts';
import { formatSecretPath, parseSecretPath } from '../folders/secret-path.ts';
import { folderKey } from './folder-ref.ts';
import type { SecretCipher } from './secret-cipher.ts';
import { listSecretsOfFolders } from './secret-store.ts';
import type { ReadOnlyDb } from '../db/database.ts';

export interface FolderSecrets {
  folderId: string | null;
  secrets: Secret[];
  values: Map<string, string>;
}

/**
 * Shared secrets of (environment, path) folders within one project, read and
 * decrypted once per request; missing folders hold no secrets.
 */
export class SharedSecretsCache {
  readonly #db: ReadOnlyDb;
  readonly #cipher: SecretCipher;
  readonly #entries = new Map<string, Promise<FolderSecrets>>();

  constructor(db: ReadOnlyDb, cipher: SecretCipher) {
    this.#db = db;
    this.#cipher = cipher;
  }

  /** Every "<environment id>:<path>" read so far, found or not. */
  readKeys(): string[] {
    return [...this.#entries.keys()];
  }

  get(environment: Pick<Environment, 'id'>, path: string): Promise<FolderSecrets> {
    const normalized = formatSecretPath(parseSecretPath(path));
    const cacheKey = folderKey({ environmentId: environment.id, path: normalized });
    let entry = this.#entries.get(cacheKey);
    if (!entry) {
      entry = this.#load(environment.id, normalized);
      this.#entries.set(cacheKey, entry);
    }
    return entry;
  }

  async #load(environmentId: string, path: string): Promise<FolderSecrets> {
    const folder = await findFolderAtPath(this.#db, environmentId, path);
    if (!folder) return { folderId: null, secrets: [], values: new Map() };
    const secrets = await listSecretsOfFolders(this.#db, [folder.id], null);
    const values = new Map(secrets.map((secret) => [secret.key, this.#cipher.open(secret.id, 'value', secret.encryptedValue)]));
    return { folderId: folder.id, secrets, values };
  }
}
