import type { Actor, RequestOrigin } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { BadRequestError, UnauthorizedError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { type AuthService, isTokenExpired } from './auth-service.ts';
import { revokeUserSession } from './session-store.ts';
import { deleteIdentityTokensByMethod, findIdentityTokenWithOwner, renewIdentityToken, revokeIdentityToken, revokeTokensOfClientSecret } from './token-store.ts';

type TokenRow = NonNullable<Awaited<ReturnType<typeof findIdentityTokenWithOwner>>>;

/** Seconds the token stays valid from `now`: its TTL, capped by what its max TTL leaves. */
function secondsLeft(row: TokenRow, now: number): number {
  const maxLeft = row.accessTokenMaxTtl > 0 ? Math.max(0, Math.floor((row.createdAt.getTime() + row.accessTokenMaxTtl * 1000 - now) / 1000)) : Infinity;
  const ttl = row.accessTokenTtl > 0 ? row.accessTokenTtl : Infinity;
  const left = Math.min(ttl, maxLeft);
  return Number.isFinite(left) ? left : 0;
}

/** Deletes the identity's access tokens issued by one auth method (it was removed), in the caller's write. */
export function revokeTokensIssuedBy(db: Executor, identityId: string, authMethod: string): Promise<void> {
  return deleteIdentityTokensByMethod(db, identityId, authMethod);
}

/**
 * Revokes the access tokens a client secret logged in, in the caller's write (the secret was revoked): a
 * revoked credential leaves nothing behind that still works.
 */
export function revokeTokensLoggedInWith(db: Executor, clientSecretId: string): Promise<void> {
  return revokeTokensOfClientSecret(db, clientSecretId);
}

/** Renewing and revoking identity access tokens, and signing out. */
export class TokenService {
  readonly #deps: ServiceDeps;
  readonly #auth: AuthService;

  constructor(deps: ServiceDeps, auth: AuthService) {
    this.#deps = deps;
    this.#auth = auth;
  }

  /**
   * The caller of a renew or revoke: the bearer of `authorization` when given, else, as the
   * reference allows, the identity of the access token in the body (holding it is the proof).
   */
  async callerOf(authorization: string | undefined, accessToken: string, origin: RequestOrigin): Promise<Actor> {
    return this.#auth.authenticate(authorization ?? `Bearer ${accessToken}`, origin);
  }

  /** Restarts the token's TTL window; it still ends at its max TTL. */
  async renew(actor: Actor, accessToken: string) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const row = await this.#authorize(tx, accessToken);
      const now = Date.now();
      if (isTokenExpired(row, now)) throw new UnauthorizedError('Access token has expired and can no longer be renewed');
      await renewIdentityToken(tx.db, row.id, new Date(now));
      auditToken(tx, row, 'renew-identity-access-token');
      return { accessToken, expiresIn: secondsLeft(row, now), accessTokenMaxTTL: row.accessTokenMaxTtl, tokenType: 'Bearer' as const };
    });
  }

  async revoke(actor: Actor, accessToken: string) {
    await this.#deps.unitOfWork.write(actor, async (tx) => {
      const row = await this.#authorize(tx, accessToken);
      await revokeIdentityToken(tx.db, row.id);
      auditToken(tx, row, 'revoke-identity-access-token');
    });
    return { message: 'Successfully revoked access token' };
  }

  /** Ends the session (user) or revokes the access token (identity) the caller authenticated with. */
  async logout(actor: Actor) {
    if (!actor.tokenId) throw new BadRequestError('This caller has no token to revoke', 'NoToken');
    const tokenId = actor.tokenId;
    await this.#deps.unitOfWork.write(actor, async (tx) => {
      tx.authorizedBy('the caller ends its own session or token');
      if (actor.kind === 'user') await revokeUserSession(tx.db, tokenId);
      else await revokeIdentityToken(tx.db, tokenId);
      tx.audit({
        orgId: actor.orgId,
        type: actor.kind === 'user' ? 'logout-user' : 'revoke-identity-access-token',
        metadata: actor.kind === 'user' ? { userId: actor.id, sessionId: tokenId } : { identityId: actor.id, identityAccessTokenId: tokenId },
      });
    });
    return { message: 'Successfully logged out' };
  }

  /** A live identity token row; the caller is its identity, or may manage that identity. */
  async #authorize(tx: WriteContext, accessToken: string): Promise<TokenRow> {
    const claims = await this.#auth.verifyToken(accessToken);
    if (claims.authTokenType !== 'identityAccessToken' || !claims.identityAccessTokenId) {
      throw new BadRequestError('Only identity access tokens can be renewed or revoked', 'NotAnIdentityToken');
    }
    const row = await findIdentityTokenWithOwner(tx.db, claims.identityAccessTokenId);
    if (!row || row.isAccessTokenRevoked || !row.orgId) throw new UnauthorizedError('No valid identity access token found');
    const { actor } = tx;
    if (actor.kind === 'identity' && actor.id === row.identityId) {
      tx.authorizedBy('the identity that holds the token');
      return row;
    }
    await tx.authorizeOrg({ action: 'edit', subject: 'identity', orgId: row.orgId });
    this.#deps.permissions.assertCanGrantOrgRole(actor, row.orgRole ?? 'admin', 'Failed to manage a more privileged identity');
    return row;
  }
}

function auditToken(tx: WriteContext, row: TokenRow, type: string): void {
  tx.audit({ orgId: row.orgId!, type, metadata: { identityId: row.identityId, identityAccessTokenId: row.id } });
}
