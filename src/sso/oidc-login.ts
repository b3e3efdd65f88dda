import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import type { RequestOrigin } from '../actor/actor.ts';
import type { AuthService } from '../auth/auth-service.ts';
import { type AppError, BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { createUser } from '../users/user-accounts.ts';
import { findUserByEmail } from '../users/user-store.ts';
import { openClientSecret, openCodeVerifier, sealCodeVerifier } from './client-secret-cipher.ts';
import type { GroupMapping } from './oidc-config-schema.ts';
import { callbackUrl } from './oidc-config-service.ts';
import { OidcRelyingParty, type RelyingPartySettings, SsoVerificationError } from './oidc-relying-party.ts';
import { applyGroupMappings, groupsOf } from './sso-access.ts';
import { consumeLoginState, findOidcConfig, findOrgBySlug, insertLoginState } from './sso-store.ts';
import { acceptedOrgIdsOfUser, findUserOrgMembership } from '../orgs/org-store.ts';
import { acceptInvite, addUserToOrg } from '../orgs/org-membership-service.ts';
import type { OrgOidcConfig } from '../db/schema.ts';

/** How long a sign-in may take between its start and its callback. */
export const LOGIN_STATE_TTL_MS = 10 * 60_000;

const digest = (state: string) => createHash('sha256').update(state).digest();

interface VerifiedClaims {
  email: string;
  groups: string[];
  subject: string;
}

/**
 * Sign-in with an organization's OIDC provider: `start` records a single-use state (its digest), nonce and
 * PKCE verifier, server-side with an expiry, and answers the provider's authorization URL; `callback`
 * consumes the state, has openid-client exchange the code and verify the ID token, checks the e-mail
 * (verified, of an allowed domain), creates the user or links the one with that e-mail, applies the group
 * mappings and opens a session. Every outcome is audited (`login-user-sso`), without a code or token.
 */
export class OidcLogin {
  readonly #deps: ServiceDeps;
  readonly #auth: AuthService;
  readonly #publicUrl: string;
  readonly #relyingParty = new OidcRelyingParty();
  readonly #logger: Logger | undefined;

  constructor(deps: ServiceDeps, auth: AuthService, publicUrl: string, logger?: Logger) {
    this.#deps = deps;
    this.#auth = auth;
    this.#publicUrl = publicUrl;
    this.#logger = logger;
  }

  async start(orgSlug: string, origin: RequestOrigin): Promise<string> {
    const org = await findOrgBySlug(this.#deps.db, orgSlug);
    if (!org) throw new NotFoundError('Organization not found', 'OrganizationNotFound');
    const config = await this.#activeConfig(org.id);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const url = await this.#relyingParty.authorizationUrl(org.id, this.#settings(config), {
      redirectUri: callbackUrl(this.#publicUrl),
      scopes: config.scopes,
      state,
      nonce,
      codeVerifier,
    });
    await this.#deps.unitOfWork.write(origin, async (tx) => {
      tx.authorizedBy('a sign-in starts: nothing is granted until its callback proves the user');
      await insertLoginState(tx.db, {
        stateDigest: digest(state),
        orgId: org.id,
        nonce,
        encryptedCodeVerifier: sealCodeVerifier(this.#deps.keyring, org.id, codeVerifier),
        userAgent: origin.userAgent?.slice(0, 512) ?? null,
        expiresAt: new Date(Date.now() + LOGIN_STATE_TTL_MS),
      });
    });
    return url.toString();
  }

  /** `query` is the callback's query string as received. */
  async callback(query: string, origin: RequestOrigin) {
    const state = new URLSearchParams(query).get('state');
    if (!state) throw new UnauthorizedError('The callback carries no state: start the sign-in again', 'SsoStateInvalid');
    const pending = await this.#deps.unitOfWork.write(origin, async (tx) => {
      tx.authorizedBy('the state is the proof: consumed here, once');
      return consumeLoginState(tx.db, digest(state), new Date());
    });
    if (!pending) throw new UnauthorizedError('Unknown, used or expired sign-in state: start the sign-in again', 'SsoStateInvalid');
    const config = await this.#activeConfig(pending.orgId);
    try {
      const claims = await this.#relyingParty.exchange(pending.orgId, this.#settings(config), new URL(`${callbackUrl(this.#publicUrl)}?${query}`), {
        state,
        nonce: pending.nonce,
        codeVerifier: openCodeVerifier(this.#deps.keyring, pending.orgId, pending.encryptedCodeVerifier),
      });
      const verified = this.#checkEmail(config, claims);
      return await this.#deps.unitOfWork.write(origin, (tx) => this.#signIn(tx, config, verified, origin));
    } catch (error) {
      await this.#auditFailure(config, origin, error);
      throw error;
    }
  }

  #checkEmail(config: OrgOidcConfig, claims: Record<string, unknown>): VerifiedClaims {
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
    if (!email) throw new ForbiddenError('The identity provider gave no e-mail address', 'SsoEmailMissing');
    if (claims.email_verified !== true) throw new ForbiddenError('The identity provider has not verified this e-mail address', 'SsoEmailNotVerified');
    const domain = email.slice(email.lastIndexOf('@') + 1);
    if (!config.allowedEmailDomains.includes(domain)) {
      throw new ForbiddenError("This e-mail address's domain may not sign in to this organization", 'SsoEmailDomainNotAllowed');
    }
    return { email, groups: groupsOf(claims[config.groupsClaim]), subject: String(claims.sub) };
  }

  async #signIn(tx: WriteContext, config: OrgOidcConfig, claims: VerifiedClaims, origin: RequestOrigin) {
    tx.authorizedBy('a sign-in: the ID token, verified above, proves the user');
    const orgId = config.orgId;
    const existing = await findUserByEmail(tx.db, claims.email);
    const user = existing ?? (await createUser(tx.db, { email: claims.email, username: claims.email, firstName: null, lastName: null, passwordHash: null }));
    let membership = await findUserOrgMembership(tx.db, orgId, user.id);
    if (existing && membership?.status !== 'accepted' && (await establishedElsewhere(tx, existing, orgId))) {
      // any organization's admin chooses its identity provider: its word for an address never takes over an account made elsewhere
      throw new ForbiddenError(
        "An account with this e-mail address already exists: accept this organization's invitation while signed in to it, then sign in through single sign-on",
        'SsoAccountExists',
      );
    }
    const linked = membership?.status === 'invited';
    if (!membership) {
      await addUserToOrg(tx.db, { orgId, userId: user.id, role: config.defaultOrgRole, status: 'accepted', inviteEmail: null });
      membership = (await findUserOrgMembership(tx.db, orgId, user.id))!;
    } else if (linked) await acceptInvite(tx.db, membership.id);
    const access = await applyGroupMappings(
      tx,
      { orgId, userId: user.id, membershipId: membership.id, orgRole: membership.role },
      { groupMappings: config.groupMappings as GroupMapping[], defaultOrgRole: config.defaultOrgRole },
      claims.groups,
      this.#logger,
    );
    const { sessionId, ...token } = await this.#auth.issueUserToken(tx.db, user.id, orgId, { authMethod: 'oidc', origin });
    const actor = { kind: 'user' as const, id: user.id, name: user.email, orgId, orgRole: access.orgRole, tokenId: sessionId, authMethod: 'oidc', ...origin };
    tx.audit({
      actor,
      orgId,
      type: 'login-user-sso',
      metadata: {
        method: 'oidc',
        provider: config.issuer,
        result: 'success',
        userId: user.id,
        sessionId,
        ...(linked ? { linkedInvite: true } : {}),
        orgRole: access.orgRole,
        granted: access.granted,
        removed: access.removed,
      },
    });
    return { ...token, organizationId: orgId };
  }

  async #activeConfig(orgId: string): Promise<OrgOidcConfig> {
    const config = await findOidcConfig(this.#deps.db, orgId);
    if (!config?.isActive) throw new BadRequestError('Single sign-on is not configured for this organization', 'SsoNotConfigured');
    return config;
  }

  #settings(config: OrgOidcConfig): RelyingPartySettings {
    return {
      issuer: config.issuer,
      clientId: config.clientId,
      clientSecret: openClientSecret(this.#deps.keyring, config.orgId, config.encryptedClientSecret),
      version: `${config.id}:${config.updatedAt.toISOString()}`,
    };
  }

  /** A refused callback, audited in its own write (the sign-in's was rolled back): the reason is an error code, never a claim. */
  async #auditFailure(config: OrgOidcConfig, origin: RequestOrigin, error: unknown): Promise<void> {
    const reason = error instanceof SsoVerificationError ? error.reason : ((error as AppError).code ?? 'unknown');
    this.#logger?.info({ orgId: config.orgId, reason }, 'single sign-on refused');
    await this.#deps.unitOfWork
      .write(origin, async (tx) => {
        tx.authorizedBy('records a refused sign-in');
        tx.audit({ orgId: config.orgId, type: 'login-user-sso', metadata: { method: 'oidc', provider: config.issuer, result: 'failure', reason } });
      })
      .catch((auditError: unknown) => this.#logger?.warn({ err: auditError }, 'a refused sign-in could not be audited'));
  }
}

/** The account has a password, or has joined another organization: it was not made by this organization's sign-in. */
async function establishedElsewhere(tx: WriteContext, user: { id: string; passwordHash: string | null }, orgId: string): Promise<boolean> {
  if (user.passwordHash !== null) return true;
  return (await acceptedOrgIdsOfUser(tx.db, user.id)).some((joined) => joined !== orgId);
}
