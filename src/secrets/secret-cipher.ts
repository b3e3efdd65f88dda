import type { Keyring } from '../crypto/keyring.ts';
import type { Project } from '../db/schema.ts';

type Part = 'key' | 'value' | 'comment';

/** Seals and opens one project's secret fields, bound to the secret's id. */
export class SecretCipher {
  readonly #keyring: Keyring;
  readonly #projectId: string;
  readonly #wrappedKey: Buffer;

  constructor(keyring: Keyring, project: Project) {
    if (!project.encryptedDataKey) throw new Error(`project ${project.id} has no data key`);
    this.#keyring = keyring;
    this.#projectId = project.id;
    this.#wrappedKey = project.encryptedDataKey;
  }

  seal(secretId: string, part: Part, plaintext: string): Buffer {
    return this.#keyring.encrypt(this.#projectId, this.#wrappedKey, plaintext, `coffer:secret:${secretId}:${part}`);
  }

  open(secretId: string, part: Part, blob: Buffer | null): string {
    if (!blob) return '';
    return this.#keyring.decrypt(this.#projectId, this.#wrappedKey, blob, `coffer:secret:${secretId}:${part}`);
  }

  sealComment(secretId: string, comment: string): Buffer | null {
    return comment ? this.seal(secretId, 'comment', comment) : null;
  }
}
