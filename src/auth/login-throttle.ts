import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { RequestOrigin } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { TooManyRequestsError, UnauthorizedError } from '../errors.ts';
import { listOrganizationIds } from '../orgs/org-lookup.ts';
import type { UnitOfWork, WriteContext } from '../services/unit-of-work.ts';
import { deleteIdleThrottles, deleteThrottle, findThrottles, lockThrottle, type ThrottleRow, updateThrottle } from './login-throttle-store.ts';

export interface LoginThrottleLimits {
  /** Failed logins per credential (client id, email) within the window before a lockout. */
  maxFailures: number;
  /** Failed logins per source address within the window before a lockout. */
  addressMaxFailures: number;
  windowMs: number;
  /** The first lockout; each next one of the same key lasts twice as long. */
  lockoutMs: number;
  maxLockoutMs: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginThrottleLimits = {
  maxFailures: 5,
  addressMaxFailures: 30,
  windowMs: 15 * 60_000,
  lockoutMs: 60_000,
  maxLockoutMs: 60 * 60_000,
};

/** A key with no failure for this long starts its lockouts over (and its row is deleted). */
const LOCKOUT_MEMORY_MS = 24 * 60 * 60_000;

export type LoginMethod = 'universal-auth' | 'user' | 'invite';

export interface LoginAttempt {
  method: LoginMethod;
  credentialKind: 'clientId' | 'email';
  /** The client id or email as sent (emails are compared lower-cased). */
  credential: string;
  /** Organizations a lockout of this credential is audited in; none when the credential is unknown. */
  orgsOfCredential: (db: Executor) => Promise<string[]>;
}

interface Subject {
  key: string;
  scope: 'credential' | 'address';
  limit: number;
  /** How a refusal names it: "for this client id", "from this address". */
  label: string;
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
 * acceptance): failures are counted per credential and per source address in
 * the database, so every replica sees the same counts. A key that reaches its
 * limit within the window is locked out, each time twice as long as the last
 * (up to the maximum); while it is, every attempt is answered 429 with
 * Retry-After before any credential is checked, the right one too. A lockout
 * is audited (`login-lockout`) and logged. A successful login clears its
 * credential's count.
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
   * none succeeds once a lockout has begun.
   */
  async attempt<T, P = undefined>(
    attempt: LoginAttempt,
    origin: RequestOrigin,
    login: (tx: WriteContext, prepared: P) => Promise<T>,
    prepare?: () => Promise<P>,
  ): Promise<T> {
    const subjects = this.#subjects(attempt, origin);
    const keys = subjects.map((subject) => subject.key);
    // refused early, without a transaction, while a lockout runs
    this.#assertNotLocked(subjects, await findThrottles(this.#db, keys));
    const prepared = (prepare ? await prepare() : undefined) as P;
    const outcome = await this.#unitOfWork.write(origin, async (tx) => {
      tx.authorizedBy('a login: the credential it presents is checked here');
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${subjects[0]!.key}, 0))`.execute(tx.db);
      const rows = await findThrottles(tx.db, keys);
      this.#assertNotLocked(subjects, rows);
      try {
        const value = await tx.savepoint(() => login(tx, prepared));
        if (rows.some((row) => row.key === subjects[0]!.key)) await deleteThrottle(tx.db, subjects[0]!.key);
        return { ok: true as const, value };
      } catch (error) {
        if (!(error instanceof UnauthorizedError)) throw error;
        await this.#recordFailure(tx, attempt, origin, subjects);
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

  #subjects(attempt: LoginAttempt, origin: RequestOrigin): Subject[] {
    const credential = attempt.credentialKind === 'email' ? attempt.credential.trim().toLowerCase() : attempt.credential.trim();
    const label = attempt.credentialKind === 'email' ? 'for this email' : 'for this client id';
    const subjects: Subject[] = [{ key: `${attempt.credentialKind}:${digest(credential)}`, scope: 'credential', limit: this.#limits.maxFailures, label }];
    if (origin.ip) {
      subjects.push({ key: `address:${digest(addressOf(origin.ip))}`, scope: 'address', limit: this.#limits.addressMaxFailures, label: 'from this address' });
    }
    return subjects;
  }

  #assertNotLocked(subjects: Subject[], rows: ThrottleRow[]): void {
    const now = Date.now();
    for (const subject of subjects) {
      const lockedUntil = rows.find((row) => row.key === subject.key)?.lockedUntil?.getTime() ?? 0;
      if (lockedUntil <= now) continue;
      const seconds = Math.max(1, Math.ceil((lockedUntil - now) / 1000));
      throw new TooManyRequestsError(`Too many failed logins ${subject.label}; try again in ${seconds} seconds`, seconds);
    }
  }

  /** Counts the failure for each key, credential first (one lock order everywhere), with the lockouts' audit rows. */
  async #recordFailure(tx: WriteContext, attempt: LoginAttempt, origin: RequestOrigin, subjects: Subject[]): Promise<void> {
    const now = new Date();
    for (const subject of subjects) {
      const { row, lockoutMs } = afterFailure(await lockThrottle(tx.db, subject.key, now), now, subject.limit, this.#limits);
      await updateThrottle(tx.db, row);
      if (lockoutMs !== undefined) await this.#recordLockout(tx, attempt, origin, subject, row, lockoutMs);
    }
  }

  async #recordLockout(tx: WriteContext, attempt: LoginAttempt, origin: RequestOrigin, subject: Subject, row: ThrottleRow, lockoutMs: number): Promise<void> {
    const metadata = {
      method: attempt.method,
      scope: subject.scope,
      ...(subject.scope === 'credential' ? { [attempt.credentialKind]: attempt.credential } : { address: origin.ip ? addressOf(origin.ip) : null }),
      failures: subject.limit,
      lockouts: row.lockouts,
      lockoutSeconds: lockoutMs / 1000,
      lockedUntil: row.lockedUntil!.toISOString(),
    };
    this.#logger?.warn({ ...metadata, ip: origin.ip }, 'login lockout');
    // A known credential's lockout belongs to its organizations; an address or an unknown credential concerns every one.
    const known = subject.scope === 'credential' ? await attempt.orgsOfCredential(tx.db) : [];
    const orgIds = known.length > 0 ? known : await listOrganizationIds(tx.db);
    // the unit's caller is the unauthenticated origin: the entries' actor type is unknownUser
    for (const orgId of orgIds) tx.audit({ orgId, type: 'login-lockout', metadata });
  }
}
