import type { RequestOrigin } from '../actor/actor.ts';
import type { AuthService } from '../auth/auth-service.ts';
import { hashPassword, verifyPassword } from '../crypto/passwords.ts';
import { BadRequestError, UnauthorizedError } from '../errors.ts';
import { acceptedOrgIdsOfUser, findUserOrgMembership } from '../orgs/org-store.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { findUserByEmail } from './user-store.ts';

/** Verified against when the email is unknown, so that both cases cost one argon2id verification. */
let decoyHash: Promise<string> | undefined;

/** Email and password → a user access token for one organization. */
export class UserLogin {
  readonly #deps: ServiceDeps;
  readonly #auth: AuthService;

  constructor(deps: ServiceDeps, auth: AuthService) {
    this.#deps = deps;
    this.#auth = auth;
  }

  async login(input: { email: string; password: string; organizationId?: string }, origin: RequestOrigin) {
    const { db, audit } = this.#deps;
    const user = await findUserByEmail(db, input.email);
    decoyHash ??= hashPassword('not a password anyone has');
    const verified = await verifyPassword(user?.passwordHash ?? (await decoyHash), input.password);
    if (!user?.passwordHash || !verified) throw new UnauthorizedError('Invalid credentials');
    const orgIds = await acceptedOrgIdsOfUser(db, user.id);
    const orgId = input.organizationId ?? (orgIds.length === 1 ? orgIds[0] : undefined);
    if (!orgId) throw new BadRequestError('You belong to several organizations: give organizationId', 'OrganizationRequired');
    if (!orgIds.includes(orgId)) throw new UnauthorizedError('Invalid credentials');
    return db.transaction().execute(async (trx) => {
      const { sessionId, ...token } = await this.#auth.issueUserToken(trx, user.id, orgId);
      const membership = (await findUserOrgMembership(trx, orgId, user.id))!;
      const actor = { kind: 'user' as const, id: user.id, name: user.email, orgId, orgRole: membership.role, tokenId: sessionId, authMethod: 'email', ...origin };
      await audit.record(trx, actor, { orgId }, { type: 'login-user', metadata: { userId: user.id, sessionId } });
      return { ...token, organizationId: orgId };
    });
  }
}
