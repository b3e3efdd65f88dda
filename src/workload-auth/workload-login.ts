import type { Logger } from 'pino';
import type { Actor, RequestOrigin } from '../actor/actor.ts';
import type { AuthService, IssuedToken } from '../auth/auth-service.ts';
import type { LoginThrottle } from '../auth/login-throttle.ts';
import { UnauthorizedError } from '../errors.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import type { TokenSettings } from './token-settings.ts';
import { orgIdsOfIdentity } from './workload-auth-store.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

/** A login method's configuration row, with the identity it belongs to. */
export interface WorkloadConfig extends TokenSettings {
  id: string;
  identityId: string;
  identityName: string;
  orgId: string;
  orgRole: string;
  updatedAt: Date;
}

/** What a login method (Kubernetes Auth, JWT Auth) tells the shared login flow. */
export interface WorkloadLoginMethod<C extends WorkloadConfig> {
  method: 'kubernetes-auth' | 'jwt-auth';
  /** The audit event of a successful login, and the metadata key naming the configuration. */
  event: string;
  configIdKey: string;
  findConfig(db: ReadOnlyDb, identityId: string): Promise<C | undefined>;
  /**
   * Resolves with who the token says the caller is (a service account `namespace/name`, a JWT's `sub`) when it proves
   * the caller is allowed by this configuration, else throws; may call out (never in a transaction).
   */
  verify(config: C, jwt: string): Promise<{ subject: string | null }>;
}

/** Why a token was refused, in words the log may hold: never the token, a claim's value or what a remote answered. */
export class RefusedToken extends Error {}

const INVALID = 'Invalid credentials';

interface Verified<C> {
  config: C;
  subject: string | null;
}

/**
 * POST /api/v1/auth/{kubernetes,jwt}-auth/login. The token is checked first, outside any transaction (it may
 * call a cluster or a JWKS URL); then, in the throttle's unit of work, the configuration is read again and the
 * token issued only if it is the one the check used. Every refusal is the same 401 "Invalid credentials",
 * counted by the login throttle per identity id and source address, as universal auth's.
 */
export class WorkloadLogin<C extends WorkloadConfig> {
  readonly #db: ReadOnlyDb;
  readonly #auth: AuthService;
  readonly #throttle: LoginThrottle;
  readonly #method: WorkloadLoginMethod<C>;
  readonly #logger: Logger | undefined;

  constructor(db: ReadOnlyDb, auth: AuthService, throttle: LoginThrottle, method: WorkloadLoginMethod<C>, logger?: Logger) {
    this.#db = db;
    this.#auth = auth;
    this.#throttle = throttle;
    this.#method = method;
    this.#logger = logger;
  }

  async login(input: { identityId: string; jwt: string }, origin: RequestOrigin): Promise<IssuedToken> {
    const attempt = {
      method: this.#method.method,
      credentialKind: 'identityId',
      credential: input.identityId,
      orgsOfCredential: (db: Executor) => orgIdsOfIdentity(db, input.identityId),
    } as const;
    return this.#throttle.attempt(
      attempt,
      origin,
      (tx, verified: Verified<C> | undefined) => this.#issue(tx, input.identityId, verified, origin),
      () => this.#verify(input),
    );
  }

  /** The configuration the token was verified against, and whom it names; undefined when it was not. */
  async #verify(input: { identityId: string; jwt: string }): Promise<Verified<C> | undefined> {
    const config = await this.#method.findConfig(this.#db, input.identityId);
    if (!config) return undefined;
    try {
      const { subject } = await this.#method.verify(config, input.jwt);
      return { config, subject };
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'unknown';
      this.#logger?.info({ identityId: config.identityId, method: this.#method.method, reason }, 'workload login refused');
      return undefined;
    }
  }

  async #issue(tx: WriteContext, identityId: string, verified: Verified<C> | undefined, origin: RequestOrigin): Promise<IssuedToken> {
    if (!verified) throw new UnauthorizedError(INVALID);
    const config = await this.#method.findConfig(tx.db, identityId);
    // changed or removed while the token was being checked: the check no longer stands
    if (!config || config.id !== verified.config.id || config.updatedAt.getTime() !== verified.config.updatedAt.getTime()) throw new UnauthorizedError(INVALID);
    const { tokenId, ...token } = await this.#auth.issueIdentityToken(tx.db, {
      identityId: config.identityId,
      authMethod: this.#method.method,
      name: null,
      accessTokenTtl: config.accessTokenTtl,
      accessTokenMaxTtl: config.accessTokenMaxTtl,
      accessTokenNumUsesLimit: config.accessTokenNumUsesLimit,
    });
    const actor: Actor = {
      kind: 'identity',
      id: config.identityId,
      name: config.identityName,
      orgId: config.orgId,
      orgRole: config.orgRole,
      tokenId,
      authMethod: this.#method.method,
      ...origin,
    };
    tx.audit({
      actor,
      orgId: config.orgId,
      type: this.#method.event,
      metadata: { identityId: config.identityId, identityAccessTokenId: tokenId, [this.#method.configIdKey]: config.id, subject: verified.subject },
    });
    return token;
  }
}
