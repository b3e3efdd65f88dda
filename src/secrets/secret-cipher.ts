import type { Keyring } from '../crypto/keyring.ts';
import { ProjectCipher } from '../crypto/project-cipher.ts';
import type { Project } from '../db/schema.ts';

type Part = 'key' | 'value' | 'comment';

/** Seals and opens one project's secret fields, bound to the secret's id. */
export class SecretCipher {
  readonly #cipher: ProjectCipher;

  constructor(keyring: Keyring, project: Project) {
    this.#cipher = new ProjectCipher(keyring, project);
  }

  seal(secretId: string, part: Part, plaintext: string): Buffer {
    return this.#cipher.seal(`coffer:secret:${secretId}:${part}`, plaintext);
  }

  open(secretId: string, part: Part, blob: Buffer | null): string {
    return blob ? this.#cipher.open(`coffer:secret:${secretId}:${part}`, blob) : '';
  }

  sealComment(secretId: string, comment: string): Buffer | null {
    return comment ? this.seal(secretId, 'comment', comment) : null;
  }
}
