import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { RequestOrigin } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { TooManyRequestsError, UnauthorizedError } from '../errors.ts';
import { listOrganizationIds } from '../orgs/org-store.ts';
import type { UnitOfWork, WriteContext } from '../services/unit-of-work.ts';
import { deleteIdleThrottles, deleteThrottle, findThrottles, lockCredential, lockThrottle, type ThrottleRow, updateThrottle } from './login-throttle-store.ts';

export interface LoginThrottleLimits {
  /** Failed logins of one credential (client id, email) from one source address within the window before that pair is locked out. */
  maxFailures: number;
  /** Failed logins from one source address, whatever the credential, within the window before the address is locked out. */
  addressMaxFailures: number;
  /**
   * Failed logins of one credential from all addresses within the window before it is guarded: while it is, the
   * first failure from an address locks that address out of it. Never refuses an address that has not failed.
   */
  credentialMaxFailures: number;
  windowMs: number;
  /** The first lockout (or guard); each next one of the same key lasts twice as long. */
  lockoutMs: number;
  maxLockoutMs: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginThrottleLimits = {
  maxFailures: 5,
  addressMaxFailures: 30,
  credentialMaxFailures: 20,
  windowMs: 15 * 60_000,
  lockoutMs: 60_000,
  maxLockoutMs: 60 * 60_000,
};

/** A key with no failure for this long starts its lockouts over (and its row is deleted). */
const LOCKOUT_MEMORY_MS = 24 * 60 * 60_000;

export type LoginMethod = 'universal-auth' | 'kubernetes-auth' | 'jwt-auth' | 'user' | 'invite';

export interface LoginAttempt {
  method: LoginMethod;
  credentialKind: 'clientId' | 'email' | 'identityId';
  /** The client id or email as sent (emails are compared lower-cased). */
  credential: string;
  /** Organizations a lockout of this credential is audited in; none when the credential is unknown. */
  orgsOfCredential: (db: Executor) => Promise<string[]>;
}

/** The three counts one attempt touches, by their row keys (digests: no email or client id in clear). */
export interface ThrottleKeys {
  /** The credential from every address: its guard, which never refuses an attempt. */
  credential: string;
  /** The credential from this address: locked out after its failures. */
  pair: string;
  /** This address, whatever the credential: locked out after its failures. */
  address: string;
}

/** The keys of an attempt: emails compared lower-cased, addresses as `addressOf` counts them. */
export function throttleKeys(kind: LoginAttempt['credentialKind'], credential: string, ip: string | null): ThrottleKeys {
  const name = kind === 'email' ? credential.trim().toLowerCase() : credential.trim();
  const address = ip ? addressOf(ip) : 'unknown';
  return {
    credential: `${kind}:${digest(name)}`,
    pair: `pair:${digest(`${kind}:${name}\n${address}`)}`,
    address: `address:${digest(address)}`,
  };
}

/** How many failures lock a pair out: one while its credential is guarded, else the limit. */
export function pairLimit(credential: ThrottleRow | undefined, now: Date, limits: LoginThrottleLimits): number {
  return credential?.lockedUntil && credential.lockedUntil > now ? 1 : limits.maxFailures;
}

/** Throttle state after one more failure; `lockoutMs` is set when this failure starts a lockout. */
export function afterFailure(row: ThrottleRow, now: Date, limit: number, limits: LoginThrottleLimits): { row: ThrottleRow; lockoutMs?: number } {
  const next = { ...row, lastFailureAt: now };
  if (row.lockedUntil && row.lockedUntil > now) return { row: next };
  if (now.getTime() - row.lastFailureAt.getTime() > LOCKOUT_MEMORY_MS) next.lockouts = 0;
  if (now.getTime() - row.windowStartedAt.getTime() >= limits.windowMs) {
    next.failures = 0;
    next.windowStartedAt = now;
  }
  next.failures += 1;
  if (next.failures < limit) return { row: next };
  next.lockouts += 1;
  const lockoutMs = Math.min(limits.lockoutMs * 2 ** (next.lockouts - 1), limits.maxLockoutMs);
  return { row: { ...next, failures: 0, windowStartedAt: now, lockedUntil: new Date(now.getTime() + lockoutMs) }, lockoutMs };
}

/**
 * The address a throttle counts: IPv4 as it is (IPv4-mapped IPv6 too), IPv6
 * by its /64 prefix, the block one host usually holds.
 */
export function addressOf(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIPv4(ip) || !isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = ip.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/**
 * Brute-force protection for the three logins (universal auth, user, invite
 * acceptance) that a stranger cannot turn on the credential's owner (README,
 * Login throttling). Failures are counted in the database, so every replica
 * sees the same counts, under three keys:
 * - the credential from one address (the pair): locked out after
 *   `maxFailures`, each lockout twice as long as the last;
 * - the address, whatever the credential: locked out after `addressMaxFailures`;
 * - the credential from every address: after `credentialMaxFailures` it is
 *   guarded for a while, during which one failure locks a pair out.
 * A locked pair or address is answered 429 with Retry-After before any
 * credential is checked, the right one too, so a refusal tells nothing. The
 * credential itself is never locked: an address that has not been failing on
 * it is always checked, so its owner logs in while someone else guesses.
 * Lockouts and guards are audited and logged. A success clears its pair.
 */
export class LoginThrottle {
  readonly #db: Kysely<DB>;
  readonly #unitOfWork: UnitOfWork;
  readonly #limits: LoginThrottleLimits;
  readonly #logger: Logger | undefined;

  constructor(db: Kysely<DB>, unitOfWork: UnitOfWork, limits: LoginThrottleLimits, logger?: Logger) {
    this.#db = db;
    this.#unitOfWork = unitOfWork;
    this.#limits = limits;
    this.#logger = logger;
  }

  /**
   * Decides one login attempt. `prepare` (optional) does the expensive part
   * outside any transaction (a password hash); `login` runs in a unit of work
   * in which the attempts on one credential are taken one at a time, after the
   * lockout check: it throws UnauthorizedError for a wrong credential (what it
   * wrote and collected is rolled back and the failure counted) or returns what
   * the caller gets. So no attempt is decided on a count another one is changing, and
   * none succeeds once its pair or address is locked out.
   */
  async attempt<T, P = undefined>(
    attempt: LoginAttempt,
    origin: RequestOrigin,
    login: (tx: WriteContext, prepared: P) => Promise<T>,
    prepare?: () => Promise<P>,
  ): Promise<T> {
    const keys = throttleKeys(attempt.credentialKind, attempt.credential, origin.ip);
    const label = { email: 'for this email', clientId: 'for this client id', identityId: 'for this identity' }[attempt.credentialKind];
    // refused early, without a transaction, while a lockout runs
    this.#assertNotLocked(keys, label, await findThrottles(this.#db, [keys.pair, keys.address]));
    const prepared = (prepare ? await prepare() : undefined) as P;
    const outcome = await this.#unitOfWork.write(origin, async (tx) => {
      tx.authorizedBy('a login: the credential it presents is checked here');
      await lockCredential(tx.db, keys.credential);
      const rows = await findThrottles(tx.db, [keys.pair, keys.address]);
      this.#assertNotLocked(keys, label, rows);
      try {
        const value = await tx.savepoint(() => login(tx, prepared));
        if (rows.some((row) => row.key === keys.pair)) await deleteThrottle(tx.db, keys.pair);
        return { ok: true as const, value };
      } catch (error) {
        if (!(error instanceof UnauthorizedError)) throw error;
        await this.#recordFailure(tx, attempt, origin, keys);
        return { ok: false as const, failure: error };
      }
    });
    if (!outcome.ok) throw outcome.failure;
    return outcome.value;
  }

  /** Deletes rows idle for a day. */
  async pruneIdle(now = new Date()): Promise<number> {
    return deleteIdleThrottles(this.#db, new Date(now.getTime() - LOCKOUT_MEMORY_MS), now);
  }

  /** Prunes idle rows now and every hour (`coffer serve`); returns a function that stops it. */
  schedulePruning(logger: Logger, intervalMs = 60 * 60_000): () => void {
    const run = () => this.pruneIdle().catch((error: unknown) => logger.warn({ err: error }, 'login throttle pruning failed'));
    void run();
    const timer = setInterval(run, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  #assertNotLocked(keys: ThrottleKeys, label: string, rows: ThrottleRow[]): void {
    const now = Date.now();
    const refusals = [
      { key: keys.pair, reason: `${label} from this address` },
      { key: keys.address, reason: 'from this address' },
    ];
    for (const { key, reason } of refusals) {
      const lockedUntil = rows.find((row) => row.key === key)?.lockedUntil?.getTime() ?? 0;
      if (lockedUntil <= now) continue;
      const seconds = Math.max(1, Math.ceil((lockedUntil - now) / 1000));
      throw new TooManyRequestsError(`Too many failed logins ${reason}; try again in ${seconds} seconds`, seconds);
    }
  }

  /**
   * Counts the failure under each key, in one lock order everywhere (credential, pair, address): the
   * credential first, since whether it is guarded sets the pair's limit. Collects the audit rows.
   */
  async #recordFailure(tx: WriteContext, attempt: LoginAttempt, origin: RequestOrigin, keys: ThrottleKeys): Promise<void> {
    const now = new Date();
    const address = origin.ip ? addressOf(origin.ip) : null;
    const credential = afterFailure(await lockThrottle(tx.db, keys.credential, now), now, this.#limits.credentialMaxFailures, this.#limits);
    await updateThrottle(tx.db, credential.row);
    if (credential.lockoutMs !== undefined) {
      await this.#audit(tx, attempt, origin, 'login-guard', { scope: 'credential', failures: this.#limits.credentialMaxFailures }, credential);
    }
    const limit = pairLimit(credential.row, now, this.#limits);
    const pair = afterFailure(await lockThrottle(tx.db, keys.pair, now), now, limit, this.#limits);
    await updateThrottle(tx.db, pair.row);
    if (pair.lockoutMs !== undefined) await this.#audit(tx, attempt, origin, 'login-lockout', { scope: 'credential-address', address, failures: limit }, pair);
    const addressLimit = this.#limits.addressMaxFailures;
    const addressCount = afterFailure(await lockThrottle(tx.db, keys.address, now), now, addressLimit, this.#limits);
    await updateThrottle(tx.db, addressCount.row);
    if (addressCount.lockoutMs !== undefined) {
      await this.#audit(tx, attempt, origin, 'login-lockout', { scope: 'address', address, failures: addressLimit }, addressCount);
    }
  }

  /**
   * A lockout or guard that began: logged, and audited in the credential's organizations (or in every
   * one, for an address or an unknown credential). The entry says when it ends; nothing is written then.
   */
  async #audit(
    tx: WriteContext,
    attempt: LoginAttempt,
    origin: RequestOrigin,
    type: 'login-lockout' | 'login-guard',
    what: { scope: 'credential' | 'credential-address' | 'address'; address?: string | null; failures: number },
    { row, lockoutMs }: { row: ThrottleRow; lockoutMs?: number },
  ): Promise<void> {
    const metadata = {
      method: attempt.method,
      ...what,
      ...(what.scope === 'address' ? {} : { [attempt.credentialKind]: attempt.credential }),
      lockouts: row.lockouts,
      lockoutSeconds: lockoutMs! / 1000,
      lockedUntil: row.lockedUntil!.toISOString(),
    };
    this.#logger?.warn({ ...metadata, ip: origin.ip }, type === 'login-guard' ? 'login guard' : 'login lockout');
    const known = what.scope === 'address' ? [] : await attempt.orgsOfCredential(tx.db);
    const orgIds = known.length > 0 ? known : await listOrganizationIds(tx.db);
    // the unit's caller is the unauthenticated origin: the entries' actor type is unknownUser
    for (const orgId of orgIds) tx.audit({ orgId, type, metadata });
  }
}
