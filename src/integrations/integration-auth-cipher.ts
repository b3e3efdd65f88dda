import type { Keyring } from '../crypto/keyring.ts';
import { ProjectCipher } from '../crypto/project-cipher.ts';
import type { Project } from '../db/schema.ts';

export type CredentialPart = 'access' | 'access-id' | 'refresh' | 'aws-assume-iam-role-arn';

/** Seals and opens one project's integration credentials, bound to the integration auth's id. */
export class IntegrationAuthCipher {
  readonly #cipher: ProjectCipher;

  constructor(keyring: Keyring, project: Project) {
    this.#cipher = new ProjectCipher(keyring, project);
  }

  /** Null for an absent or empty credential. */
  seal(authId: string, part: CredentialPart, plaintext: string | undefined): Buffer | null {
    return plaintext ? this.#cipher.seal(context(authId, part), plaintext) : null;
  }

  open(authId: string, part: CredentialPart, blob: Buffer | null): string | null {
    return blob ? this.#cipher.open(context(authId, part), blob) : null;
  }
}

function context(authId: string, part: CredentialPart): string {
  return `coffer:integration-auth:${authId}:${part}`;
}
