import type { Logger } from 'pino';
import type { RequestOrigin } from '../actor/actor.ts';
import { passwordSignInPolicy } from '../sso/sign-in-policy.ts';
import { hasSecondFactor, type SecondFactorInput, useSecondFactor } from '../mfa/second-factor.ts';
import type { AuthService } from '../auth/auth-service.ts';
import type { LoginThrottle } from '../auth/login-throttle.ts';
import type { Executor } from '../db/database.ts';
import { hashPassword, verifyPassword } from '../crypto/passwords.ts';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '../errors.ts';
import { acceptedOrgIdsOfUser, acceptedOrgsOfUser, findUserOrgMembership } from '../orgs/org-store.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { findUserByEmail, findUserById, orgIdsOfEmail } from './user-store.ts';

/** The login-token routes serve users only: another caller (an identity) is refused. */
function requireUserCaller(userId: string | undefined): string {
  if (!userId) throw new ForbiddenError('Only users log in to an organization', 'ForbiddenError');
  return userId;
}

export interface UserLoginOptions {
  /** Org admins may sign in with a password where single sign-on is enforced (COFFER_SSO_BREAK_GLASS). */
  ssoBreakGlass?: boolean;
  logger?: Logger;
  /** The time TOTP codes are checked at (tests inject one). */
  clock?: () => number;
}

interface PasswordLoginInput extends SecondFactorInput {
  email: string;
  password: string;
}

/** Verified against when the email is unknown, so that both cases cost one argon2id verification. */
let decoyHash: Promise<string> | undefined;

/**
 * Email and password → a user access token for one organization; throttled per email and source address (LoginThrottle).
 * In one step (`login`), or in the reference's two (`loginToChoose`, then `selectOrganization`) that the Infisical CLI takes.
 */
export class UserLogin {
  readonly #deps: ServiceDeps;
  readonly #auth: AuthService;
  readonly #throttle: LoginThrottle;

  readonly #options: UserLoginOptions;

  constructor(deps: ServiceDeps, auth: AuthService, throttle: LoginThrottle, options: UserLoginOptions = {}) {
    this.#deps = deps;
    this.#auth = auth;
    this.#throttle = throttle;
    this.#options = options;
  }

  /** `firstOrganization`: a user of several organizations who names none signs in to the one joined first (the console, which then switches). */
  async login(input: PasswordLoginInput & { organizationId?: string; firstOrganization?: boolean }, origin: RequestOrigin) {
    return this.#throttle.attempt(
      this.#attempt(input.email),
      origin,
      (tx, verified) => this.#issue(tx, input, origin, verified, false),
      () => this.#verify(input),
    );
  }

  /** Checks the password and answers a short-lived login token that can only choose an organization. */
  async loginToChoose(input: PasswordLoginInput, origin: RequestOrigin) {
    return this.#throttle.attempt(
      this.#attempt(input.email),
      origin,
      async (tx, user) => {
        if (!user) throw new UnauthorizedError('Invalid credentials');
        if (await hasSecondFactor(tx.db, user.id)) await this.#useSecondFactor(tx, user.id, input);
        return { accessToken: await this.#auth.issueLoginToken(user.id) };
      },
      () => this.#verify(input),
    );
  }

  /** The organizations a user can log in to. */
  async organizations(userId: string | undefined) {
    const orgs = await acceptedOrgsOfUser(this.#deps.db, requireUserCaller(userId));
    return orgs.map((org) => ({ id: org.id, name: org.name, slug: org.slug, createdAt: org.createdAt.toISOString(), updatedAt: org.updatedAt.toISOString() }));
  }

  /** Those of the user's organizations that are among `orgIds` (what a session confined to one may name). */
  async organizationsAmong(userId: string, orgIds: readonly string[]) {
    return (await this.organizations(userId)).filter((org) => orgIds.includes(org.id));
  }

  /** The user of a login token (or of a user session) and one of their organizations → a session in it. */
  async selectOrganization(userId: string | undefined, organizationId: string, origin: RequestOrigin) {
    const caller = requireUserCaller(userId);
    return this.#deps.unitOfWork.write(origin, async (tx) => {
      tx.authorizedBy('the login token names its user; the organization is checked against their memberships below');
      const user = await findUserById(tx.db, caller);
      if (!user) throw new UnauthorizedError('No valid user found for this token');
      const orgIds = await acceptedOrgIdsOfUser(tx.db, user.id);
      if (!orgIds.includes(organizationId)) throw new UnauthorizedError('User does not have access to the organization');
      // the login token was issued after the second factor, when one is enrolled
      const { accessToken } = await this.#issue(tx, { organizationId }, origin, user, true);
      return { token: accessToken, isMfaEnabled: false as const };
    });
  }

  /** A second factor is required: missing → 403 MfaRequired (not a failed attempt); wrong or used → 401, counted. */
  async #useSecondFactor(tx: WriteContext, userId: string, input: SecondFactorInput) {
    if (!input.totpCode && !input.recoveryCode) {
      throw new ForbiddenError('A second factor is required: send totpCode (or recoveryCode)', 'MfaRequired');
    }
    return useSecondFactor(tx.db, this.#deps.keyring, userId, input, (this.#options.clock ?? Date.now)());
  }

  #attempt(email: string) {
    return { method: 'user', credentialKind: 'email', credential: email, orgsOfCredential: (db: Executor) => orgIdsOfEmail(db, email) } as const;
  }

  /** The password check (argon2id), outside any transaction; an unknown email costs the same. */
  async #verify(input: { email: string; password: string }) {
    const user = await findUserByEmail(this.#deps.db, input.email);
    decoyHash ??= hashPassword('not a password anyone has');
    const verified = await verifyPassword(user?.passwordHash ?? (await decoyHash), input.password);
    return verified && user?.passwordHash ? user : undefined;
  }

  async #issue(
    tx: WriteContext,
    input: SecondFactorInput & { organizationId?: string; firstOrganization?: boolean },
    origin: RequestOrigin,
    user: { id: string; email: string } | undefined,
    secondFactorChecked: boolean,
  ) {
    const trx = tx.db;
    if (!user) throw new UnauthorizedError('Invalid credentials');
    const orgIds = await acceptedOrgIdsOfUser(trx, user.id);
    const orgId = input.organizationId ?? (orgIds.length === 1 || input.firstOrganization ? orgIds[0] : undefined);
    if (!orgId) throw new BadRequestError('You belong to several organizations: give organizationId', 'OrganizationRequired');
    if (!orgIds.includes(orgId)) throw new UnauthorizedError('Invalid credentials');
    const membership = (await findUserOrgMembership(trx, orgId, user.id))!;
    const policy = await passwordSignInPolicy(trx, orgId, membership.role, this.#options.ssoBreakGlass ?? false);
    const enrolled = await hasSecondFactor(trx, user.id);
    if (!enrolled && policy.mfaRequired) {
      throw new ForbiddenError(
        'This organization requires a second factor: enrol one with POST /api/v1/auth/mfa/totp, using a login token from POST /api/v3/auth/login',
        'MfaEnrollmentRequired',
      );
    }
    const mfa = enrolled && !secondFactorChecked ? await this.#useSecondFactor(tx, user.id, input) : undefined;
    if (policy.breakGlass) this.#options.logger?.warn({ userId: user.id, orgId }, 'break-glass password sign-in past enforced single sign-on');
    const { sessionId, ...token } = await this.#auth.issueUserToken(trx, user.id, orgId, { authMethod: 'email', origin });
    const actor = { kind: 'user' as const, id: user.id, name: user.email, orgId, orgRole: membership.role, tokenId: sessionId, authMethod: 'email', ...origin };
    tx.audit({
      actor,
      orgId,
      type: 'login-user',
      metadata: {
        userId: user.id,
        sessionId,
        method: 'password',
        result: 'success',
        ...(mfa ? { mfa } : {}),
        ...(policy.breakGlass ? { breakGlass: true } : {}),
      },
    });
    return { ...token, organizationId: orgId };
  }
}
