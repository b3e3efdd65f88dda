import type { Project } from '../db/schema.ts';
import type { Keyring } from './keyring.ts';

/** Seals and opens values with one project's data key; `context` is the associated data binding each value to its place. */
export class ProjectCipher {
  readonly #keyring: Keyring;
  readonly #projectId: string;
  readonly #wrappedKey: Buffer;

  constructor(keyring: Keyring, project: Project) {
    if (!project.encryptedDataKey) throw new Error(`project ${project.id} has no data key`);
    this.#keyring = keyring;
    this.#projectId = project.id;
    this.#wrappedKey = project.encryptedDataKey;
  }

  seal(context: string, plaintext: string): Buffer {
    return this.#keyring.encrypt(this.#projectId, this.#wrappedKey, plaintext, context);
  }

  open(context: string, blob: Buffer): string {
    return this.#keyring.decrypt(this.#projectId, this.#wrappedKey, blob, context);
  }
}
