import type { Actor, RequestOrigin } from '../actor/actor.ts';
import type { AuthService, IssuedToken } from '../auth/auth-service.ts';
import type { LoginThrottle } from '../auth/login-throttle.ts';
import type { CredentialDigest } from '../crypto/credential-digest.ts';
import type { Executor } from '../db/database.ts';
import { ForbiddenError, UnauthorizedError } from '../errors.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { isIpTrusted } from './trusted-ips.ts';
import { UNIVERSAL_AUTH } from './ua-service.ts';
import { claimClientSecretUse, findClientSecretByDigest, orgIdsOfClientId } from './ua-store.ts';

/** Compared against when no secret matched, so that every login runs the same comparison. */
const NO_CLIENT_ID = '00000000-0000-0000-0000-000000000000';

type SecretRow = NonNullable<Awaited<ReturnType<typeof findClientSecretByDigest>>>;

function isUsable(row: SecretRow, now: Date): boolean {
  const expired = row.clientSecretTtl > 0 && now.getTime() > row.createdAt.getTime() + row.clientSecretTtl * 1000;
  const exhausted = row.clientSecretNumUsesLimit > 0 && row.clientSecretNumUses >= row.clientSecretNumUsesLimit;
  return !row.isClientSecretRevoked && !expired && !exhausted;
}

/**
 * POST /api/v1/auth/universal-auth/login. Whatever is wrong (unknown client
 * id, wrong, revoked, expired or used-up secret) takes the same path to the
 * same "Invalid credentials": digest the secret, look it up, compare the
 * client id in constant time, then decide. Throttled per client id and
 * source address (LoginThrottle).
 */
export class UniversalAuthLogin {
  readonly #auth: AuthService;
  readonly #credentials: CredentialDigest;
  readonly #throttle: LoginThrottle;

  constructor(auth: AuthService, credentials: CredentialDigest, throttle: LoginThrottle) {
    this.#auth = auth;
    this.#credentials = credentials;
    this.#throttle = throttle;
  }

  async login(input: { clientId: string; clientSecret: string }, origin: RequestOrigin): Promise<IssuedToken> {
    const attempt = {
      method: 'universal-auth',
      credentialKind: 'clientId',
      credential: input.clientId,
      orgsOfCredential: (db: Executor) => orgIdsOfClientId(db, input.clientId),
    } as const;
    return this.#throttle.attempt(attempt, origin, (tx) => this.#login(tx, input, origin));
  }

  async #login(tx: WriteContext, input: { clientId: string; clientSecret: string }, origin: RequestOrigin): Promise<IssuedToken> {
    const trx = tx.db;
    const digest = this.#credentials.digest(input.clientSecret);
    const row = await findClientSecretByDigest(trx, digest);
    const clientIdMatches = this.#credentials.matches(row?.clientId ?? NO_CLIENT_ID, input.clientId);
    const now = new Date();
    if (!row || !clientIdMatches || !isUsable(row, now)) throw new UnauthorizedError('Invalid credentials');
    if (!isIpTrusted(origin.ip, row.clientSecretTrustedIps)) {
      throw new ForbiddenError('You are not allowed to access this resource from the current IP address', 'ForbiddenError');
    }
    if (!(await claimClientSecretUse(trx, row.id, now))) throw new UnauthorizedError('Invalid credentials');
    const { tokenId, ...token } = await this.#auth.issueIdentityToken(trx, {
      identityId: row.identityId,
      authMethod: UNIVERSAL_AUTH,
      name: null,
      accessTokenTtl: row.accessTokenTtl,
      accessTokenMaxTtl: row.accessTokenMaxTtl,
      accessTokenNumUsesLimit: row.accessTokenNumUsesLimit,
      identityUaClientSecretId: row.id,
    });
    const actor: Actor = {
      kind: 'identity',
      id: row.identityId,
      name: row.identityName,
      orgId: row.orgId,
      orgRole: row.orgRole,
      tokenId,
      authMethod: UNIVERSAL_AUTH,
      ...origin,
    };
    tx.audit({
      actor,
      orgId: row.orgId,
      type: 'login-identity-universal-auth',
      metadata: { clientSecretId: row.id, identityId: row.identityId, identityAccessTokenId: tokenId, identityUniversalAuthId: row.universalAuthId },
    });
    return token;
  }
}
