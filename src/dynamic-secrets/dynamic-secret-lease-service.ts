import type { Logger } from 'pino';
import type { Actor } from '../actor/actor.ts';
import type { DynamicSecret, DynamicSecretLease, Project } from '../db/schema.ts';
import type { ReadOnlyDb } from '../db/database.ts';
import { BadRequestError, NotFoundError, TooManyRequestsError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { type DynamicSecretPlace, openInputs, requireDynamicSecret, type ResolvedPlace, resolvePlace, ttlMs } from './dynamic-secret-lookup.ts';
import { type LeaseResponse, toDynamicSecretResponse, toLeaseResponse } from './dynamic-secret-schema.ts';
import { countLeases, findDynamicSecretById, findLease, insertLease, listLeases, updateLeaseExpiry } from './dynamic-secret-store.ts';
import { fillTemplate, formatExpiration, generatePassword, generateUsername } from './dynamic-secret-template.ts';
import { EXPIRY_BATCH, revokeExpiredLeases, scheduleLeaseExpiry } from './lease-expiry.ts';
import { revokeLease, revokeOnTarget } from './lease-revoker.ts';
import { runOnTarget } from './dynamic-secret-target.ts';
import { PostgresServerError } from '../app-connections/postgres-server.ts';

/** How many leases may be held at once: in one project, and by one user or identity in it. */
export interface LeaseLimits {
  perProject: number;
  perCaller: number;
}

export const DEFAULT_LEASE_LIMITS: LeaseLimits = { perProject: 500, perCaller: 50 };

/** Infisical's words: its operator (v0.11.5) leases anew when a renewal's error holds "Dynamic secret lease with ID". */
function leaseNotFound(leaseId: string): NotFoundError {
  return new NotFoundError(`Dynamic secret lease with ID '${leaseId}' not found`, 'DynamicSecretLeaseNotFound');
}

function providerFailed(error: PostgresServerError): BadRequestError {
  return new BadRequestError(`Failed to create the lease: ${error.message}`, 'DynamicSecretProviderError');
}

function overMaxTtl(): BadRequestError {
  return new BadRequestError('TTL cannot be larger than max TTL', 'DynamicSecretTtlTooLarge');
}

/** Holds "TTL cannot be larger than max ttl", the words Infisical's operator (v0.11.5) leases anew on; its match is case-sensitive. */
function renewalPastMaxTtl(): BadRequestError {
  return new BadRequestError('TTL cannot be larger than max ttl: a lease ends by its start plus the max TTL, renewals included', 'DynamicSecretTtlTooLarge');
}

/**
 * Leases of dynamic secrets: each one a PostgreSQL role created from the dynamic secret's template with a generated
 * name and password, valid until its expiry. `clock` is the time leases are measured by (injected in tests).
 */
export class DynamicSecretLeaseService {
  readonly #deps: ServiceDeps;
  readonly #limits: LeaseLimits;
  readonly #clock: () => number;

  constructor(deps: ServiceDeps, options: { limits?: LeaseLimits; clock?: () => number } = {}) {
    this.#deps = deps;
    this.#limits = options.limits ?? DEFAULT_LEASE_LIMITS;
    this.#clock = options.clock ?? Date.now;
  }

  /** Creates the role on the target, then records the lease; a lease the caps refuse after the fact is revoked again. */
  async create(actor: Actor, place: DynamicSecretPlace, input: { dynamicSecretName: string; ttl?: string }) {
    const at = await this.#authorize(actor, place, 'create');
    const config = await requireDynamicSecret(this.#deps.db, at.folder, input.dynamicSecretName);
    const ttl = ttlMs(input.ttl ?? config.defaultTtl);
    if (config.maxTtl && ttl > ttlMs(config.maxTtl)) throw overMaxTtl();
    await this.#checkCaps(this.#deps.db, at.project, actor);
    const now = new Date(this.#clock());
    const expireAt = new Date(now.getTime() + ttl);
    const credentials = { username: generateUsername(), password: generatePassword() };
    const inputs = openInputs(this.#deps, at.project, config);
    try {
      await runOnTarget(inputs, fillTemplate(inputs.creationStatement, { ...credentials, expiration: formatExpiration(expireAt) }));
    } catch (error) {
      throw error instanceof PostgresServerError ? providerFailed(error) : error;
    }
    const lease = await this.#record(actor, at, config, { externalEntityId: credentials.username, expireAt, createdAt: now }).catch(async (error: unknown) => {
      await revokeOnTarget(this.#deps, at.project, config, { externalEntityId: credentials.username, expireAt } as DynamicSecretLease).catch(() => undefined);
      throw error;
    });
    return {
      lease: toLeaseResponse(lease),
      dynamicSecret: toDynamicSecretResponse(config),
      data: { DB_USERNAME: credentials.username, DB_PASSWORD: credentials.password },
    };
  }

  /** Moves the expiry on by `ttl` (the default TTL when absent), never past the lease's start plus the max TTL. */
  async renew(actor: Actor, place: DynamicSecretPlace, leaseId: string, input: { ttl?: string }): Promise<LeaseResponse> {
    const at = await this.#authorize(actor, place, 'edit');
    const { lease, config } = await this.#requireLease(at, leaseId);
    const expireAt = new Date(new Date(lease.expireAt).getTime() + ttlMs(input.ttl ?? config.defaultTtl));
    if (config.maxTtl && expireAt.getTime() > lease.createdAt.getTime() + ttlMs(config.maxTtl)) throw renewalPastMaxTtl();
    const inputs = openInputs(this.#deps, at.project, config);
    if (inputs.renewStatement) {
      try {
        await runOnTarget(inputs, fillTemplate(inputs.renewStatement, { username: lease.externalEntityId, expiration: formatExpiration(expireAt) }));
      } catch (error) {
        if (error instanceof PostgresServerError) throw new BadRequestError(`Failed to renew the lease: ${error.message}`, 'DynamicSecretProviderError');
        throw error;
      }
    }
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      await tx.authorize({ project: at.project, action: 'edit', subject: 'dynamic-secret-leases' });
      const renewed = await updateLeaseExpiry(tx.db, lease.id, expireAt);
      tx.audit({
        project: at.project,
        type: 'renew-dynamic-secret-lease',
        metadata: { leaseId: lease.id, dynamicSecretName: config.name, expireAt: expireAt.toISOString() },
      });
      return toLeaseResponse(renewed);
    });
  }

  /** Drops the lease's role now; `isForced` forgets the lease even when the database refuses. */
  async revoke(actor: Actor, place: DynamicSecretPlace, leaseId: string, isForced: boolean): Promise<LeaseResponse> {
    const at = await this.#authorize(actor, place, 'delete');
    const { lease, config } = await this.#requireLease(at, leaseId);
    await revokeLease(this.#deps, { actor, reason: 'revoked' }, at.project, config, lease, { isForced, retryAt: null });
    return toLeaseResponse(lease);
  }

  async get(actor: Actor, place: DynamicSecretPlace, leaseId: string) {
    const at = await this.#authorize(actor, place, 'read');
    const { lease, config } = await this.#requireLease(at, leaseId);
    return { ...toLeaseResponse(lease), dynamicSecret: toDynamicSecretResponse(config) };
  }

  async list(actor: Actor, place: DynamicSecretPlace, dynamicSecretName: string): Promise<LeaseResponse[]> {
    const at = await this.#authorize(actor, place, 'read');
    const config = await requireDynamicSecret(this.#deps.db, at.folder, dynamicSecretName);
    return (await listLeases(this.#deps.db, config.id)).map(toLeaseResponse);
  }

  /** Revokes leases past their expiry, up to one batch (the expiry job; tests call it after moving their clock). */
  revokeExpired(limit = EXPIRY_BATCH): Promise<number> {
    return revokeExpiredLeases(this.#deps, new Date(this.#clock()), limit);
  }

  /** Runs revokeExpired every minute until the answer is called. */
  scheduleExpiry(logger: Logger): () => void {
    return scheduleLeaseExpiry(() => this.revokeExpired(), logger);
  }

  async #authorize(actor: Actor, place: DynamicSecretPlace, action: 'read' | 'create' | 'edit' | 'delete'): Promise<ResolvedPlace> {
    const at = await resolvePlace(this.#deps, this.#deps.db, actor, place);
    await this.#deps.permissions.assertProject({ actor, project: at.project, action, subject: 'dynamic-secret-leases' });
    return at;
  }

  /** The lease, when it belongs to a dynamic secret in the request's folder; 404 otherwise (as if it did not exist). */
  async #requireLease(at: ResolvedPlace, leaseId: string): Promise<{ lease: DynamicSecretLease; config: DynamicSecret }> {
    const lease = await findLease(this.#deps.db, leaseId);
    const config = lease && (await findDynamicSecretById(this.#deps.db, lease.dynamicSecretId));
    if (!lease || !config || config.folderId !== at.folder.id) throw leaseNotFound(leaseId);
    return { lease, config };
  }

  async #checkCaps(db: ReadOnlyDb, project: Project, actor: Actor): Promise<void> {
    const held = await countLeases(db, project.id, actor.id);
    if (held.inProject >= this.#limits.perProject) throw new TooManyRequestsError(`The project holds ${this.#limits.perProject} leases, the most it may`, 60);
    if (held.byCaller >= this.#limits.perCaller) throw new TooManyRequestsError(`You hold ${this.#limits.perCaller} leases in this project, the most you may`, 60);
  }

  /** The lease row and its audit entry, with the caps counted again under the project's lock. */
  #record(actor: Actor, at: ResolvedPlace, config: DynamicSecret, lease: { externalEntityId: string; expireAt: Date; createdAt: Date }) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const project = await tx.project({ id: at.project.id }, { lock: true });
      await tx.authorize({ project, action: 'create', subject: 'dynamic-secret-leases' });
      await this.#checkCaps(tx.db, project, actor);
      const created = await insertLease(tx.db, { ...lease, dynamicSecretId: config.id, projectId: project.id, createdBy: actor.id });
      tx.audit({
        project,
        type: 'create-dynamic-secret-lease',
        metadata: { leaseId: created.id, dynamicSecretId: config.id, dynamicSecretName: config.name, expireAt: lease.expireAt.toISOString() },
      });
      return created;
    });
  }
}
