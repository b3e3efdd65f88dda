import { createHmac, createSecretKey, hkdfSync, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';
import { open, seal } from './aead.ts';

const DATA_KEY_LENGTH = 32;
/** Decrypted values kept (with their ciphertext) so that reading the same secrets again decrypts nothing. */
const OPENED_CACHE_ENTRIES = 20_000;

/**
 * Envelope encryption: the root key wraps one data key per project; values are
 * sealed with the project's data key. Unwrapped data keys are cached in memory,
 * as KeyObjects: a cipher made from a KeyObject costs a fraction of one made
 * from a Buffer.
 */
export class Keyring {
  readonly #rootKey: KeyObject;
  readonly #dataKeys = new Map<string, KeyObject>();
  /** "<project>\0<context>" → the last ciphertext opened there and its plaintext; oldest first. */
  readonly #opened = new Map<string, { blob: Buffer; plaintext: string }>();

  constructor(rootKey: Buffer) {
    if (rootKey.length !== 32) throw new Error('the root key must be 32 bytes');
    this.#rootKey = createSecretKey(rootKey);
  }

  /** A fresh data key for a project, returned wrapped for storage. */
  createProjectKey(projectId: string): Buffer {
    const dataKey = randomBytes(DATA_KEY_LENGTH);
    this.#dataKeys.set(projectId, createSecretKey(dataKey));
    return seal(this.#rootKey, dataKey, projectKeyContext(projectId));
  }

  /** A project's data key (raw bytes) wrapped by this keyring's root key: root key rotation. */
  wrapProjectKey(projectId: string, dataKey: Buffer): Buffer {
    return seal(this.#rootKey, dataKey, projectKeyContext(projectId));
  }

  /**
   * The root key's check value for one installation: HMAC-SHA256 of a fixed
   * text under a key derived from the root key (HKDF-SHA256, the installation
   * id as salt). It tells whether a key is the one the database was written
   * with, and reveals nothing about the key.
   */
  rootKeyCheck(installationId: string): Buffer {
    const checkKey = Buffer.from(hkdfSync('sha256', this.#rootKey, installationId, 'coffer:root-key-check', 32));
    return createHmac('sha256', checkKey).update('coffer root key check v1').digest();
  }

  /** True when `stored` is this root key's check value for the installation. */
  matchesRootKeyCheck(installationId: string, stored: Buffer): boolean {
    const expected = this.rootKeyCheck(installationId);
    return stored.length === expected.length && timingSafeEqual(stored, expected);
  }

  /**
   * A credential that belongs to no project (an identity's token for another system), sealed under the root key
   * itself; `coffer rotate-key` re-seals it (installation/root-key.ts).
   */
  sealWithRootKey(plaintext: string, context: string): Buffer {
    return seal(this.#rootKey, Buffer.from(plaintext, 'utf8'), context);
  }

  openWithRootKey(blob: Buffer, context: string): string {
    return open(this.#rootKey, blob, context).toString('utf8');
  }

  /** The project's data key (raw bytes). */
  projectKey(projectId: string, wrapped: Buffer): Buffer {
    return this.#projectKey(projectId, wrapped).export();
  }

  #projectKey(projectId: string, wrapped: Buffer): KeyObject {
    let dataKey = this.#dataKeys.get(projectId);
    if (!dataKey) {
      dataKey = createSecretKey(open(this.#rootKey, wrapped, projectKeyContext(projectId)));
      this.#dataKeys.set(projectId, dataKey);
    }
    return dataKey;
  }

  forgetProject(projectId: string): void {
    this.#dataKeys.delete(projectId);
    for (const key of this.#opened.keys()) if (key.startsWith(`${projectId}\0`)) this.#opened.delete(key);
  }

  encrypt(projectId: string, wrappedKey: Buffer, plaintext: string, context: string): Buffer {
    return seal(this.#projectKey(projectId, wrappedKey), Buffer.from(plaintext, 'utf8'), context);
  }

  /**
   * The plaintext of `blob`. A blob already opened under the same project and
   * context (byte for byte: GCM authenticated it then) is answered from memory,
   * where the process holds the data keys anyway.
   */
  decrypt(projectId: string, wrappedKey: Buffer, blob: Buffer, context: string): string {
    const cacheKey = `${projectId}\0${context}`;
    const known = this.#opened.get(cacheKey);
    if (known && known.blob.equals(blob)) return known.plaintext;
    const plaintext = open(this.#projectKey(projectId, wrappedKey), blob, context).toString('utf8');
    this.#opened.delete(cacheKey);
    if (this.#opened.size >= OPENED_CACHE_ENTRIES) this.#opened.delete(this.#opened.keys().next().value!);
    this.#opened.set(cacheKey, { blob: ownCopy(blob), plaintext });
    return plaintext;
  }
}

/** A copy outside Node's shared 64 KiB buffer pool (a small pooled copy kept for long keeps its whole slab alive). */
function ownCopy(source: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(source.length);
  source.copy(copy);
  return copy;
}

function projectKeyContext(projectId: string): string {
  return `coffer:project-data-key:${projectId}`;
}
