import type { Actor, RequestOrigin } from '../actor/actor.ts';
import type { CredentialDigest } from '../crypto/credential-digest.ts';
import { hashPassword, verifyPassword } from '../crypto/passwords.ts';
import { BadRequestError, UnauthorizedError } from '../errors.ts';
import { acceptInvite, findInviteByDigest, findUserOrgMembership, inviteUserToOrg } from '../orgs/org-store.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { findUserByEmail, insertUser, publicUser, setUserPassword } from './user-store.ts';

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

  constructor(deps: ServiceDeps, credentials: CredentialDigest) {
    this.#deps = deps;
    this.#credentials = credentials;
  }

  async invite(actor: Actor, input: { organizationId: string; emails: string[]; role: string }) {
    const { db, permissions, audit } = this.#deps;
    await permissions.assertOrgPermission(actor, input.organizationId, 'create', 'member');
    permissions.assertCanGrantOrgRole(actor, input.role, 'Failed to invite a user with a more privileged role');
    const emails = [...new Set(input.emails.map((email) => email.toLowerCase()))];
    const expiresAt = new Date(Date.now() + INVITE_TTL_SECONDS * 1000);
    return db.transaction().execute(async (trx) => {
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
      await audit.record(trx, actor, { orgId: input.organizationId }, {
        type: 'invite-org-members',
        metadata: { emails, role: input.role, membershipIds: invites.map((invite) => invite.membershipId) },
      });
      return invites;
    });
  }

  /** Any mismatch (token, email, organization, expiry, an existing user's password) is the same 401. */
  async accept(input: AcceptInviteInput, origin: RequestOrigin) {
    const { db, audit } = this.#deps;
    const digest = this.#credentials.digest(input.inviteToken);
    const passwordHash = await hashPassword(input.password);
    return db.transaction().execute(async (trx) => {
      const invite = await findInviteByDigest(trx, digest);
      const emailMatches = this.#credentials.matches((invite?.email ?? '').toLowerCase(), input.email.toLowerCase());
      const valid = invite && emailMatches && invite.orgId === input.organizationId && (invite.inviteExpiresAt?.getTime() ?? 0) > Date.now();
      if (!valid) throw new UnauthorizedError('Invalid or expired invite');
      // Someone who already has an account proves it with their password.
      if (invite.passwordHash && !(await verifyPassword(invite.passwordHash, input.password))) throw new UnauthorizedError('Invalid or expired invite');
      if (!invite.passwordHash) {
        await setUserPassword(trx, invite.userId!, { passwordHash, firstName: input.firstName ?? null, lastName: input.lastName ?? null });
      }
      await acceptInvite(trx, invite.id);
      const user = (await findUserByEmail(trx, invite.email))!;
      const actor = { kind: 'user' as const, id: user.id, name: user.email, orgId: invite.orgId, orgRole: invite.role, tokenId: null, authMethod: 'email', ...origin };
      await audit.record(trx, actor, { orgId: invite.orgId }, { type: 'accept-org-invite', metadata: { userId: user.id, membershipId: invite.id } });
      return { message: 'Successfully accepted the invite', user: publicUser(user), organizationId: invite.orgId };
    });
  }
}
