import { isDeepStrictEqual } from 'node:util';
import type { Actor } from '../actor/actor.ts';
import type { Executor } from '../db/database.ts';
import { isUniqueViolation, isUuid } from '../db/errors.ts';
import type { Environment, Project } from '../db/schema.ts';
import { requireEnvironment } from '../environments/environment-lookup.ts';
import { NotFoundError } from '../errors.ts';
import { requireFolder } from '../folders/folder-lookup.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { Action } from '../permissions/permission-service.ts';
import { requireLockedProject, requireProject } from '../projects/project-lookup.ts';
import type { ServiceDeps } from '../services/deps.ts';
import { ensureKubernetesAuthIn } from './integration-auth-service.ts';
import { findIntegrationAuthById } from './integration-auth-store.ts';
import type { CreateIntegrationInput, ManagedIntegrationInput, SyncResult, UpdateIntegrationInput } from './integration-inputs.ts';
import { type IntegrationResponse, KUBERNETES_INTEGRATION, toIntegrationResponse } from './integration-schema.ts';
import { auditScope, describeIntegration, emptyTarget, type IntegrationSource, integrationChanges, withoutEmpty } from './integration-scope.ts';
import {
  deleteIntegration,
  findIntegrationById,
  findIntegrationByManagedBy,
  type IntegrationRow,
  insertIntegration,
  listIntegrationsOfProject,
  setIntegrationSyncResult,
  updateIntegration,
} from './integration-store.ts';

export type { CreateIntegrationInput, ManagedIntegrationInput, SyncResult, UpdateIntegrationInput };

/** A mutation's transaction, and how it records change rows (the transaction's last writes). */
interface WriteContext {
  trx: Executor;
  record(sources: IntegrationSource[]): Promise<void>;
}

interface Source {
  environment: Environment;
  path: string;
}

const SYNC_MESSAGE_MAX = 1024;

/** Integrations: where a project's secrets at one environment and path are synced to. */
export class IntegrationService {
  readonly #deps: ServiceDeps;
  /** The in-process operator's cluster: the one a managed call names when it names none. */
  readonly #clusterName: string;

  constructor(deps: ServiceDeps, clusterName: string) {
    this.#deps = deps;
    this.#clusterName = clusterName;
  }

  async create(actor: Actor, input: CreateIntegrationInput): Promise<IntegrationResponse> {
    const { integrationAuthId, sourceEnvironment, secretPath, isActive, metadata, ...target } = input;
    return this.#write(async (tx) => {
      const { trx } = tx;
      const auth = await findIntegrationAuthById(trx, integrationAuthId);
      if (!auth) throw new NotFoundError(`Integration auth with ID '${integrationAuthId}' not found`);
      const project = await this.#authorize(trx, actor, auth.projectId, 'create');
      const source = await this.#source(trx, actor, project, sourceEnvironment, secretPath);
      const row = await insertIntegration(trx, source.environment, {
        ...emptyTarget(),
        ...target,
        integrationAuthId: auth.id,
        integration: auth.integration,
        secretPath: source.path,
        isActive,
        metadata,
      });
      return this.#created(tx, actor, project, row);
    });
  }

  async getById(actor: Actor, integrationId: string): Promise<IntegrationResponse> {
    const { db } = this.#deps;
    const row = await this.#require(db, integrationId);
    await this.#authorize(db, actor, row.projectId, 'read');
    return toIntegrationResponse(row);
  }

  async listOfProject(actor: Actor, projectId: string): Promise<IntegrationResponse[]> {
    const { db } = this.#deps;
    const project = await this.#authorize(db, actor, projectId, 'read');
    return (await listIntegrationsOfProject(db, project.id)).map(toIntegrationResponse);
  }

  /** PATCH (op 1): activates or pauses, and moves the source; omitted fields keep their stored values. */
  async update(actor: Actor, integrationId: string, input: UpdateIntegrationInput): Promise<IntegrationResponse> {
    return this.#write(async (tx) => {
      const { trx } = tx;
      const { project, row } = await this.#locked(trx, actor, integrationId, 'edit');
      const source = await this.#source(trx, actor, project, input.environment ?? row.envSlug, input.secretPath ?? row.secretPath);
      await updateIntegration(trx, row.id, {
        isActive: input.isActive,
        app: input.app,
        appId: input.appId,
        targetEnvironment: input.targetEnvironment,
        owner: input.owner,
        envId: source.environment.id,
        secretPath: source.path,
        metadata: input.metadata === undefined ? undefined : { ...(row.metadata as object | null), ...input.metadata },
      });
      return this.#updated(tx, actor, project, row);
    });
  }

  async delete(actor: Actor, integrationId: string, options: { shouldDeleteIntegrationSecrets: boolean }): Promise<IntegrationResponse> {
    return this.#write(async (tx) => {
      const { trx } = tx;
      const { project, row } = await this.#locked(trx, actor, integrationId, 'delete');
      return this.#deleted(tx, actor, project, row, { shouldDeleteIntegrationSecrets: options.shouldDeleteIntegrationSecrets });
    });
  }

  /** Manual sync: records a change for the integration's source, so the operator syncs it again. */
  async sync(actor: Actor, integrationId: string): Promise<IntegrationResponse> {
    return this.#write(async (tx) => {
      const { trx } = tx;
      const { project, row } = await this.#locked(trx, actor, integrationId, 'edit');
      await this.#deps.audit.record(trx, actor, auditScope(project), { type: 'manual-sync-integration', metadata: describeIntegration(row) });
      await tx.record([row]);
      return toIntegrationResponse(row);
    });
  }

  /**
   * For the in-process operator: creates or updates the "kubernetes"
   * integration owned by `managedBy`. A call that changes nothing writes
   * nothing (no audit entry, no change row), so reconciling never wakes the
   * operator again.
   */
  async upsertManaged(actor: Actor, input: ManagedIntegrationInput): Promise<IntegrationResponse> {
    const { existing, unchanged } = await this.#unchangedManaged(actor, input);
    if (unchanged) return unchanged;
    for (let attempt = 1; ; attempt++) {
      try {
        // first attempt: what the unlocked check found; after a lost race: read again
        const seen = attempt === 1 ? existing : await findIntegrationByManagedBy(this.#deps.db, this.#clusterOf(input), input.managedBy);
        return await this.#write((tx) => this.#upsertManaged(tx, actor, input, seen), { quiet: true });
      } catch (error) {
        // two first reconciles raced to insert the same managed_by: the loser updates instead
        if (attempt >= 3 || !isUniqueViolation(error)) throw error;
      }
    }
  }

  /** For the operator: deletes the integration owned by `managedBy` in `cluster`, if any. */
  async deleteManaged(actor: Actor, managedBy: string, cluster = this.#clusterName): Promise<void> {
    await this.#write(
      async (tx) => {
        const { trx } = tx;
        const found = await findIntegrationByManagedBy(trx, cluster, managedBy);
        if (!found) return undefined;
        const { project, row } = await this.#locked(trx, actor, found.id, 'delete');
        return this.#deleted(tx, actor, project, row, {});
      },
      { quiet: true },
    );
  }

  /**
   * For the in-process operator, after every sync: no actor, no audit entry
   * and no change row (one would wake the operator again). Unknown ids are ignored.
   */
  async recordSyncResult(integrationId: string, result: SyncResult): Promise<void> {
    if (!isUuid(integrationId)) return;
    await setIntegrationSyncResult(this.#deps.db, integrationId, {
      isSynced: result.isSynced,
      syncMessage: result.syncMessage === null ? null : result.syncMessage.slice(0, SYNC_MESSAGE_MAX),
      syncedRevision: result.syncedRevision,
      lastUsed: new Date(),
    });
  }

  /** recordSyncResult for an operator in another cluster: the caller must be allowed to edit the project's integrations (404 for an unknown id). */
  async recordSyncResultAs(actor: Actor, integrationId: string, result: SyncResult): Promise<void> {
    const row = await this.#require(this.#deps.db, integrationId);
    await this.#authorize(this.#deps.db, actor, row.projectId, 'edit');
    await this.recordSyncResult(row.id, result);
  }

  /**
   * The managed integration when it already holds exactly what `input` asks
   * for: checked without a transaction or lock (the operator's every resync
   * comes here). Anything else goes the locked way.
   */
  async #unchangedManaged(actor: Actor, input: ManagedIntegrationInput): Promise<{ existing?: IntegrationRow; unchanged?: IntegrationResponse }> {
    const { db, lookups, permissions } = this.#deps;
    const existing = await findIntegrationByManagedBy(db, this.#clusterOf(input), input.managedBy);
    if (!existing || existing.projectId !== input.projectId || existing.integration !== KUBERNETES_INTEGRATION) return { existing };
    const project = await lookups.requireProject(db, { id: input.projectId });
    await permissions.assertProjectPermission(actor, project, 'edit', 'integrations');
    const path = normalizeSecretPath(input.secretPath);
    await permissions.assertProjectPermission(actor, project, 'read', 'secrets', { environment: input.environment, secretPath: path });
    const environment = await lookups.requireEnvironment(db, project.id, input.environment);
    await requireFolder(db, environment, path);
    const wanted = { app: input.app, owner: input.owner, targetEnvironment: input.targetEnvironment, envId: environment.id, secretPath: path, isActive: input.isActive ?? existing.isActive };
    const differs = (Object.keys(wanted) as (keyof typeof wanted)[]).some((key) => wanted[key] !== existing[key]) || !isDeepStrictEqual(existing.metadata ?? {}, input.metadata ?? {});
    return differs ? { existing } : { existing, unchanged: toIntegrationResponse(existing) };
  }

  /** `seen`: the integration read before the transaction; a new one's insert fails on a concurrent insert (unique managed_by). */
  async #upsertManaged(tx: WriteContext, actor: Actor, input: ManagedIntegrationInput, seen: IntegrationRow | undefined): Promise<IntegrationResponse> {
    const { trx } = tx;
    const project = await this.#authorize(trx, actor, input.projectId, seen ? 'edit' : 'create');
    // read again under the project lock, so the comparison below sees concurrent writes
    const existing = seen && (await findIntegrationByManagedBy(trx, this.#clusterOf(input), input.managedBy));
    if (existing && existing.projectId !== project.id) {
      await this.#deps.permissions.assertProjectPermission(actor, await requireProject(trx, existing.projectId), 'delete', 'integrations', undefined, trx);
    }
    const source = await this.#source(trx, actor, project, input.environment, input.secretPath);
    const auth = await ensureKubernetesAuthIn(this.#deps, trx, actor, project);
    const values = { app: input.app, owner: input.owner, targetEnvironment: input.targetEnvironment, secretPath: source.path };
    if (!existing) {
      const row = await insertIntegration(trx, source.environment, {
        ...emptyTarget(),
        ...values,
        integrationAuthId: auth.id,
        integration: KUBERNETES_INTEGRATION,
        managedBy: input.managedBy,
        cluster: this.#clusterOf(input),
        isActive: input.isActive ?? true,
        metadata: input.metadata ?? {},
      });
      return this.#created(tx, actor, project, row);
    }
    const wanted = { ...values, envId: source.environment.id, integrationAuthId: auth.id, isActive: input.isActive ?? existing.isActive };
    const differs = (Object.keys(wanted) as (keyof typeof wanted)[]).some((key) => wanted[key] !== existing[key]) || !isDeepStrictEqual(existing.metadata ?? {}, input.metadata ?? {});
    if (!differs) return toIntegrationResponse(existing);
    await updateIntegration(trx, existing.id, { ...wanted, metadata: input.metadata ?? {} });
    return this.#updated(tx, actor, project, existing);
  }

  #clusterOf(input: ManagedIntegrationInput): string {
    return input.cluster ?? this.#clusterName;
  }

  async #created(tx: WriteContext, actor: Actor, project: Project, row: IntegrationRow): Promise<IntegrationResponse> {
    const { trx } = tx;
    await this.#deps.audit.record(trx, actor, auditScope(project), { type: 'create-integration', metadata: describeIntegration(row) });
    await tx.record([row]);
    return toIntegrationResponse(row);
  }

  /** Audits an update and records changes for the previous and the current source. */
  async #updated(tx: WriteContext, actor: Actor, project: Project, previous: IntegrationRow): Promise<IntegrationResponse> {
    const { trx } = tx;
    const row = (await findIntegrationById(trx, previous.id))!;
    await this.#deps.audit.record(trx, actor, auditScope(project), {
      type: 'update-integration',
      metadata: withoutEmpty({
        integrationId: row.id,
        integration: row.integration,
        environment: row.envSlug,
        secretPath: row.secretPath,
        isActive: row.isActive,
        app: row.app,
        owner: row.owner,
      }),
    });
    await tx.record([previous, row]);
    return toIntegrationResponse(row);
  }

  async #deleted(tx: WriteContext, actor: Actor, project: Project, row: IntegrationRow, extra: Record<string, unknown>): Promise<IntegrationResponse> {
    const { trx } = tx;
    await deleteIntegration(trx, row.id);
    await this.#deps.audit.record(trx, actor, auditScope(project), { type: 'delete-integration', metadata: { ...describeIntegration(row), ...extra } });
    await tx.record([row]);
    return toIntegrationResponse(row);
  }

  /**
   * Runs a mutation in a transaction; tells change subscribers after commit when it recorded a change.
   * `quiet`: the operator's own writes (the in-process operator is not woken by them).
   */
  async #write<T>(work: (tx: WriteContext) => Promise<T>, options: { quiet?: boolean } = {}): Promise<T> {
    const { db, changes } = this.#deps;
    let recorded = false;
    const result = await db.transaction().execute((trx) =>
      work({
        trx,
        async record(sources) {
          await changes.record(trx, integrationChanges(sources), options);
          recorded = true;
        },
      }),
    );
    // the in-process operator needs no wake-up for its own writes (NOTIFY still tells every subscriber)
    if (recorded && !options.quiet) changes.committed();
    return result;
  }

  /** The integration and its project, locked, after the permission check. */
  async #locked(trx: Executor, actor: Actor, integrationId: string, action: Action): Promise<{ project: Project; row: IntegrationRow }> {
    const found = await this.#require(trx, integrationId);
    const project = await this.#authorize(trx, actor, found.projectId, action);
    // read again under the project lock: a concurrent write may have changed or deleted it
    return { project, row: await this.#require(trx, integrationId) };
  }

  /** The source environment and folder (404 when either is missing), after the read check on its secrets. */
  async #source(trx: Executor, actor: Actor, project: Project, environmentSlug: string, secretPath: string): Promise<Source> {
    const path = normalizeSecretPath(secretPath);
    await this.#deps.permissions.assertProjectPermission(actor, project, 'read', 'secrets', { environment: environmentSlug, secretPath: path }, trx);
    const environment = await requireEnvironment(trx, project.id, environmentSlug);
    await requireFolder(trx, environment, path);
    return { environment, path };
  }

  async #authorize(db: Executor, actor: Actor, projectId: string, action: Action): Promise<Project> {
    const project = action === 'read' ? await requireProject(db, projectId) : await requireLockedProject(db, projectId);
    await this.#deps.permissions.assertProjectPermission(actor, project, action, 'integrations', undefined, db);
    return project;
  }

  async #require(db: Executor, integrationId: string): Promise<IntegrationRow> {
    const row = await findIntegrationById(db, integrationId);
    if (!row) throw new NotFoundError(`Integration with ID '${integrationId}' not found`);
    return row;
  }
}
