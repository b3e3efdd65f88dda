import type { Keyring } from '../crypto/keyring.ts';
import type { Executor } from '../db/database.ts';
import { deleteAllLoginStates, listSealedClientSecrets, setSealedClientSecret } from './sso-store.ts';

/** The associated data binding a sealed client secret to its organization: copied into another row, it fails to open. */
function context(orgId: string): string {
  return `coffer:oidc:${orgId}:client-secret`;
}

function verifierContext(orgId: string): string {
  return `coffer:oidc:${orgId}:pkce-code-verifier`;
}

export function sealClientSecret(keyring: Keyring, orgId: string, secret: string): Buffer {
  return keyring.sealWithRootKey(secret, context(orgId));
}

export function openClientSecret(keyring: Keyring, orgId: string, sealed: Buffer): string {
  return keyring.openWithRootKey(sealed, context(orgId));
}

export function sealCodeVerifier(keyring: Keyring, orgId: string, verifier: string): Buffer {
  return keyring.sealWithRootKey(verifier, verifierContext(orgId));
}

export function openCodeVerifier(keyring: Keyring, orgId: string, sealed: Buffer): string {
  return keyring.openWithRootKey(sealed, verifierContext(orgId));
}

/**
 * Root key rotation, inside its transaction: every OIDC client secret opened with `current`, sealed with `next`.
 * Sign-ins under way (minutes old at most) are dropped rather than re-sealed: they start again.
 */
export async function resealOidcClientSecrets(db: Executor, current: Keyring, next: Keyring): Promise<number> {
  const rows = await listSealedClientSecrets(db);
  for (const row of rows) {
    const secret = current.openWithRootKey(row.encryptedClientSecret, context(row.orgId));
    await setSealedClientSecret(db, row.id, next.sealWithRootKey(secret, context(row.orgId)));
  }
  await deleteAllLoginStates(db);
  return rows.length;
}
