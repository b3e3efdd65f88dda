import type { Keyring } from '../crypto/keyring.ts';
import type { Executor } from '../db/database.ts';
import { listSealedReviewerJwts, setSealedReviewerJwt } from './kubernetes-auth-store.ts';

/** The associated data binding a sealed token reviewer JWT to its identity: copied into another row, it fails to open. */
function context(identityId: string): string {
  return `coffer:kubernetes-auth:${identityId}:token-reviewer-jwt`;
}

export function sealReviewerJwt(keyring: Keyring, identityId: string, jwt: string | null | undefined): Buffer | null {
  return jwt ? keyring.sealWithRootKey(jwt, context(identityId)) : null;
}

export function openReviewerJwt(keyring: Keyring, identityId: string, sealed: Buffer | null): string | null {
  return sealed ? keyring.openWithRootKey(sealed, context(identityId)) : null;
}

/** Root key rotation, inside its transaction: every token reviewer JWT opened with `current`, sealed with `next`. */
export async function resealReviewerJwts(db: Executor, current: Keyring, next: Keyring): Promise<number> {
  const rows = await listSealedReviewerJwts(db);
  for (const row of rows) {
    const jwt = current.openWithRootKey(row.encryptedTokenReviewerJwt, context(row.identityId));
    await setSealedReviewerJwt(db, row.id, next.sealWithRootKey(jwt, context(row.identityId)));
  }
  return rows.length;
}
