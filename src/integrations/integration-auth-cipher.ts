import type { Keyring } from '../crypto/keyring.ts';
import type { Project } from '../db/schema.ts';

export type CredentialPart = 'access' | 'access-id' | 'refresh' | 'aws-assume-iam-role-arn';

/** Seals and opens one project's integration credentials, bound to the integration auth's id. */
export class IntegrationAuthCipher {
  readonly #keyring: Keyring;
  readonly #projectId: string;
  readonly #wrappedKey: Buffer;

  constructor(keyring: Keyring, project: Project) {
    if (!project.encryptedDataKey) throw new Error(`project ${project.id} has no data key`);
    this.#keyring = keyring;
    this.#projectId = project.id;
    this.#wrappedKey = project.encryptedDataKey;
  }

  /** Null for an absent or empty credential. */
  seal(authId: string, part: CredentialPart, plaintext: string | undefined): Buffer | null {
    if (!plaintext) return null;
    return this.#keyring.encrypt(this.#projectId, this.#wrappedKey, plaintext, context(authId, part));
  }

  open(authId: string, part: CredentialPart, blob: Buffer | null): string | null {
    if (!blob) return null;
    return this.#keyring.decrypt(this.#projectId, this.#wrappedKey, blob, context(authId, part));
  }
}

function context(authId: string, part: CredentialPart): string {
  return `coffer:integration-auth:${authId}:${part}`;
}
