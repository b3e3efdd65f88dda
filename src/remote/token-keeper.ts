import { z } from 'zod';
import { AppError } from '../errors.ts';
import type { ServerConnection } from './server-connection.ts';

/** A machine identity's universal-auth credentials (from a Kubernetes Secret, read again at each login). */
export interface UniversalAuthCredentials {
  clientId: string;
  clientSecret: string;
}

/** Kubernetes Auth: the identity and the pod's own (projected) service-account token, read again at each login. */
export interface KubernetesAuthCredentials {
  identityId: string;
  jwt: string;
}

export type LoginCredentials = UniversalAuthCredentials | KubernetesAuthCredentials;

/** The login call of a kind of credentials. */
function loginCall(credentials: LoginCredentials): { path: string; body: Record<string, string> } {
  if ('jwt' in credentials) return { path: '/api/v1/auth/kubernetes-auth/login', body: { identityId: credentials.identityId, jwt: credentials.jwt } };
  return { path: '/api/v1/auth/universal-auth/login', body: { clientId: credentials.clientId, clientSecret: credentials.clientSecret } };
}

const tokenAnswer = z.object({
  accessToken: z.string(),
  /** Seconds the token lives from now (0: no TTL). */
  expiresIn: z.number(),
  /** Seconds from its creation after which it can no longer be renewed (0: none). */
  accessTokenMaxTTL: z.number(),
});
type TokenAnswer = z.infer<typeof tokenAnswer>;

interface HeldToken {
  value: string;
  /** ms since epoch; Infinity without a TTL. */
  expiresAt: number;
  /** ms since epoch after which renewing does not help. */
  maxExpiresAt: number;
  ttlMs: number;
}

/** Renew when this share of the TTL is left. */
const RENEW_AT_REMAINING = 1 / 3;

/**
 * Holds the operator's access token: logs in (Kubernetes Auth with its service-account token, or universal auth), renews the
 * token before it expires (logs in again once renewing cannot extend it past
 * its max TTL), and logs in again when the server says the token is no longer
 * valid (revoked, deleted). Concurrent callers share one login.
 */
export class TokenKeeper {
  readonly #server: ServerConnection;
  readonly #credentials: () => Promise<LoginCredentials>;
  #token: HeldToken | null = null;
  #pending: Promise<HeldToken> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  /** Logins made (for the operator's metrics and tests). */
  logins = 0;

  constructor(server: ServerConnection, credentials: () => Promise<LoginCredentials>) {
    this.#server = server;
    this.#credentials = credentials;
  }

  /** A token valid now; logs in first when there is none. */
  async token(): Promise<string> {
    const held = this.#token;
    // a token about to expire is not handed out (the call would race its end)
    if (held && held.expiresAt > Date.now() + Math.min(1_000, held.ttlMs / 4)) return held.value;
    return (await this.#obtain(() => this.#login())).value;
  }

  /**
   * The server refused `rejected` (401): drop it and log in again, once for every caller that saw it. A token obtained
   * meanwhile is handed out only while it is not about to expire either (token()).
   */
  async renewAfterRejection(rejected: string): Promise<string> {
    if (this.#token?.value === rejected) this.#token = null;
    return this.token();
  }

  /** Runs `call` with a token; a 401 logs in again and runs it once more. */
  async withToken<T>(call: (token: string) => Promise<T>): Promise<T> {
    const token = await this.token();
    try {
      return await call(token);
    } catch (error) {
      if (!(error instanceof AppError && error.statusCode === 401)) throw error;
      return call(await this.renewAfterRejection(token));
    }
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
  }

  #obtain(get: () => Promise<HeldToken>): Promise<HeldToken> {
    this.#pending ??= get()
      .then((token) => {
        this.#token = token;
        this.#schedule(token);
        return token;
      })
      .finally(() => {
        this.#pending = null;
      });
    return this.#pending;
  }

  // A token's life is counted from when its request was sent: the server started it later than that, so the keeper
  // never believes it valid past its end however long the answer took (a loaded server, a slow network).
  async #login(): Promise<HeldToken> {
    const { path, body } = loginCall(await this.#credentials());
    const sentAt = Date.now();
    const answer = await this.#server.call('POST', path, { body, answer: tokenAnswer });
    this.logins++;
    return held(answer, sentAt);
  }

  async #renew(token: HeldToken): Promise<HeldToken> {
    try {
      const sentAt = Date.now();
      const answer = await this.#server.call('POST', '/api/v1/auth/token/renew', { body: { accessToken: token.value }, answer: tokenAnswer });
      return held(answer, sentAt, token.maxExpiresAt);
    } catch (error) {
      // revoked, or past its max TTL: a new login; the server away: the caller retries
      if (error instanceof AppError && error.statusCode >= 400 && error.statusCode < 500) return this.#login();
      throw error;
    }
  }

  /** Renews at two thirds of the TTL; logs in instead when the max TTL would cut the renewed token short. */
  #schedule(token: HeldToken): void {
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#stopped || !Number.isFinite(token.expiresAt)) return;
    const refreshAt = token.expiresAt - token.ttlMs * RENEW_AT_REMAINING;
    this.#timer = setTimeout(() => void this.#refresh(token), Math.max(0, refreshAt - Date.now()));
    this.#timer.unref();
  }

  async #refresh(token: HeldToken): Promise<void> {
    if (this.#stopped || this.#token !== token) return;
    const renewable = token.maxExpiresAt - Date.now() > token.ttlMs * (1 - RENEW_AT_REMAINING);
    try {
      await this.#obtain(() => (renewable ? this.#renew(token) : this.#login()));
    } catch {
      // the server is away: try again soon, while the token still lives; after that token() logs in
      if (!this.#stopped && this.#token === token) {
        this.#timer = setTimeout(() => void this.#refresh(token), 5_000);
        this.#timer.unref();
      }
    }
  }
}

function held(answer: TokenAnswer, sentAt: number, maxExpiresAt?: number): HeldToken {
  const ttlMs = answer.expiresIn * 1000;
  return {
    value: answer.accessToken,
    expiresAt: answer.expiresIn > 0 ? sentAt + ttlMs : Infinity,
    maxExpiresAt: maxExpiresAt ?? (answer.accessTokenMaxTTL > 0 ? sentAt + answer.accessTokenMaxTTL * 1000 : Infinity),
    ttlMs,
  };
}
