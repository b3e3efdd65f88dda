import { errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';

export type AuthTokenType = 'identityAccessToken' | 'accessToken';

export interface AccessTokenClaims extends JWTPayload {
  authTokenType: AuthTokenType;
  identityId?: string;
  identityAccessTokenId?: string;
  userId?: string;
  tokenVersionId?: string;
  organizationId?: string;
}

export type TokenVerdict = { ok: true; claims: AccessTokenClaims } | { ok: false; reason: 'expired' | 'malformed' | 'invalid' };

const VERIFIED_CACHE_ENTRIES = 10_000;

/** Signs and verifies HS256 access tokens with COFFER_AUTH_SECRET. */
export class TokenSigner {
  readonly #key: Uint8Array;
  /** Tokens whose signature already verified, with their claims (a signature never stops verifying); oldest first. */
  readonly #verified = new Map<string, AccessTokenClaims>();
  /** Milliseconds since the epoch: the system's, or a test's clock (expiry without waiting). */
  readonly #now: () => number;

  constructor(secret: string, now: () => number = Date.now) {
    this.#key = new TextEncoder().encode(secret);
    this.#now = now;
  }

  async sign(claims: AccessTokenClaims, expiresInSeconds: number): Promise<string> {
    const nowSeconds = Math.floor(this.#now() / 1000);
    const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt(nowSeconds);
    if (expiresInSeconds > 0) jwt.setExpirationTime(nowSeconds + expiresInSeconds);
    return jwt.sign(this.#key);
  }

  async verify(token: string): Promise<TokenVerdict> {
    const known = this.#verified.get(token);
    // An expired one goes through jwtVerify again, which says so.
    if (known && (known.exp === undefined || known.exp > this.#now() / 1000)) return { ok: true, claims: known };
    try {
      const { payload } = await jwtVerify<AccessTokenClaims>(token, this.#key, { algorithms: ['HS256'], currentDate: new Date(this.#now()) });
      if (payload.authTokenType !== 'identityAccessToken' && payload.authTokenType !== 'accessToken') {
        return { ok: false, reason: 'invalid' };
      }
      if (this.#verified.size >= VERIFIED_CACHE_ENTRIES) this.#verified.delete(this.#verified.keys().next().value!);
      this.#verified.set(token, payload);
      return { ok: true, claims: payload };
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { ok: false, reason: 'expired' };
      if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid || error instanceof errors.JOSEError) {
        return { ok: false, reason: error instanceof errors.JWSSignatureVerificationFailed ? 'invalid' : 'malformed' };
      }
      return { ok: false, reason: 'malformed' };
    }
  }
}
