import type { Kysely } from 'kysely';
import { moveVersions, recordingWrites } from '../caches/cache-versions.ts';
import { Keyring } from '../crypto/keyring.ts';
import type { Executor } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { resealAuditLogStreams } from '../audit-streams/audit-stream-cipher.ts';
import { resealReviewerJwts } from '../kubernetes-auth/reviewer-jwt-cipher.ts';
import { resealOidcClientSecrets } from '../sso/client-secret-cipher.ts';
import { resealTotpSecrets } from '../mfa/second-factor.ts';
import { findAnyProjectDataKey, listProjectDataKeys, setProjectDataKey } from '../projects/project-keys.ts';
import { recordFirstRootKeyCheck, replaceRootKeyCheck, requireInstallation } from './installation-store.ts';

export class RootKeyMismatchError extends Error {
  constructor(installationId: string, which = 'COFFER_ENCRYPTION_KEY') {
    super(
      `${which} is not the root key of this database (installation ${installationId}): it does not match the check value the database holds. ` +
        'Start with the key the data was written with; to change keys, run coffer rotate-key with the current key and the new one.',
    );
  }
}

/**
 * Checks the root key against the database before anything is served. The
 * first start of a database without a check value verifies the key against a
 * project data key (if there is one) and records the check value.
 */
export async function verifyRootKey(db: Kysely<DB>, keyring: Keyring): Promise<{ installationId: string; recorded: boolean }> {
  const installation = await requireInstallation(db);
  if (installation.rootKeyCheck) {
    if (!keyring.matchesRootKeyCheck(installation.id, installation.rootKeyCheck)) throw new RootKeyMismatchError(installation.id);
    return { installationId: installation.id, recorded: false };
  }
  await assertOpensProjectKeys(db, keyring, installation.id);
  if (await recordFirstRootKeyCheck(db, installation.id, keyring.rootKeyCheck(installation.id))) return { installationId: installation.id, recorded: true };
  // another replica recorded it meanwhile
  return verifyRootKey(db, keyring);
}

async function assertOpensProjectKeys(db: Executor, keyring: Keyring, installationId: string): Promise<void> {
  const sample = await findAnyProjectDataKey(db);
  if (!sample) return;
  try {
    keyring.projectKey(sample.id, sample.encryptedDataKey);
  } catch {
    throw new RootKeyMismatchError(installationId);
  }
}

/**
 * Inside a transaction that wraps a new project data key: the installation
 * row is share-locked (a rotation waits for this transaction, then re-wraps
 * its key too) and this process's root key must still be the database's.
 */
export async function assertRootKeyCurrent(trx: Executor, keyring: Keyring): Promise<void> {
  const installation = await requireInstallation(trx, 'share');
  if (installation.rootKeyCheck && !keyring.matchesRootKeyCheck(installation.id, installation.rootKeyCheck)) {
    throw new AppError(503, 'RootKeyRotated', 'The root key was rotated since this server started; it must be restarted with the new COFFER_ENCRYPTION_KEY');
  }
}

/**
 * Re-wraps every project data key (and re-seals every token reviewer JWT) from `current` to `next` and records the
 * new check value, in one transaction: either everything is under the new key
 * or nothing changed. Writers of new project keys hold a share lock on the
 * installation row, so none slips in with the old key. Keyrings of their own
 * (no data key cached from earlier use): every wrapped key is opened from the
 * database.
 */
export async function rotateRootKey(db: Kysely<DB>, currentKey: Buffer, nextKey: Buffer): Promise<{ installationId: string; projects: number }> {
  const current = new Keyring(currentKey);
  const next = new Keyring(nextKey);
  return db.transaction().execute(async (trx) => {
    // every process's cached project rows hold the keys wrapped by the old root key
    const { result, written } = await recordingWrites(() => rewrapAll(trx, current, next));
    await moveVersions(trx, written);
    return result;
  });
}

async function rewrapAll(trx: Executor, current: Keyring, next: Keyring): Promise<{ installationId: string; projects: number }> {
  const installation = await requireInstallation(trx, 'update');
  if (installation.rootKeyCheck && !current.matchesRootKeyCheck(installation.id, installation.rootKeyCheck)) {
    throw new RootKeyMismatchError(installation.id, 'the current key (COFFER_ENCRYPTION_KEY)');
  }
  const projects = await listProjectDataKeys(trx);
  for (const project of projects) {
    let dataKey: Buffer;
    try {
      dataKey = current.projectKey(project.id, project.encryptedDataKey);
    } catch {
      throw new RootKeyMismatchError(installation.id, 'the current key (COFFER_ENCRYPTION_KEY)');
    }
    await setProjectDataKey(trx, project.id, next.wrapProjectKey(project.id, dataKey));
  }
  await resealReviewerJwts(trx, current, next);
  await resealOidcClientSecrets(trx, current, next);
  await resealTotpSecrets(trx, current, next);
  await resealAuditLogStreams(trx, current, next);
  await replaceRootKeyCheck(trx, installation.id, next.rootKeyCheck(installation.id));
  return { installationId: installation.id, projects: projects.length };
}
