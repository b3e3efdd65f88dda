import type { Actor, RequestOrigin } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { TokenSigner } from '../crypto/tokens.ts';
import { TokenError, UnauthorizedError } from '../errors.ts';
import { countTokenUse, deleteIdentityToken, findIdentityTokenWithOwner, insertIdentityToken, type NewIdentityToken } from './token-store.ts';

export interface IssuedToken {
  accessToken: string;
  expiresIn: number;
  accessTokenMaxTTL: number;
  tokenType: 'Bearer';
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Turns a bearer token into an actor, checking the token row on every request. */
export class AuthService {
  readonly #db: Executor;
  readonly #signer: TokenSigner;

  constructor(db: Executor, signer: TokenSigner) {
    this.#db = db;
    this.#signer = signer;
  }

  async issueIdentityToken(db: Executor, values: NewIdentityToken): Promise<IssuedToken> {
    const row = await insertIdentityToken(db, values);
    const accessToken = await this.#signer.sign(
      { authTokenType: 'identityAccessToken', identityId: values.identityId, identityAccessTokenId: row.id },
      values.accessTokenMaxTtl,
    );
    return { accessToken, expiresIn: values.accessTokenTtl, accessTokenMaxTTL: values.accessTokenMaxTtl, tokenType: 'Bearer' };
  }

  async authenticate(authorization: string | undefined, origin: RequestOrigin): Promise<Actor> {
    if (!authorization) throw new UnauthorizedError('Token missing');
    const token = BEARER.exec(authorization)?.[1];
    if (!token) throw new UnauthorizedError("The Authorization header must be 'Bearer <access token>'");
    const verdict = await this.#signer.verify(token);
    if (!verdict.ok) {
      throw new TokenError(
        verdict.reason === 'expired' ? 'Your token has expired. Please re-authenticate.' : 'Your token is invalid. Please re-authenticate.',
      );
    }
    const { claims } = verdict;
    if (claims.authTokenType !== 'identityAccessToken' || !claims.identityAccessTokenId) {
      throw new UnauthorizedError('Unsupported access token type');
    }
    return this.#identityActor(claims.identityAccessTokenId, origin);
  }

  async #identityActor(tokenId: string, origin: RequestOrigin): Promise<Actor> {
    const row = await findIdentityTokenWithOwner(this.#db, tokenId);
    if (!row || row.isAccessTokenRevoked) throw new UnauthorizedError('No valid identity access token found');
    if (!row.orgId || !row.orgRole) throw new UnauthorizedError('Identity does not belong to any organization');
    const now = Date.now();
    const renewedAt = (row.accessTokenLastRenewedAt ?? row.createdAt).getTime();
    const expired =
      (row.accessTokenTtl > 0 && now > renewedAt + row.accessTokenTtl * 1000) ||
      (row.accessTokenMaxTtl > 0 && now > row.createdAt.getTime() + row.accessTokenMaxTtl * 1000);
    if (expired) {
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
      ...origin,
    };
  }
}
