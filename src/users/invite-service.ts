import type { Actor, RequestOrigin } from '../actor/actor.ts';
import type { LoginThrottle } from '../auth/login-throttle.ts';
import type { CredentialDigest } from '../crypto/credential-digest.ts';
import type { Executor } from '../db/database.ts';
import { hashPassword, verifyPassword } from '../crypto/passwords.ts';
import { BadRequestError, UnauthorizedError } from '../errors.ts';
import { findInviteByDigest, findUserOrgMembership } from '../orgs/org-store.ts';
import { acceptInvite, inviteUserToOrg } from '../orgs/org-membership-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { passwordSignInPolicy } from '../sso/sign-in-policy.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { findUserByEmail, insertUser, orgIdsOfEmail, publicUser, setUserPassword } from './user-store.ts';

/** What InviteService checks before its transaction. */
interface PasswordChecks {
  passwordHash: string;
  inviteId: string | undefined;
  existingPasswordOk: boolean | undefined;
}

export const INVITE_TTL_SECONDS = 7 * 24 * 60 * 60;

export interface AcceptInviteInput {
  email: string;
  organizationId: string;
  inviteToken: string;
  password: string;
  firstName?: string;
  lastName?: string;
}

/**
 * Inviting users into an organization by email. Each invite carries a one-time
 * token (returned once, stored as a digest) that the user presents, with a
 * password, to accept.
 */
export class InviteService {
  readonly #deps: ServiceDeps;
  readonly #credentials: CredentialDigest;
  readonly #throttle: LoginThrottle;

  constructor(deps: ServiceDeps, credentials: CredentialDigest, throttle: LoginThrottle) {
    this.#deps = deps;
    this.#credentials = credentials;
    this.#throttle = throttle;
  }

  async invite(actor: Actor, input: { organizationId: string; emails: string[]; role: string }) {
    const { permissions } = this.#deps;
    const emails = [...new Set(input.emails.map((email) => email.toLowerCase()))];
    const expiresAt = new Date(Date.now() + INVITE_TTL_SECONDS * 1000);
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      await tx.authorizeOrg({ action: 'create', subject: 'member', orgId: input.organizationId });
      permissions.assertCanGrantOrgRole(actor, input.role, 'Failed to invite a user with a more privileged role');
      const trx = tx.db;
      const invites = [];
      for (const email of emails) {
        const user = (await findUserByEmail(trx, email)) ?? (await insertUser(trx, { email, username: email, firstName: null, lastName: null, passwordHash: null }));
        if ((await findUserOrgMembership(trx, input.organizationId, user.id))?.status === 'accepted') {
          throw new BadRequestError(`User '${email}' is already a member of this organization`, 'AlreadyMember');
        }
        const inviteToken = this.#credentials.generate();
        const membership = await inviteUserToOrg(trx, {
          orgId: input.organizationId,
          userId: user.id,
          role: input.role,
          inviteEmail: email,
          inviteTokenDigest: this.#credentials.digest(inviteToken),
          inviteExpiresAt: expiresAt,
        });
        invites.push({ email, membershipId: membership.id, inviteToken, expiresAt: expiresAt.toISOString() });
      }
      tx.audit({
        orgId: input.organizationId,
        type: 'invite-org-members',
        metadata: { emails, role: input.role, membershipIds: invites.map((invite) => invite.membershipId) },
      });
      return invites;
    });
  }

  /** Any mismatch (token, email, organization, expiry, an existing user's password) is the same 401; throttled per email and source address. */
  async accept(input: AcceptInviteInput, origin: RequestOrigin) {
    const attempt = { method: 'invite', credentialKind: 'email', credential: input.email, orgsOfCredential: (db: Executor) => orgIdsOfEmail(db, input.email) } as const;
    const digest = this.#credentials.digest(input.inviteToken);
    return this.#throttle.attempt(
      attempt,
      origin,
      (tx, checked) => this.#accept(tx, input, origin, digest, checked),
      () => this.#checkPasswords(input, digest),
    );
  }

  /** The argon2id work, outside any transaction: the new password's hash, and an existing account's password checked. */
  async #checkPasswords(input: AcceptInviteInput, digest: Buffer) {
    const passwordHash = await hashPassword(input.password);
    const invite = await findInviteByDigest(this.#deps.db, digest);
    const existingPasswordOk = invite?.passwordHash ? await verifyPassword(invite.passwordHash, input.password) : undefined;
    return { passwordHash, inviteId: invite?.id, existingPasswordOk };
  }

  async #accept(tx: WriteContext, input: AcceptInviteInput, origin: RequestOrigin, digest: Buffer, checked: PasswordChecks) {
    const trx = tx.db;
    const invite = await findInviteByDigest(trx, digest);
    const emailMatches = this.#credentials.matches((invite?.email ?? '').toLowerCase(), input.email.toLowerCase());
    const valid = invite && emailMatches && invite.orgId === input.organizationId && (invite.inviteExpiresAt?.getTime() ?? 0) > Date.now();
    if (!valid || invite.id !== checked.inviteId) throw new UnauthorizedError('Invalid or expired invite');
    // where single sign-on is enforced, an invite is accepted by signing in through it (no password is set)
    await passwordSignInPolicy(trx, invite.orgId, invite.role, false);
    // Someone who already has an account proves it with their password.
    if (invite.passwordHash && !checked.existingPasswordOk) throw new UnauthorizedError('Invalid or expired invite');
    if (!invite.passwordHash) {
      await setUserPassword(trx, invite.userId!, { passwordHash: checked.passwordHash, firstName: input.firstName ?? null, lastName: input.lastName ?? null });
    }
    await acceptInvite(trx, invite.id);
    const user = (await findUserByEmail(trx, invite.email))!;
    const actor = { kind: 'user' as const, id: user.id, name: user.email, orgId: invite.orgId, orgRole: invite.role, tokenId: null, authMethod: 'email', ...origin };
    tx.audit({ actor, orgId: invite.orgId, type: 'accept-org-invite', metadata: { userId: user.id, membershipId: invite.id } });
    return { message: 'Successfully accepted the invite', user: publicUser(user), organizationId: invite.orgId };
  }
}
