import { createHash, randomBytes } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import type { Keyring } from '../crypto/keyring.ts';
import type { Executor } from '../db/database.ts';
import { UnauthorizedError } from '../errors.ts';
import { findTotp, listSealedTotpSecrets, setSealedTotpSecret, useRecoveryCode, useTotpStep } from './totp-store.ts';

/** RFC 6238 with the parameters every authenticator app assumes: SHA-1, 6 digits, 30-second steps. */
export const TOTP_PERIOD_SECONDS = 30;
/** Codes of the step before and after the current one are accepted too (clock drift). */
const TOTP_WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;

export interface SecondFactorInput {
  totpCode?: string;
  recoveryCode?: string;
}

export function totpOf(secret: OTPAuth.Secret, label = 'Coffer'): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ issuer: 'Coffer', label, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD_SECONDS, secret });
}

function context(userId: string): string {
  return `coffer:user:${userId}:totp-secret`;
}

export function sealTotpSecret(keyring: Keyring, userId: string, base32: string): Buffer {
  return keyring.sealWithRootKey(base32, context(userId));
}

export function openTotpSecret(keyring: Keyring, userId: string, sealed: Buffer): OTPAuth.Secret {
  return OTPAuth.Secret.fromBase32(keyring.openWithRootKey(sealed, context(userId)));
}

/** The 30-second step `code` belongs to at `now` (within the window), or undefined. */
export function matchingStep(secret: OTPAuth.Secret, code: string, now: number): number | undefined {
  const delta = totpOf(secret).validate({ token: code.trim(), timestamp: now, window: TOTP_WINDOW });
  return delta === null ? undefined : Math.floor(now / 1000 / TOTP_PERIOD_SECONDS) + delta;
}

/** Ten single-use recovery codes ("xxxxx-xxxxx", hex) and the digests stored for them. */
export function newRecoveryCodes(): { codes: string[]; digests: Buffer[] } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const hex = randomBytes(5).toString('hex');
    return `${hex.slice(0, 5)}-${hex.slice(5)}`;
  });
  return { codes, digests: codes.map(recoveryCodeDigest) };
}

export function recoveryCodeDigest(code: string): Buffer {
  return createHash('sha256').update(code.trim().toLowerCase().replaceAll('-', '')).digest();
}

/** Whether the user has a confirmed TOTP enrolment. */
export async function hasSecondFactor(db: Executor, userId: string): Promise<boolean> {
  return Boolean((await findTotp(db, userId))?.confirmedAt);
}

/**
 * Checks and uses up the second factor of a sign-in, in its transaction: a TOTP code of a step not used before
 * (a code works once), or an unused recovery code. 401 InvalidMfaCode otherwise, which the login throttle counts.
 */
export async function useSecondFactor(db: Executor, keyring: Keyring, userId: string, input: SecondFactorInput, now: number): Promise<'totp' | 'recovery-code'> {
  const totp = await findTotp(db, userId);
  if (totp?.confirmedAt && input.totpCode) {
    const step = matchingStep(openTotpSecret(keyring, userId, totp.encryptedSecret), input.totpCode, now);
    if (step !== undefined && (await useTotpStep(db, userId, step))) return 'totp';
  } else if (totp?.confirmedAt && input.recoveryCode) {
    if (await useRecoveryCode(db, userId, recoveryCodeDigest(input.recoveryCode), new Date(now))) return 'recovery-code';
  }
  throw new UnauthorizedError('Invalid or used second-factor code', 'InvalidMfaCode');
}

/** Root key rotation, inside its transaction: every TOTP secret opened with `current`, sealed with `next`. */
export async function resealTotpSecrets(db: Executor, current: Keyring, next: Keyring): Promise<number> {
  const rows = await listSealedTotpSecrets(db);
  for (const row of rows) {
    await setSealedTotpSecret(db, row.userId, next.sealWithRootKey(current.openWithRootKey(row.encryptedSecret, context(row.userId)), context(row.userId)));
  }
  return rows.length;
}
