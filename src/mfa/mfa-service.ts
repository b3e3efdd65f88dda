import * as OTPAuth from 'otpauth';
import type { Actor, RequestOrigin } from '../actor/actor.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../errors.ts';
import type { Executor } from '../db/database.ts';
import { authorizeMemberAccess } from '../orgs/org-membership-service.ts';
import { acceptedOrgIdsOfUser } from '../orgs/org-store.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { findUserById } from '../users/user-store.ts';
import { matchingStep, newRecoveryCodes, openTotpSecret, RECOVERY_CODE_COUNT, sealTotpSecret, totpOf } from './second-factor.ts';
import { confirmTotp, countUnusedRecoveryCodes, deleteTotp, findTotp, replaceRecoveryCodes, savePendingTotp } from './totp-store.ts';

/** The login-token routes serve users only: another caller (an identity) is refused. */
function requireUser(userId: string | undefined): string {
  if (!userId) throw new ForbiddenError('Only users enrol a second factor', 'NotAUser');
  return userId;
}

/**
 * TOTP enrolment of password users: a secret shown once, confirmed with a code, then ten recovery codes
 * shown once (stored as digests). An org admin resets a member's enrolment. `clock` gives the time codes
 * are checked at (tests inject one).
 */
export class MfaService {
  readonly #deps: ServiceDeps;
  readonly #clock: () => number;

  constructor(deps: ServiceDeps, clock: () => number = Date.now) {
    this.#deps = deps;
    this.#clock = clock;
  }

  async status(caller: string | undefined) {
    const userId = requireUser(caller);
    const totp = await findTotp(this.#deps.db, userId);
    return {
      totpEnabled: Boolean(totp?.confirmedAt),
      recoveryCodesLeft: totp?.confirmedAt ? await countUnusedRecoveryCodes(this.#deps.db, userId) : 0,
    };
  }

  /** A new secret for the user (replacing an unconfirmed one); 409 once one is confirmed. */
  async enrol(caller: string | undefined, origin: RequestOrigin) {
    const userId = requireUser(caller);
    return this.#deps.unitOfWork.write(origin, async (tx) => {
      tx.authorizedBy('the login token or session names the user, who enrols themselves');
      const user = await findUserById(tx.db, userId);
      if (!user) throw new NotFoundError('User not found');
      if ((await findTotp(tx.db, userId))?.confirmedAt) throw new ConflictError('A TOTP authenticator is already enrolled: an org admin resets it', 'MfaAlreadyEnrolled');
      const secret = new OTPAuth.Secret({ size: 20 });
      await savePendingTotp(tx.db, userId, sealTotpSecret(this.#deps.keyring, userId, secret.base32));
      return { secret: secret.base32, otpauthUrl: totpOf(secret, user.email).toString() };
    });
  }

  /** Confirms the pending secret with a current code; answers the recovery codes, once. */
  async confirm(caller: string | undefined, code: string, origin: RequestOrigin) {
    const userId = requireUser(caller);
    return this.#deps.unitOfWork.write(origin, async (tx) => {
      tx.authorizedBy('the login token or session names the user, who enrols themselves');
      const totp = await findTotp(tx.db, userId);
      if (!totp) throw new BadRequestError('Start the enrolment first: POST /api/v1/auth/mfa/totp', 'MfaNotStarted');
      if (totp.confirmedAt) throw new ConflictError('A TOTP authenticator is already enrolled', 'MfaAlreadyEnrolled');
      const now = this.#clock();
      const step = matchingStep(openTotpSecret(this.#deps.keyring, userId, totp.encryptedSecret), code, now);
      if (step === undefined) throw new BadRequestError('The code does not match the new secret', 'InvalidMfaCode');
      await confirmTotp(tx.db, userId, new Date(now), step);
      const { codes, digests } = newRecoveryCodes();
      await replaceRecoveryCodes(tx.db, userId, digests);
      for (const orgId of await this.#orgsOf(tx.db, userId)) tx.audit({ orgId, type: 'enrol-mfa-totp', metadata: { userId, recoveryCodes: RECOVERY_CODE_COUNT } });
      return { message: 'TOTP enrolled: keep the recovery codes somewhere safe, they are shown only now', recoveryCodes: codes };
    });
  }

  /** An org admin removes a member's enrolment (a lost device); the member enrols again. */
  async reset(actor: Actor, organizationId: string, userId: string) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      await authorizeMemberAccess(this.#deps, tx, organizationId, userId, 'Failed to reset a more privileged member');
      // the second factor is the account's, not the organization's: one organization's admin must not strip it where it protects others
      if ((await acceptedOrgIdsOfUser(tx.db, userId)).some((orgId) => orgId !== organizationId)) {
        throw new ForbiddenError(
          'This account belongs to other organizations too, where its second factor protects it as well: it signs in with a recovery code and enrols again itself',
          'MemberOfOtherOrganizations',
        );
      }
      const removed = await deleteTotp(tx.db, userId);
      if (removed) tx.audit({ orgId: organizationId, type: 'reset-user-mfa', metadata: { userId } });
      return { message: removed ? 'The second factor was reset' : 'This user had no second factor enrolled', reset: removed };
    });
  }

  async #orgsOf(db: Executor, userId: string): Promise<string[]> {
    const orgs = await acceptedOrgIdsOfUser(db, userId);
    if (orgs.length === 0) throw new ForbiddenError('Only members of an organization enrol a second factor', 'ForbiddenError');
    return orgs;
  }
}
