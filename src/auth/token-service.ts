import type { Actor, RequestOrigin } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { BadRequestError, UnauthorizedError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { type AuthService, isTokenExpired } from './auth-service.ts';
import { revokeUserSession } from './session-store.ts';
import { deleteIdentityToken, findIdentityTokenWithOwner, renewIdentityToken, revokeIdentityToken } from './token-store.ts';

type TokenRow = NonNullable<Awaited<ReturnType<typeof findIdentityTokenWithOwner>>>;

/** Seconds the token stays valid from `now`: its TTL, capped by what its max TTL leaves. */
function secondsLeft(row: TokenRow, now: number): number {
  const maxLeft = row.accessTokenMaxTtl > 0 ? Math.max(0, Math.floor((row.createdAt.getTime() + row.accessTokenMaxTtl * 1000 - now) / 1000)) : Infinity;
  const ttl = row.accessTokenTtl > 0 ? row.accessTokenTtl : Infinity;
  const left = Math.min(ttl, maxLeft);
  return Number.isFinite(left) ? left : 0;
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
    return this.#deps.db.transaction().execute(async (trx) => {
      const row = await this.#authorize(trx, actor, accessToken);
      const now = Date.now();
      if (isTokenExpired(row, now)) {
        await deleteIdentityToken(trx, row.id);
        throw new UnauthorizedError('Access token has expired and can no longer be renewed');
      }
      await renewIdentityToken(trx, row.id, new Date(now));
      await this.#audit(trx, actor, row, 'renew-identity-access-token');
      return { accessToken, expiresIn: secondsLeft(row, now), accessTokenMaxTTL: row.accessTokenMaxTtl, tokenType: 'Bearer' as const };
    });
  }

  async revoke(actor: Actor, accessToken: string) {
    await this.#deps.db.transaction().execute(async (trx) => {
      const row = await this.#authorize(trx, actor, accessToken);
      await revokeIdentityToken(trx, row.id);
      await this.#audit(trx, actor, row, 'revoke-identity-access-token');
    });
    return { message: 'Successfully revoked access token' };
  }

  /** Ends the session (user) or revokes the access token (identity) the caller authenticated with. */
  async logout(actor: Actor) {
    if (!actor.tokenId) throw new BadRequestError('This caller has no token to revoke', 'NoToken');
    const tokenId = actor.tokenId;
    await this.#deps.db.transaction().execute(async (trx) => {
      if (actor.kind === 'user') await revokeUserSession(trx, tokenId);
      else await revokeIdentityToken(trx, tokenId);
      await this.#deps.audit.record(trx, actor, { orgId: actor.orgId }, {
        type: actor.kind === 'user' ? 'logout-user' : 'revoke-identity-access-token',
        metadata: actor.kind === 'user' ? { userId: actor.id, sessionId: tokenId } : { identityId: actor.id, identityAccessTokenId: tokenId },
      });
    });
    return { message: 'Successfully logged out' };
  }

  /** A live identity token row; the caller is its identity, or may manage that identity. */
  async #authorize(db: Executor, actor: Actor, accessToken: string): Promise<TokenRow> {
    const claims = await this.#auth.verifyToken(accessToken);
    if (claims.authTokenType !== 'identityAccessToken' || !claims.identityAccessTokenId) {
      throw new BadRequestError('Only identity access tokens can be renewed or revoked', 'NotAnIdentityToken');
    }
    const row = await findIdentityTokenWithOwner(db, claims.identityAccessTokenId);
    if (!row || row.isAccessTokenRevoked || !row.orgId) throw new UnauthorizedError('No valid identity access token found');
    if (actor.kind === 'identity' && actor.id === row.identityId) return row;
    await this.#deps.permissions.assertOrgPermission(actor, row.orgId, 'edit', 'identity');
    this.#deps.permissions.assertCanGrantOrgRole(actor, row.orgRole ?? 'admin', 'Failed to manage a more privileged identity');
    return row;
  }

  async #audit(trx: Executor, actor: Actor, row: TokenRow, type: string): Promise<void> {
    await this.#deps.audit.record(trx, actor, { orgId: row.orgId! }, {
      type,
      metadata: { identityId: row.identityId, identityAccessTokenId: row.id },
    });
  }
}
