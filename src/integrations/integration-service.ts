import type { SyncProgress } from './sync-progress.ts';
import { isDeepStrictEqual } from 'node:util';
import type { Actor } from '../actor/actor.ts';
import type { Environment, Project } from '../db/schema.ts';
import { isUuid } from '../db/uuid.ts';
import { actingCluster } from '../clusters/acting-cluster.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../errors.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { Action } from '../permissions/permission-service.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { ensureKubernetesAuthIn } from './integration-auth-service.ts';
import { findIntegrationAuthById } from './integration-auth-store.ts';
import type { CreateIntegrationInput, ManagedIntegrationInput, SyncResult, UpdateIntegrationInput } from './integration-inputs.ts';
import { type IntegrationResponse, KUBERNETES_INTEGRATION, toIntegrationResponse } from './integration-schema.ts';
import { describeWorkload, type ReloadResult, type WorkloadRef } from './workload-rollout.ts';
import {
  describeIntegration,
  emptyTarget,
  integrationChange,
  integrationChanges,
  lockIntegrationsOf,
  readableIntegrationsOf,
  withoutEmpty,
} from './integration-scope.ts';
import { alreadyRecorded, reportChanges } from './recorded-sync.ts';
import {
  deleteIntegration,
  findIntegrationById,
  findIntegrationWithTargetKeys,
  findIntegrationByManagedBy,
  type IntegrationRow,
  type IntegrationWithTargetKeys,
  insertIntegration,
  insertManagedIntegrationIfAbsent,
  listIntegrationsOfProject,
  listManagedByOfCluster,
  listManagedIntegrationsOfProject,
  setIntegrationReloadResult,
  syncResultAtCommit,
  type SyncOutcome,
  updateIntegration,
} from './integration-store.ts';
import { ManagedRecordReads } from './managed-record-reads.ts';
import type { TargetKeys } from './target-keys.ts';
import { mayKnowProject } from '../services/project-visibility.ts';
import { DESTINATIONS_READ_MAX, destinationsOf, type PlaceDestinations } from './place-destinations.ts';
import type { ReadOnlyDb } from '../db/database.ts';

export type { CreateIntegrationInput, IntegrationWithTargetKeys, ManagedIntegrationInput, SyncResult, UpdateIntegrationInput };

/** A managed call with the cluster its actor acts for. */
type ActingInput = ManagedIntegrationInput & { cluster: string };

interface Source {
  environment: Environment;
  path: string;
}

const SYNC_MESSAGE_MAX = 1024;

/** A sync result's message as the record keeps it. */
function storedMessage(result: SyncResult): string | null {
  return result.syncMessage === null ? null : result.syncMessage.slice(0, SYNC_MESSAGE_MAX);
}

/** Integrations: where a project's secrets at one environment and path are synced to. */
export class IntegrationService {
  readonly #deps: ServiceDeps;
  readonly #progress: SyncProgress;
  readonly #managedReads: ManagedRecordReads;

  constructor(deps: ServiceDeps, progress: SyncProgress) {
    this.#deps = deps;
    this.#progress = progress;
    this.#managedReads = new ManagedRecordReads(deps.db);
  }

  async create(actor: Actor, input: CreateIntegrationInput): Promise<IntegrationResponse> {
    const { integrationAuthId, sourceEnvironment, secretPath, isActive, metadata, ...target } = input;
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const auth = await findIntegrationAuthById(tx.db, integrationAuthId);
      if (!auth || !(await mayKnowProject(this.#deps, tx.db, actor, auth.projectId)))
        throw new NotFoundError(`Integration auth with ID '${integrationAuthId}' not found`);
      const project = await lockIntegrationsOf(tx, auth.projectId, 'create');
      const source = await this.#source(tx, project, sourceEnvironment, secretPath);
      const row = await insertIntegration(tx.db, source.environment, {
        ...emptyTarget(),
        ...target,
        integrationAuthId: auth.id,
        integration: auth.integration,
        secretPath: source.path,
        isActive,
        metadata,
      });
      return this.#created(tx, project, row);
    });
  }

  async getById(actor: Actor, integrationId: string): Promise<IntegrationResponse> {
    const { db } = this.#deps;
    const row = await this.#require(db, integrationId, actor);
    await readableIntegrationsOf(this.#deps, actor, row.projectId);
    return toIntegrationResponse(row);
  }

  async listOfProject(actor: Actor, projectId: string): Promise<IntegrationResponse[]> {
    const project = await readableIntegrationsOf(this.#deps, actor, projectId);
    return (await listIntegrationsOfProject(this.#deps.db, project.id)).map(toIntegrationResponse);
  }

  /**
   * Where the secrets of one folder (or one of its keys) go: the Integration resources' records that read it, with how
   * far each got, what each Secret holds of it and which workloads read that. The caller must read the project's
   * integrations and the folder's secrets; the folder's existence is not checked (an absent one is answered as one
   * nothing reads), so the answer tells nothing about places the caller may not read.
   */
  async destinationsOf(actor: Actor, place: { projectId: string; environment: string; secretPath: string; key?: string }): Promise<PlaceDestinations> {
    const { db, lookups, permissions } = this.#deps;
    const project = await readableIntegrationsOf(this.#deps, actor, place.projectId);
    const path = normalizeSecretPath(place.secretPath);
    await permissions.assertProject({ actor, project, action: 'read', subject: 'secrets', where: { environment: place.environment, secretPath: path } });
    const environment = await lookups.requireEnvironment(db, project.id, place.environment);
    const rows = await listManagedIntegrationsOfProject(db, project.id, DESTINATIONS_READ_MAX + 1);
    return destinationsOf(db, rows, { projectId: project.id, environmentId: environment.id, environment: place.environment, path, key: place.key });
  }

  /** PATCH (op 1): activates or pauses, and moves the source; omitted fields keep their stored values. */
  async update(actor: Actor, integrationId: string, input: UpdateIntegrationInput): Promise<IntegrationResponse> {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const { project, row } = await this.#locked(tx, integrationId, 'edit');
      const source = await this.#source(tx, project, input.environment ?? row.envSlug, input.secretPath ?? row.secretPath);
      await updateIntegration(tx.db, row.id, {
        isActive: input.isActive,
        app: input.app,
        appId: input.appId,
        targetEnvironment: input.targetEnvironment,
        owner: input.owner,
        envId: source.environment.id,
        secretPath: source.path,
        metadata: input.metadata === undefined ? undefined : { ...(row.metadata as object | null), ...input.metadata },
      });
      return this.#updated(tx, project, row);
    });
  }

  async delete(actor: Actor, integrationId: string, options: { shouldDeleteIntegrationSecrets: boolean }): Promise<IntegrationResponse> {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const { project, row } = await this.#locked(tx, integrationId, 'delete');
      return this.#deleted(tx, project, row, { shouldDeleteIntegrationSecrets: options.shouldDeleteIntegrationSecrets });
    });
  }

  /** Manual sync: records a change for the integration's source, so the operator syncs it again. */
  async sync(actor: Actor, integrationId: string): Promise<IntegrationResponse> {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const { project, row } = await this.#locked(tx, integrationId, 'edit');
      tx.audit({ project, type: 'manual-sync-integration', metadata: describeIntegration(row) });
      tx.change(...integrationChanges([row]));
      return toIntegrationResponse(row);
    });
  }

  /**
   * For the in-process operator: creates or updates the "kubernetes"
   * integration owned by `managedBy`. A call that changes nothing writes
   * nothing (no audit entry, no change row), so reconciling never wakes the
   * operator again.
   */
  async upsertManaged(actor: Actor, named: ManagedIntegrationInput): Promise<IntegrationResponse> {
    return (await this.upsertManagedRecord(actor, named)).response;
  }

  /**
   * upsertManaged, with the record (and the stored report of its target's keys) when what it read or inserted is what
   * the database holds once it answers: found unchanged, or just created. The in-process operator's calls later in
   * the same reconcile decide on it (recordSyncResultAs's `read`) instead of reading it again: nothing else writes
   * what they decide on meanwhile. An updated record is not handed out.
   */
  async upsertManagedRecord(
    actor: Actor,
    named: ManagedIntegrationInput,
    options: { expectNew?: boolean } = {},
  ): Promise<{ response: IntegrationResponse; record?: IntegrationWithTargetKeys }> {
    const input = { ...named, cluster: actingCluster(actor, named.cluster) };
    if (options.expectNew) return this.#createManagedRecord(actor, input);
    const { existing, unchanged } = await this.#unchangedManaged(actor, input);
    if (unchanged) return { response: unchanged, record: existing };
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        // first attempt: what the unlocked check found; after a lost race (two first reconciles inserting the same managed_by): read again
        const seen = tx.attempt === 1 ? existing?.row : await findIntegrationByManagedBy(tx.db, actor.orgId, input.cluster, input.managedBy);
        return this.#upsertManaged(tx, input, seen);
      },
      { quiet: isInProcess(actor), retry: { on: ['integrations_cluster_managed_by_key'], attempts: 3 } },
    );
  }

  /**
   * upsertManagedRecord for a record that is most likely new (its Integration resource's status names none yet): the
   * insert is tried first, with no read before it, and does nothing when the record exists after all, which is then
   * read and updated in the same transaction; as is a first record of a project without a kubernetes integration auth.
   */
  async #createManagedRecord(actor: Actor, input: ActingInput): Promise<{ response: IntegrationResponse; record?: IntegrationWithTargetKeys }> {
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const project = await lockIntegrationsOf(tx, input.projectId, 'create');
        const source = await this.#source(tx, project, input.environment, input.secretPath);
        const row = await insertManagedIntegrationIfAbsent(tx.db, source.environment, this.#newManagedValues(tx, input, source.path));
        if (row) return { response: this.#created(tx, project, row), record: { row, targetKeys: null } };
        const existing = await findIntegrationByManagedBy(tx.db, actor.orgId, input.cluster, input.managedBy);
        if (existing) await tx.authorize({ project, action: 'edit', subject: 'integrations' });
        return this.#upsertLocked(tx, project, input, existing);
      },
      // a concurrent first insert of the same record (after the auth was made here): found by the next attempt's insert
      { quiet: isInProcess(actor), retry: { on: ['integrations_cluster_managed_by_key'], attempts: 3 } },
    );
  }

  /** For the operator: deletes the integration owned by `managedBy` in the cluster it acts for, if any. */
  async deleteManaged(actor: Actor, managedBy: string, named?: string): Promise<void> {
    const cluster = actingCluster(actor, named);
    await this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const found = await findIntegrationByManagedBy(tx.db, actor.orgId, cluster, managedBy);
        if (!found) return tx.authorizedBy('nothing to delete: the integration is gone');
        const { project, row } = await this.#locked(tx, found.id, 'delete');
        await this.#deleted(tx, project, row, {});
      },
      { quiet: isInProcess(actor) },
    );
  }

  /**
   * For the operator: which Integration resources of the cluster it acts for have a record here (`<namespace>/<name>`,
   * in order, a page at a time), so that it can drop the records of resources deleted while it was away. Names only:
   * the resources are the caller's own cluster's.
   */
  async listManaged(actor: Actor, page: { cluster?: string; namespace?: string; after?: string; limit: number }): Promise<{ managedBy: string[]; next: string | null }> {
    const cluster = actingCluster(actor, page.cluster);
    const managedBy = await listManagedByOfCluster(this.#deps.db, actor.orgId, cluster, page);
    return { managedBy, next: managedBy.length === page.limit ? managedBy.at(-1)! : null };
  }

  /**
   * recordSyncResultAs without its checks (no actor, no audit entry), for a caller in this process that needs none
   * (the operator records through recordSyncResultAs; the tests set records up with this): a NOTIFY tells the revision
   * barrier's waiters.
   * No change row, except when the report of its target's keys changed (the console's "Where it goes" follows the
   * change stream): then one `integration` change at the record's source, in the same transaction, marked as the
   * in-process operator's own when `own` (it is not woken for it). A result the record already holds exactly writes
   * nothing. Unknown ids are ignored.
   */
  async recordSyncResult(integrationId: string, result: SyncResult, options: { own?: boolean } = {}): Promise<void> {
    if (!isUuid(integrationId)) return;
    const found = await findIntegrationWithTargetKeys(this.#deps.db, integrationId);
    if (!found) return;
    const exactly = { alteredAt: async () => Number.POSITIVE_INFINITY, targetKeys: async () => found.targetKeys ?? undefined };
    if (await alreadyRecorded(found.row, result, storedMessage(result), exactly)) return;
    await this.#recordDecided(found.row, found.targetKeys, result, { own: options.own ?? false });
  }

  /**
   * recordSyncResult for an operator in another cluster (and the in-process one, with `read`: its record as its
   * upsert in the same reconcile read it, upsertManagedRecord): only the operator of the record's cluster writes it
   * (a capability of its credential's binding, not a project role), and only a result the server can
   * believe: a revision it committed, places its operator may read (the revision barrier counts these); a report of
   * its target's keys naming only such places and workloads of the Integration resource's namespace.
   */
  async recordSyncResultAs(actor: Actor, integrationId: string, result: SyncResult, read?: IntegrationWithTargetKeys): Promise<void> {
    // the stored report of its target's keys comes in the same read: with a report, it decides whether anything is written
    const found = read?.row.id === integrationId ? read : await findIntegrationWithTargetKeys(this.#deps.db, integrationId);
    const row = await this.#ownRecord(actor, integrationId, found?.row);
    if (result.syncedRevision != null) await this.#assertCommitted(result.syncedRevision);
    this.#assertInNamespace(row, result.targetKeys?.readers ?? [], 'A report of the keys of its target');
    await this.#assertReadable(actor, row, result);
    const { changes, db } = this.#deps;
    const reads = {
      alteredAt: () => changes.projectAlteredAt(db, row.projectId),
      targetKeys: async () => found?.targetKeys ?? undefined,
    };
    if (await alreadyRecorded(row, result, storedMessage(result), reads)) return;
    await this.#recordDecided(row, found?.targetKeys ?? null, result, { own: isInProcess(actor) });
  }

  /**
   * recordSyncResult of a record as read before (with its stored report): whether the report changes is decided on
   * that read, so the whole transaction is one message on PostgreSQL (BEGIN, the outcome and the report in one
   * statement, the report's change row, the NOTIFY and COMMIT). Only the operator that keeps the record writes
   * either, one reconcile at a time, and the statement changes nothing that already holds.
   */
  async #recordDecided(row: IntegrationRow, storedKeys: TargetKeys | null, result: SyncResult, options: { own: boolean }): Promise<void> {
    const reportChanged = reportChanges(storedKeys, result.targetKeys);
    await this.#deps.unitOfWork.write(
      null,
      async (tx) => {
        tx.authorizedBy('the operator keeps its own sync bookkeeping');
        const report = reportChanged ? result.targetKeys : undefined;
        tx.writeAtCommit(syncResultAtCommit(tx.db, row.id, syncOutcomeOf(result), report), ['integrations', 'integrationTargetKeys']);
        if (reportChanged) tx.change(integrationChange(row));
        this.#progress.notify(tx);
        tx.afterCommit(() => this.#progress.committed());
      },
      { own: options.own },
    );
  }

  /** For the operator, after its workload reload dealt with the changes up to `reloadedRevision` (rolled, or found current), and which workloads still roll out. */
  async recordReloadResult(integrationId: string, result: ReloadResult): Promise<void> {
    if (!isUuid(integrationId)) return;
    await this.#recordProgress((tx) => setIntegrationReloadResult(tx.db, integrationId, result));
  }

  /**
   * recordReloadResult for an operator in another cluster (as recordSyncResultAs); the workloads it names are
   * in the Integration resource's own namespace (the only ones its reload rolls).
   */
  async recordReloadResultAs(actor: Actor, integrationId: string, result: ReloadResult): Promise<void> {
    const row = await this.#requireOwnRecord(actor, integrationId);
    await this.#assertCommitted(result.reloadedRevision);
    this.#assertInNamespace(row, result.rolling ?? [], 'A reload result');
    await this.recordReloadResult(integrationId, result);
  }

  /** Workloads an operator reports for a record are in its Integration resource's own namespace (the only ones it looks at). */
  #assertInNamespace(row: IntegrationRow, workloads: readonly WorkloadRef[], what: string): void {
    const namespace = row.managedBy!.split('/')[0];
    const elsewhere = workloads.find((workload) => workload.namespace !== namespace);
    if (elsewhere) {
      throw new ForbiddenError(
        `${what} may name only workloads in the Integration's namespace '${namespace}'; ${describeWorkload(elsewhere)} is not one`,
        'WorkloadNotInNamespace',
      );
    }
  }

  /** The record of an Integration resource of the cluster the actor acts for (404 when it may not know the project, 403 otherwise). */
  async #requireOwnRecord(actor: Actor, integrationId: string): Promise<IntegrationRow> {
    return this.#ownRecord(actor, integrationId, await findIntegrationById(this.#deps.db, integrationId));
  }

  /** #requireOwnRecord of a row already read. */
  async #ownRecord(actor: Actor, integrationId: string, found: IntegrationRow | undefined): Promise<IntegrationRow> {
    const row = await this.#known(this.#deps.db, integrationId, found, actor);
    const cluster = actingCluster(actor);
    if (row.managedBy === null || row.cluster !== cluster || row.clusterOrgId !== actor.orgId) {
      throw new ForbiddenError(
        `Integration '${integrationId}' is not kept by an Integration resource of cluster '${cluster}': only the operator of its own cluster records its syncs`,
        'OperatorOnly',
      );
    }
    return row;
  }

  async #assertCommitted(revision: number): Promise<void> {
    const { changes, db } = this.#deps;
    // a revision this process has seen committed needs no read (on PostgreSQL the in-process operator read its own with the versions)
    if (revision <= changes.knownRevision()) return;
    const latest = await changes.latestRevision(db);
    if (revision > latest) {
      throw new BadRequestError(`Revision ${revision} has not been committed (the newest is ${latest}): a sync cannot reflect it`, 'RevisionNotCommitted');
    }
  }

  /**
   * Every place a result names is a folder of the record's project that its operator may read: the places it read
   * (by environment id), and the folders its target's keys came from (by environment slug).
   */
  async #assertReadable(actor: Actor, row: IntegrationRow, result: SyncResult): Promise<void> {
    const places = result.places ?? [];
    const folders = result.targetKeys?.carried ?? [];
    if (places.length === 0 && folders.length === 0) return;
    const { db, lookups, permissions } = this.#deps;
    const project = await lookups.requireProject(db, { id: row.projectId });
    const allowed = await permissions.forProject(actor, project);
    const slugs = new Map((await lookups.listEnvironments(db, project.id)).map((environment) => [environment.id, environment.slug]));
    const known = new Set(slugs.values());
    const named = [
      ...places.map((place) => ({ environment: slugs.get(place.environmentId), shown: place.environmentId, path: place.path })),
      ...folders.map((folder) => ({ environment: known.has(folder.environment) ? folder.environment : undefined, shown: folder.environment, path: folder.path })),
    ];
    for (const { environment, shown, path } of named) {
      if (environment === undefined || !allowed.can('read', 'secrets', { environment, secretPath: path })) {
        throw new ForbiddenError(
          `A sync result may name only places its operator may read in the integration's project; ${shown}:${path} is not one`,
          'PlaceNotReadable',
        );
      }
    }
  }

  /** An operator's bookkeeping write; when it changed anything, the barrier's waiters hear of it. `own`: see recordSyncResult. */
  async #recordProgress(write: (tx: WriteContext) => Promise<boolean>, options: { own?: boolean } = {}): Promise<void> {
    await this.#deps.unitOfWork.write(
      null,
      async (tx) => {
        tx.authorizedBy('the operator keeps its own sync bookkeeping');
        if (!(await write(tx))) return;
        this.#progress.notify(tx);
        tx.afterCommit(() => this.#progress.committed());
      },
      { own: options.own ?? false },
    );
  }

  /**
   * The managed integration when it already holds exactly what `input` asks
   * for: checked without a transaction or lock (the operator's every resync
   * comes here). Anything else goes the locked way.
   */
  async #unchangedManaged(actor: Actor, input: ActingInput): Promise<{ existing?: IntegrationWithTargetKeys; unchanged?: IntegrationResponse }> {
    const { db, lookups, permissions } = this.#deps;
    const found = await this.#managedReads.read(actor.orgId, input.cluster, input.managedBy);
    const existing = found?.row;
    if (!existing || existing.projectId !== input.projectId || existing.integration !== KUBERNETES_INTEGRATION) return { existing: found };
    const project = await lookups.requireProject(db, { id: input.projectId });
    await permissions.assertProject({ actor, project, action: 'edit', subject: 'integrations' });
    const path = normalizeSecretPath(input.secretPath);
    await permissions.assertProject({ actor, project, action: 'read', subject: 'secrets', where: { environment: input.environment, secretPath: path } });
    const environment = await lookups.requireEnvironment(db, project.id, input.environment);
    await lookups.requireFolder(db, environment, path);
    const wanted = {
      app: input.app,
      owner: input.owner,
      targetEnvironment: input.targetEnvironment,
      envId: environment.id,
      secretPath: path,
      isActive: input.isActive ?? existing.isActive,
      reloads: input.reloads ?? existing.reloads,
    };
    const differs =
      (Object.keys(wanted) as (keyof typeof wanted)[]).some((key) => wanted[key] !== existing[key]) || !isDeepStrictEqual(existing.metadata ?? {}, input.metadata ?? {});
    return differs ? { existing: found } : { existing: found, unchanged: toIntegrationResponse(existing) };
  }

  /** `seen`: the integration read before the transaction; a new one's insert fails on a concurrent insert (unique managed_by). */
  async #upsertManaged(
    tx: WriteContext,
    input: ActingInput,
    seen: IntegrationRow | undefined,
  ): Promise<{ response: IntegrationResponse; record?: IntegrationWithTargetKeys }> {
    const project = await lockIntegrationsOf(tx, input.projectId, seen ? 'edit' : 'create');
    // read again under the project lock, so the comparison below sees concurrent writes
    const existing = seen && (await findIntegrationByManagedBy(tx.db, tx.actor.orgId, input.cluster, input.managedBy));
    return this.#upsertLocked(tx, project, input, existing);
  }

  /** #upsertManaged once the project is locked and the record (if any) read under the lock. */
  async #upsertLocked(
    tx: WriteContext,
    project: Project,
    input: ActingInput,
    existing: IntegrationRow | undefined,
  ): Promise<{ response: IntegrationResponse; record?: IntegrationWithTargetKeys }> {
    if (existing && existing.projectId !== project.id) {
      await tx.authorize({ project: await tx.project({ id: existing.projectId }), action: 'delete', subject: 'integrations' });
    }
    const source = await this.#source(tx, project, input.environment, input.secretPath);
    const auth = await ensureKubernetesAuthIn(tx, project);
    if (!existing) {
      const row = await insertIntegration(tx.db, source.environment, { ...this.#newManagedValues(tx, input, source.path), integrationAuthId: auth.id });
      return { response: this.#created(tx, project, row), record: { row, targetKeys: null } };
    }
    const values = { app: input.app, owner: input.owner, targetEnvironment: input.targetEnvironment, secretPath: source.path };
    const wanted = {
      ...values,
      envId: source.environment.id,
      integrationAuthId: auth.id,
      isActive: input.isActive ?? existing.isActive,
      reloads: input.reloads ?? existing.reloads,
    };
    const differs =
      (Object.keys(wanted) as (keyof typeof wanted)[]).some((key) => wanted[key] !== existing[key]) || !isDeepStrictEqual(existing.metadata ?? {}, input.metadata ?? {});
    if (!differs) return { response: toIntegrationResponse(existing) };
    await updateIntegration(tx.db, existing.id, { ...wanted, metadata: input.metadata ?? {} });
    return { response: await this.#updated(tx, project, existing) };
  }

  /** The columns of a new record an Integration resource keeps (its integration auth aside). */
  #newManagedValues(tx: WriteContext, input: ActingInput, secretPath: string) {
    return {
      ...emptyTarget(),
      app: input.app,
      owner: input.owner,
      targetEnvironment: input.targetEnvironment,
      secretPath,
      integration: KUBERNETES_INTEGRATION,
      managedBy: input.managedBy,
      cluster: input.cluster,
      clusterOrgId: tx.actor.orgId,
      isActive: input.isActive ?? true,
      reloads: input.reloads ?? false,
      metadata: input.metadata ?? {},
    };
  }

  #created(tx: WriteContext, project: Project, row: IntegrationRow): IntegrationResponse {
    tx.audit({ project, type: 'create-integration', metadata: describeIntegration(row) });
    tx.change(...integrationChanges([row]));
    return toIntegrationResponse(row);
  }

  /** Audits an update and records changes for the previous and the current source. */
  async #updated(tx: WriteContext, project: Project, previous: IntegrationRow): Promise<IntegrationResponse> {
    const row = (await findIntegrationById(tx.db, previous.id))!;
    tx.audit({
      project,
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
    tx.change(...integrationChanges([previous, row]));
    return toIntegrationResponse(row);
  }

  async #deleted(tx: WriteContext, project: Project, row: IntegrationRow, extra: Record<string, unknown>): Promise<IntegrationResponse> {
    await deleteIntegration(tx.db, row.id);
    tx.audit({ project, type: 'delete-integration', metadata: { ...describeIntegration(row), ...extra } });
    tx.change(...integrationChanges([row]));
    return toIntegrationResponse(row);
  }

  /** The integration and its project, locked, after the permission check. */
  async #locked(tx: WriteContext, integrationId: string, action: Exclude<Action, 'read'>): Promise<{ project: Project; row: IntegrationRow }> {
    const found = await this.#require(tx.db, integrationId, tx.actor);
    const acting = tx.actor.cluster;
    if (found.managedBy !== null && acting !== undefined && (found.cluster !== acting || found.clusterOrgId !== tx.actor.orgId)) {
      // an operator credential changes only its own cluster's records, through any route
      throw new ForbiddenError(`This credential acts for cluster '${acting}'; integration '${integrationId}' is kept by another cluster's operator`, 'ClusterMismatch');
    }
    const project = await lockIntegrationsOf(tx, found.projectId, action);
    // read again under the project lock: a concurrent write may have changed or deleted it
    return { project, row: await this.#require(tx.db, integrationId) };
  }

  /** The source environment and folder (404 when either is missing), after the read check on its secrets. */
  async #source(tx: WriteContext, project: Project, environmentSlug: string, secretPath: string): Promise<Source> {
    const { lookups } = this.#deps;
    const path = normalizeSecretPath(secretPath);
    await tx.authorize({ project, action: 'read', subject: 'secrets', where: { environment: environmentSlug, secretPath: path } });
    const environment = await lookups.requireEnvironment(tx.db, project.id, environmentSlug);
    await lookups.requireFolder(tx.db, environment, path);
    return { environment, path };
  }

  /** The integration; with `actor`, 404 alike when it is in a project the actor may not know. */
  async #require(db: ReadOnlyDb, integrationId: string, actor?: Actor): Promise<IntegrationRow> {
    return this.#known(db, integrationId, await findIntegrationById(db, integrationId), actor);
  }

  /** The row read, if the actor may know it exists (404 otherwise, as for a row that is not there). */
  async #known(db: ReadOnlyDb, integrationId: string, row: IntegrationRow | undefined, actor?: Actor): Promise<IntegrationRow> {
    if (!row || (actor && !(await mayKnowProject(this.#deps, db, actor, row.projectId)))) throw new NotFoundError(`Integration with ID '${integrationId}' not found`);
    return row;
  }
}

/**
 * The in-process operator (no token: it is this process) records its own Integrations quietly: it needs no wake-up for
 * them. An operator of another cluster calls over HTTP: its records wake every follower at once (the console's
 * "Where it goes", change streams), as any write does.
 */
function isInProcess(actor: Actor): boolean {
  return actor.tokenId === null;
}

/** What a sync result stores on its record. */
function syncOutcomeOf(result: SyncResult): SyncOutcome {
  return {
    isSynced: result.isSynced,
    syncMessage: storedMessage(result),
    ...(result.syncedRevision === undefined ? {} : { syncedRevision: result.syncedRevision }),
    lastUsed: new Date(),
    ...(result.places === undefined ? {} : { readPlaces: result.places }),
  };
}
