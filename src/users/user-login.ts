import type { RequestOrigin } from '../actor/actor.ts';
import type { AuthService } from '../auth/auth-service.ts';
import type { LoginThrottle } from '../auth/login-throttle.ts';
import type { Executor } from '../db/database.ts';
import { hashPassword, verifyPassword } from '../crypto/passwords.ts';
import { BadRequestError, UnauthorizedError } from '../errors.ts';
import { acceptedOrgIdsOfUser, findUserOrgMembership } from '../orgs/org-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { findUserByEmail, orgIdsOfEmail } from './user-store.ts';

/** Verified against when the email is unknown, so that both cases cost one argon2id verification. */
let decoyHash: Promise<string> | undefined;

/** Email and password → a user access token for one organization; throttled per email and source address (LoginThrottle). */
export class UserLogin {
  readonly #deps: ServiceDeps;
  readonly #auth: AuthService;
  readonly #throttle: LoginThrottle;

  constructor(deps: ServiceDeps, auth: AuthService, throttle: LoginThrottle) {
    this.#deps = deps;
    this.#auth = auth;
    this.#throttle = throttle;
  }

  async login(input: { email: string; password: string; organizationId?: string }, origin: RequestOrigin) {
    const attempt = { method: 'user', credentialKind: 'email', credential: input.email, orgsOfCredential: (db: Executor) => orgIdsOfEmail(db, input.email) } as const;
    return this.#throttle.attempt(
      attempt,
      origin,
      (tx, verified) => this.#issue(tx, input, origin, verified),
      () => this.#verify(input),
    );
  }

  /** The password check (argon2id), outside any transaction; an unknown email costs the same. */
  async #verify(input: { email: string; password: string }) {
    const user = await findUserByEmail(this.#deps.db, input.email);
    decoyHash ??= hashPassword('not a password anyone has');
    const verified = await verifyPassword(user?.passwordHash ?? (await decoyHash), input.password);
    return verified && user?.passwordHash ? user : undefined;
  }

  async #issue(tx: WriteContext, input: { organizationId?: string }, origin: RequestOrigin, user: { id: string; email: string } | undefined) {
    const trx = tx.db;
    if (!user) throw new UnauthorizedError('Invalid credentials');
    const orgIds = await acceptedOrgIdsOfUser(trx, user.id);
    const orgId = input.organizationId ?? (orgIds.length === 1 ? orgIds[0] : undefined);
    if (!orgId) throw new BadRequestError('You belong to several organizations: give organizationId', 'OrganizationRequired');
    if (!orgIds.includes(orgId)) throw new UnauthorizedError('Invalid credentials');
    const { sessionId, ...token } = await this.#auth.issueUserToken(trx, user.id, orgId);
    const membership = (await findUserOrgMembership(trx, orgId, user.id))!;
    const actor = { kind: 'user' as const, id: user.id, name: user.email, orgId, orgRole: membership.role, tokenId: sessionId, authMethod: 'email', ...origin };
    tx.audit({ actor, orgId, type: 'login-user', metadata: { userId: user.id, sessionId } });
    return { ...token, organizationId: orgId };
  }
}
