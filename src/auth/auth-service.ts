import type { Actor, RequestOrigin } from '../actor/actor.ts';
import { accountUserOf } from './account-reach.ts';
import type { Executor } from '../db/database.ts';
import type { CacheVersions } from '../caches/cache-versions.ts';
import { VersionedCache } from '../caches/versioned-cache.ts';
import type { TrustedIp } from '../db/schema.ts';
import type { AccessTokenClaims, TokenSigner } from '../crypto/tokens.ts';
import { ForbiddenError, TokenError, UnauthorizedError } from '../errors.ts';
import { isIpTrusted } from '../universal-auth/trusted-ips.ts';
import { findSessionWithUser, insertUserSession, recordSessionUse } from './session-store.ts';
import { countTokenUse, deleteIdentityToken, findIdentityTokenWithOwner, insertIdentityToken, type NewIdentityToken } from './token-store.ts';

export interface IssuedToken {
  accessToken: string;
  expiresIn: number;
  accessTokenMaxTTL: number;
  tokenType: 'Bearer';
}

/** User sessions last as long as the reference's JWT_AUTH_LIFETIME default (10 days). */
export const USER_SESSION_TTL_SECONDS = 10 * 24 * 60 * 60;

/** A login token (password checked, no organization chosen yet) is good for choosing one, for this long. */
export const LOGIN_TOKEN_TTL_SECONDS = 10 * 60;

/** A session's last use is recorded to the minute. */
const SESSION_USE_RESOLUTION_MS = 60_000;

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The lifetime fields of an identity access token row. */
export interface TokenLifetime {
  accessTokenTtl: number;
  accessTokenMaxTtl: number;
  accessTokenLastRenewedAt: Date | null;
  createdAt: Date;
}

/** Past its TTL (from creation or last renewal) or past its max TTL (from creation). */
export function isTokenExpired(row: TokenLifetime, now = Date.now()): boolean {
  const renewedAt = (row.accessTokenLastRenewedAt ?? row.createdAt).getTime();
  return (
    (row.accessTokenTtl > 0 && now > renewedAt + row.accessTokenTtl * 1000) || (row.accessTokenMaxTtl > 0 && now > row.createdAt.getTime() + row.accessTokenMaxTtl * 1000)
  );
}

type IdentityTokenRow = NonNullable<Awaited<ReturnType<typeof findIdentityTokenWithOwner>>>;

/** The trusted addresses of a token's login method, by method; null when the method's configuration is gone. */
const TRUSTED_IPS_OF: Record<string, (row: IdentityTokenRow) => TrustedIp[] | null> = {
  'universal-auth': (row) => row.accessTokenTrustedIps,
  'kubernetes-auth': (row) => row.kubernetesAuthTrustedIps,
  'jwt-auth': (row) => row.jwtAuthTrustedIps,
};
type SessionRow = NonNullable<Awaited<ReturnType<typeof findSessionWithUser>>>;

/** Turns a bearer token into an actor, checking the token (or session) row on every request. */
export class AuthService {
  readonly #db: Executor;
  readonly #signer: TokenSigner;
  readonly #versions: CacheVersions | undefined;
  readonly #tokens: VersionedCache<IdentityTokenRow | undefined> | undefined;
  readonly #sessions: VersionedCache<SessionRow | undefined> | undefined;
  /** When this process last recorded each session's use. */
  readonly #lastNoted = new Map<string, number>();

  /** With `versions`, token and session rows are cached by version (caches/README.md); expiry is checked on every request. */
  constructor(db: Executor, signer: TokenSigner, versions?: CacheVersions) {
    this.#db = db;
    this.#signer = signer;
    this.#versions = versions;
    if (versions) {
      this.#tokens = new VersionedCache(versions, 'identityTokens');
      this.#sessions = new VersionedCache(versions, 'userSessions');
    }
  }

  #findToken(tokenId: string): Promise<IdentityTokenRow | undefined> {
    const load = async () => {
      const value = await findIdentityTokenWithOwner(this.#db, tokenId);
      // A token with a use limit is counted in the database on every use; its row is never reused.
      return { value, expiresAt: value && value.accessTokenNumUsesLimit > 0 ? 0 : undefined };
    };
    return this.#tokens ? this.#tokens.get(this.#db, tokenId, load) : load().then((loaded) => loaded.value);
  }

  #findSession(sessionId: string): Promise<SessionRow | undefined> {
    const load = async () => ({ value: await findSessionWithUser(this.#db, sessionId) });
    return this.#sessions ? this.#sessions.get(this.#db, sessionId, load) : load().then((loaded) => loaded.value);
  }

  async issueIdentityToken(db: Executor, values: NewIdentityToken): Promise<IssuedToken & { tokenId: string }> {
    const row = await insertIdentityToken(db, values);
    const accessToken = await this.#signer.sign(
      { authTokenType: 'identityAccessToken', identityId: values.identityId, identityAccessTokenId: row.id },
      values.accessTokenMaxTtl,
    );
    return { accessToken, expiresIn: values.accessTokenTtl, accessTokenMaxTTL: values.accessTokenMaxTtl, tokenType: 'Bearer', tokenId: row.id };
  }

  /** A user access token: a JWT naming a new session row of the user in one organization, with where it was opened from. */
  async issueUserToken(db: Executor, userId: string, orgId: string, opened: { authMethod: 'email' | 'oidc'; origin: RequestOrigin }) {
    const expiresAt = new Date(Date.now() + USER_SESSION_TTL_SECONDS * 1000);
    const session = await insertUserSession(db, {
      userId,
      orgId,
      expiresAt,
      authMethod: opened.authMethod,
      ip: opened.origin.ip,
      userAgent: opened.origin.userAgent?.slice(0, 512) ?? null,
    });
    const accessToken = await this.#signer.sign({ authTokenType: 'accessToken', userId, tokenVersionId: session.id, organizationId: orgId }, USER_SESSION_TTL_SECONDS);
    return { accessToken, expiresIn: USER_SESSION_TTL_SECONDS, tokenType: 'Bearer' as const, sessionId: session.id };
  }

  /**
   * A login token: the user's password was checked but no organization chosen yet. It opens no session and
   * no route takes it except those that list the user's organizations and choose one.
   */
  async issueLoginToken(userId: string): Promise<string> {
    return this.#signer.sign({ authTokenType: 'accessToken', userId }, LOGIN_TOKEN_TTL_SECONDS);
  }

  /**
   * The user behind a login token or a live user session token; undefined for another valid caller
   * (an identity), whom the route refuses after validating its input, as every route does.
   */
  async userOfLoginToken(authorization: string | undefined, origin: RequestOrigin): Promise<string | undefined> {
    if (!authorization) throw new UnauthorizedError('Token missing');
    const token = BEARER.exec(authorization)?.[1];
    if (!token) throw new UnauthorizedError("The Authorization header must be 'Bearer <access token>'");
    const claims = await this.verifyToken(token);
    if (claims.authTokenType === 'accessToken' && claims.userId && !claims.tokenVersionId) return claims.userId;
    const actor = await this.authenticate(authorization, origin);
    return actor.kind === 'user' ? accountUserOf(actor) : undefined;
  }

  /** The claims of a well-signed, unexpired token; 403 TokenError otherwise. */
  async verifyToken(token: string): Promise<AccessTokenClaims> {
    const verdict = await this.#signer.verify(token);
    if (verdict.ok) return verdict.claims;
    throw new TokenError(verdict.reason === 'expired' ? 'Your token has expired. Please re-authenticate.' : 'Your token is invalid. Please re-authenticate.');
  }

  async authenticate(authorization: string | undefined, origin: RequestOrigin): Promise<Actor> {
    if (!authorization) throw new UnauthorizedError('Token missing');
    const token = BEARER.exec(authorization)?.[1];
    if (!token) throw new UnauthorizedError("The Authorization header must be 'Bearer <access token>'");
    const claims = await this.verifyToken(token);
    // what the request reads through the caches from here on is current as of now, whichever process wrote it
    this.#versions?.refreshRequest();
    if (claims.authTokenType === 'identityAccessToken' && claims.identityAccessTokenId) {
      return this.#identityActor(claims.identityAccessTokenId, origin);
    }
    if (claims.authTokenType === 'accessToken' && claims.tokenVersionId) return this.#userActor(claims.tokenVersionId, origin);
    if (claims.authTokenType === 'accessToken' && claims.userId) {
      throw new UnauthorizedError('This token is not scoped to an organization: choose one with POST /api/v3/auth/select-organization');
    }
    throw new UnauthorizedError('Unsupported access token type');
  }

  /**
   * 401 unless the token (or session) the actor authenticated with still stands, read afresh, past
   * every cache. Called after a read whose data must never reach a token revoked before it: what the
   * read saw was committed before this check, so a revocation committed earlier than that data is seen.
   */
  async assertStillValid(actor: Actor): Promise<void> {
    if (!actor.tokenId) return;
    if (actor.kind === 'identity') {
      const row = await findIdentityTokenWithOwner(this.#db, actor.tokenId);
      if (!row || row.isAccessTokenRevoked || isTokenExpired(row)) throw new UnauthorizedError('No valid identity access token found');
      return;
    }
    const session = await findSessionWithUser(this.#db, actor.tokenId);
    if (!session || session.isRevoked || session.expiresAt.getTime() <= Date.now()) throw new UnauthorizedError('No valid user session found');
  }

  async #userActor(sessionId: string, origin: RequestOrigin): Promise<Actor> {
    const session = await this.#findSession(sessionId);
    if (!session || session.isRevoked || session.expiresAt.getTime() <= Date.now()) {
      throw new UnauthorizedError('No valid user session found');
    }
    if (!session.orgRole) throw new ForbiddenError('You are no longer a member of this organization', 'ForbiddenError');
    await this.#noteUse(session.id, origin);
    return {
      kind: 'user',
      id: session.userId,
      name: session.email,
      orgId: session.orgId,
      orgRole: session.orgRole,
      tokenId: session.id,
      authMethod: session.authMethod,
      ...origin,
    };
  }

  /**
   * Records the session's last use, at most once a minute per session and process: in its own table, so
   * that the write moves no cache version (caches/README.md). Best effort: a failed write refuses nothing.
   */
  async #noteUse(sessionId: string, origin: RequestOrigin): Promise<void> {
    const now = Date.now();
    if (now - (this.#lastNoted.get(sessionId) ?? 0) < SESSION_USE_RESOLUTION_MS) return;
    if (this.#lastNoted.size >= 10_000) this.#lastNoted.clear();
    this.#lastNoted.set(sessionId, now);
    await recordSessionUse(this.#db, sessionId, new Date(now), origin.ip).catch(() => this.#lastNoted.delete(sessionId));
  }

  async #identityActor(tokenId: string, origin: RequestOrigin): Promise<Actor> {
    const row = await this.#findToken(tokenId);
    if (!row || row.isAccessTokenRevoked) throw new UnauthorizedError('No valid identity access token found');
    if (Object.hasOwn(TRUSTED_IPS_OF, row.authMethod)) {
      // Trusted IPs are read live from the login method's configuration, not copied into the token.
      const trustedIps = TRUSTED_IPS_OF[row.authMethod]!(row);
      if (!trustedIps) throw new UnauthorizedError('No valid identity access token found');
      if (!isIpTrusted(origin.ip, trustedIps)) {
        throw new ForbiddenError('You are not allowed to access this resource from the current IP address', 'ForbiddenError');
      }
    }
    if (!row.orgId || !row.orgRole) throw new UnauthorizedError('Identity does not belong to any organization');
    if (isTokenExpired(row)) {
      await deleteIdentityToken(this.#db, row.id);
      throw new UnauthorizedError('Access token has expired');
    }
    // Unlimited tokens skip the per-request write; limited ones count atomically.
    if (row.accessTokenNumUsesLimit > 0 && !(await countTokenUse(this.#db, row.id, row.accessTokenNumUsesLimit))) {
      await deleteIdentityToken(this.#db, row.id);
      throw new UnauthorizedError('Access token number of uses limit reached');
    }
    return {
      kind: 'identity',
      id: row.identityId,
      name: row.identityName,
      orgId: row.orgId,
      orgRole: row.orgRole,
      tokenId: row.id,
      authMethod: row.authMethod,
      ...(row.boundCluster ? { cluster: row.boundCluster } : {}),
      ...origin,
    };
  }
}
