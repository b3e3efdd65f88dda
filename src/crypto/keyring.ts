import { createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { open, seal } from './aead.ts';

const DATA_KEY_LENGTH = 32;

/**
 * Envelope encryption: the root key wraps one data key per project; values are
 * sealed with the project's data key. Unwrapped data keys are cached in memory,
 * as KeyObjects: a cipher made from a KeyObject costs a fraction of one made
 * from a Buffer.
 */
export class Keyring {
  readonly #rootKey: KeyObject;
  readonly #dataKeys = new Map<string, KeyObject>();

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
  }

  encrypt(projectId: string, wrappedKey: Buffer, plaintext: string, context: string): Buffer {
    return seal(this.#projectKey(projectId, wrappedKey), Buffer.from(plaintext, 'utf8'), context);
  }

  decrypt(projectId: string, wrappedKey: Buffer, blob: Buffer, context: string): string {
    return open(this.#projectKey(projectId, wrappedKey), blob, context).toString('utf8');
  }
}

function projectKeyContext(projectId: string): string {
  return `coffer:project-data-key:${projectId}`;
}
