import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function findTotp(db: ReadOnlyDb, userId: string) {
  return db.selectFrom('userTotp').selectAll().where('userId', '=', userId).executeTakeFirst();
}

/** A new, unconfirmed secret (replacing an unconfirmed one). */
export async function savePendingTotp(db: Executor, userId: string, encryptedSecret: Buffer): Promise<void> {
  await db
    .insertInto('userTotp')
    .values({ userId, encryptedSecret, confirmedAt: null, lastUsedStep: null })
    .onConflict((conflict) => conflict.column('userId').doUpdateSet({ encryptedSecret, confirmedAt: null, lastUsedStep: null, createdAt: new Date() }))
    .execute();
}

export async function confirmTotp(db: Executor, userId: string, at: Date, step: number): Promise<void> {
  await db.updateTable('userTotp').set({ confirmedAt: at, lastUsedStep: step }).where('userId', '=', userId).execute();
}

/** Records `step` as used; false when it (or a later one) already was: a code is good once. */
export async function useTotpStep(db: Executor, userId: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('userTotp')
    .set({ lastUsedStep: step })
    .where('userId', '=', userId)
    .where((eb) => eb.or([eb('lastUsedStep', 'is', null), eb('lastUsedStep', '<', step)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteTotp(db: Executor, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('userTotp').where('userId', '=', userId).executeTakeFirst();
  await db.deleteFrom('userRecoveryCodes').where('userId', '=', userId).execute();
  return result.numDeletedRows > 0n;
}

export async function replaceRecoveryCodes(db: Executor, userId: string, digests: Buffer[]): Promise<void> {
  await db.deleteFrom('userRecoveryCodes').where('userId', '=', userId).execute();
  await db
    .insertInto('userRecoveryCodes')
    .values(digests.map((codeDigest) => ({ userId, codeDigest })))
    .execute();
}

/** Marks an unused recovery code used; false when there is none with this digest. */
export async function useRecoveryCode(db: Executor, userId: string, digest: Buffer, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('userRecoveryCodes')
    .set({ usedAt: at })
    .where('userId', '=', userId)
    .where('codeDigest', '=', digest)
    .where('usedAt', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function countUnusedRecoveryCodes(db: ReadOnlyDb, userId: string): Promise<number> {
  const row = await db
    .selectFrom('userRecoveryCodes')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('userId', '=', userId)
    .where('usedAt', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Every sealed TOTP secret, for `coffer rotate-key`. */
export async function listSealedTotpSecrets(db: Executor) {
  return db.selectFrom('userTotp').select(['userId', 'encryptedSecret']).execute();
}

export async function setSealedTotpSecret(db: Executor, userId: string, sealed: Buffer): Promise<void> {
  await db.updateTable('userTotp').set({ encryptedSecret: sealed }).where('userId', '=', userId).execute();
}
