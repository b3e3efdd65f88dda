import { createPublicKey } from 'node:crypto';
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTPayload, jwtVerify } from 'jose';
import type { Executor } from '../db/database.ts';
import { requestJson } from '../workload-auth/outbound-request.ts';
import { RefusedToken, type WorkloadConfig, type WorkloadLoginMethod } from '../workload-auth/workload-login.ts';
import { findJwtAuthForLogin } from './jwt-auth-store.ts';

export const JWT_AUTH = 'jwt-auth';

type JwtLoginConfig = NonNullable<Awaited<ReturnType<typeof findJwtAuthForLogin>>> & WorkloadConfig;

/** Signatures a token may carry: asymmetric only (no `none`, no shared-secret HMAC). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** Leeway for the clocks of the issuer and this server. */
const CLOCK_TOLERANCE_SECONDS = 30;

export const JWKS_CACHE = {
  /** A fetched key set is used this long before it is fetched again. */
  maxAgeMs: 5 * 60_000,
  /** A token signed with a key the set lacks fetches it again, at most this often per URL. */
  cooldownMs: 30_000,
  maxEntries: 1_000,
};

interface CachedKeySet {
  keys: ReturnType<typeof createLocalJWKSet>;
  fetchedAt: number;
}

/** Key sets by URL and CA, fetched at most once at a time each; the oldest entry goes first past maxEntries. */
class JwksCache {
  readonly #entries = new Map<string, Promise<CachedKeySet>>();

  async get(url: string, caCert: string, { refresh }: { refresh: boolean }): Promise<CachedKeySet> {
    const key = `${url}\0${caCert}`;
    const cached = this.#entries.get(key);
    const entry = cached ? await cached.catch(() => undefined) : undefined;
    const age = entry ? Date.now() - entry.fetchedAt : Infinity;
    if (entry && age < JWKS_CACHE.maxAgeMs && !(refresh && age >= JWKS_CACHE.cooldownMs)) return entry;
    if (cached && !entry) this.#entries.delete(key);
    const pending = fetchKeySet(url, caCert);
    this.#entries.delete(key);
    this.#entries.set(key, pending);
    if (this.#entries.size > JWKS_CACHE.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    // a failed fetch is not kept: the next login tries again
    pending.catch(() => this.#entries.get(key) === pending && this.#entries.delete(key));
    return pending;
  }
}

async function fetchKeySet(url: string, caCert: string): Promise<CachedKeySet> {
  const { json } = await requestJson({ method: 'GET', url: new URL(url), caCert: caCert || undefined });
  try {
    return { keys: createLocalJWKSet(json as JSONWebKeySet), fetchedAt: Date.now() };
  } catch {
    throw new RefusedToken('the JWKS URL did not answer a JSON Web Key Set');
  }
}

/** Errors of the token itself, the same whichever key is tried. */
function isTokenError(error: unknown): boolean {
  return (
    error instanceof errors.JWTExpired || error instanceof errors.JWTClaimValidationFailed || error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid
  );
}

async function verifySignature(config: JwtLoginConfig, jwt: string, cache: JwksCache): Promise<JWTPayload> {
  const options = { algorithms: ALGORITHMS, clockTolerance: CLOCK_TOLERANCE_SECONDS };
  if (config.configurationType === 'jwks') {
    if (!config.jwksUrl) throw new RefusedToken('no JWKS URL configured');
    try {
      const { keys } = await cache.get(config.jwksUrl, config.jwksCaCert, { refresh: false });
      return (await jwtVerify(jwt, keys, options)).payload;
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      const { keys } = await cache.get(config.jwksUrl, config.jwksCaCert, { refresh: true });
      return (await jwtVerify(jwt, keys, options)).payload;
    }
  }
  for (const pem of config.publicKeys) {
    try {
      return (await jwtVerify(jwt, createPublicKey(pem), options)).payload;
    } catch (error) {
      // another key may verify it (a key of another type or algorithm fails here); an expired or malformed token never will
      if (isTokenError(error)) throw error;
    }
  }
  throw new RefusedToken('no configured public key verifies the signature');
}

function listOf(commaSeparated: string): string[] {
  return commaSeparated
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/**
 * The claim at a dotted path: `kubernetes.io.namespace` reaches `{"kubernetes.io": {"namespace": ...}}` too, so
 * each step tries the longest key first. Paths have at most MAX_CLAIM_PATH_SEGMENTS segments (the schema's rule).
 */
export function claimAt(value: unknown, parts: string[]): unknown {
  if (parts.length === 0) return value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  for (let take = parts.length; take > 0; take--) {
    const key = parts.slice(0, take).join('.');
    if (!Object.hasOwn(value, key)) continue;
    const found = claimAt((value as Record<string, unknown>)[key], parts.slice(take));
    if (found !== undefined) return found;
  }
  return undefined;
}

function claimValues(value: unknown): string[] {
  const scalar = (item: unknown) => (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean' ? [String(item)] : []);
  return Array.isArray(value) ? value.flatMap(scalar) : scalar(value);
}

/** The bound issuer, subject, audiences and claims; throws RefusedToken naming the first that fails (never its value). */
export function assertBoundClaims(config: Pick<JwtLoginConfig, 'boundIssuer' | 'boundSubject' | 'boundAudiences' | 'boundClaims'>, payload: JWTPayload): void {
  if (config.boundIssuer && payload.iss !== config.boundIssuer) throw new RefusedToken('the issuer is not the bound one');
  if (config.boundSubject && payload.sub !== config.boundSubject) throw new RefusedToken('the subject is not the bound one');
  const audiences = listOf(config.boundAudiences);
  const tokenAudiences = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
  if (audiences.length > 0 && !audiences.some((audience) => tokenAudiences.includes(audience))) throw new RefusedToken('no bound audience');
  for (const [claim, allowed] of Object.entries(config.boundClaims)) {
    const values = claimValues(claimAt(payload, claim.split('.')));
    if (!listOf(allowed).some((value) => values.includes(value))) throw new RefusedToken(`the claim ${JSON.stringify(claim)} has no allowed value`);
  }
}

/** JWT Auth: a token signed by a configured key (static, or from the JWKS URL) whose claims match the bounds. */
export function jwtLoginMethod(): WorkloadLoginMethod<JwtLoginConfig> {
  const cache = new JwksCache();
  return {
    method: JWT_AUTH,
    event: 'login-identity-jwt-auth',
    configIdKey: 'identityJwtAuthId',
    findConfig: (db: Executor, identityId: string) => findJwtAuthForLogin(db, identityId),
    async verify(config, jwt) {
      const payload = await verifySignature(config, jwt, cache);
      if (payload.exp === undefined) throw new RefusedToken('the token has no expiry');
      assertBoundClaims(config, payload);
      return { subject: typeof payload.sub === 'string' ? payload.sub.slice(0, 256) : null };
    },
  };
}
