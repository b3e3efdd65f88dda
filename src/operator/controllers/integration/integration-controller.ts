import { hash } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ReadPlace } from '../../../changes/read-places.ts';
import type { Change, IntegrationRecord, IntegrationsPort, Revision, RotationNote, SecretListing } from '../../port/coffer-port.ts';
import type { EventType } from '../../runtime/event-recorder.ts';
import { ANNOTATION_FORCE_SYNC, type IntegrationResource, type TargetKind, type WorkloadKind } from '../../resources.ts';
import type { ConditionReason } from '../../runtime/condition-reason.ts';
import { type Controller, done, type Failure, failed, type ReconcileResult, requeueAfter, type Watches } from '../../runtime/controller.ts';
import type { CachedInformer, Workload } from '../../runtime/informers.ts';
import { describeError } from '../../runtime/kube-api.ts';
import { formatNamespacedName, keyOf, type ObjectKey, objectKey } from '../../runtime/object-key.ts';
import { type ControllerContext, NotReadyError } from '../context.ts';
import { leaveAlone } from '../installation-guard.ts';
import { ClaimedElsewhere } from './target-claim.ts';
import { ignoreCofferNotFound, isCofferNotFound, toFailure } from '../failures.ts';
import { resolveProject } from '../project-resolution.ts';
import { ChangeRouter, type RotationReached } from './change-router.ts';
import { ProjectUsers } from './project-users.ts';
import { listingKeyOf, type PlannedSource, sourcesOf } from './integration-sources.ts';
import { DataHasher, describeTarget, holdsOwnSync, targetKindOf } from './managed-target.ts';
import { COLLISIONS_KEPT } from './source-merge.ts';
import { reportCollisions, reportSkipped, reportWrite, SKIPPED_KEYS_KEPT, syncedFields, syncedMessage } from './sync-report.ts';
import { targetDataOf } from './target-data.ts';
import { TargetWriter } from './target-object.ts';
import { TemplateRenderer } from './template/template-renderer.ts';
import { RELOAD_KEY_SECRET } from '../reload/reload-key.ts';
import type { ReloadReport } from '../reload/workload-reloader.ts';
import { type TargetRef, targetRef } from '../reload/consumed-keys.ts';
import { TargetReaders } from '../reload/target-readers.ts';
import { targetKeysReport } from './target-keys-report.ts';

/** What the status names of the record and project an Integration syncs from. */
type RecordIdentity = {
  integrationId: string;
  projectId: string;
  projectSlug: string;
};

/**
 * A sync is done; `missed`: a change came before the index had the
 * Integration, so it runs again; `recheckInMs`: a workload reload to look at again then.
 */
interface SyncOutcome {
  missed: boolean;
  recheckInMs?: number;
}

/** What the Event on an Integration says when a rotation writing what it reads reaches a phase. */
const ROTATION_PHASE_EVENTS: Record<RotationNote['phase'], { type: EventType; says: string }> = {
  rotated: { type: 'Normal', says: 'published a new credential; the one before stays valid until the consumers have the new one' },
  waiting: { type: 'Warning', says: "waits for this Integration's target and the workloads it reloads to take the current credential before retiring the previous one" },
  stopped: { type: 'Warning', says: 'stopped: its consumers did not take the current credential within its window; the previous credential stays valid' },
  retired: { type: 'Warning', says: 'retired the previous credential on request (retire now, risk accepted)' },
};

/** Refusals that mean this namespace may no longer read the project: the copy goes. */
const ACCESS_REVOKED: ReadonlySet<string> = new Set(['GrantRevoked', 'Forbidden']);
/** Failures that mean the whole source was deleted in Coffer: the Secret keeps its last data unless target.deletionPolicy is Delete. */
const SOURCE_DELETED: ReadonlySet<string> = new Set(['ProjectDeleted', 'EnvironmentNotFound', 'FolderNotFound']);
/** What the status no longer says once the copy is removed. */
const REMOVED_COPY = { dataHash: null, secretCount: null, syncedRevision: null, skippedKeys: null, collisions: null };
/** How soon a sync is tried again when the installation's digest key could not be read or made. */
const DIGEST_KEY_RETRY_MS = 10_000;
/** What the integration record says of a sync that failed for a reason no condition names (the operator's log has the error). */
const UNNAMED_FAILURE_MESSAGE =
  'The last sync failed (the Kubernetes API server unreachable or refusing, or an unexpected error; the operator log says which); the target keeps its last data and the sync is retried with backoff';

/**
 * Integration → an integration record in Coffer and a native Secret (or
 * ConfigMap) holding the selected, merged and rendered secrets of its
 * sources, written only when its content differs. Woken by the changes that
 * touch what it read (the dependency index), by its target being edited or
 * deleted, and by its SecretsProject.
 */
export class IntegrationController implements Controller<IntegrationResource> {
  readonly kind = 'Integration';
  readonly failureConditions = ['Ready', 'Synced'] as const;
  readonly informer: CachedInformer<IntegrationResource>;
  readonly #context: ControllerContext;
  readonly #changes: ChangeRouter;
  readonly #targets: TargetWriter;
  readonly #renderer = new TemplateRenderer();
  /** Which workloads read which targets (reported with each sync); undefined when workloads are not watched. */
  readonly #readers: TargetReaders | undefined;
  /**
   * The target-keys report this leadership last recorded per Integration (with its record's id), as a SHA-256 of its
   * JSON: an unchanged one is not sent again. Key and workload names only; the digest keeps 10,000 of them in 1 MB.
   */
  readonly #reported = new Map<string, string>();
  /** The data hash each Integration is writing, from its target's write until its status names it (at most one per reconcile under way). */
  readonly #syncing = new Map<string, string>();
  readonly #projectUsers: ProjectUsers;
  #hasher: DataHasher | undefined;

  constructor(context: ControllerContext) {
    this.#context = context;
    this.informer = context.informers.integrations;
    this.#projectUsers = new ProjectUsers(this.informer);
    const { changes } = context.port;
    this.#changes = new ChangeRouter({ logger: context.logger, isOwnWrite: (revision) => changes.isOwnWrite(revision) });
    this.#targets = new TargetWriter(context);
    this.#readers = context.informers.workloads ? new TargetReaders() : undefined;
  }

  /** Leadership starts at `revision`: listings read before it are not trusted. */
  startAt(revision: Revision): void {
    this.#changes.startAt(revision);
    // another replica may have recorded reports since this one last led
    this.#reported.clear();
  }

  setup(watches: Watches): void {
    const { informers } = this.#context;
    watches.informer(informers.managedSecrets, (secret) => this.#writersOf('Secret', secret, 'update'), ['update']);
    watches.informer(informers.managedSecrets, (secret) => this.#writersOf('Secret', secret, 'delete'), ['delete']);
    watches.informer(informers.managedConfigMaps, (configMap) => this.#writersOf('ConfigMap', configMap, 'update'), ['update']);
    watches.informer(informers.managedConfigMaps, (configMap) => this.#writersOf('ConfigMap', configMap, 'delete'), ['delete']);
    for (const [kind, informer] of Object.entries(informers.workloads ?? {}) as [WorkloadKind, CachedInformer<Workload>][]) {
      watches.informer(informer, (workload) => this.#context.reloader.integrationsConcerned(kind, workload), ['add', 'update']);
      // what a pod template reads is reported with each sync: a change of it (not a status update) syncs the writers again
      watches.informer(informer, (workload) => this.#writersOfTargets(workload.metadata?.namespace, this.#readers!.seen(kind, workload)), ['add', 'update']);
      watches.informer(informer, (workload) => this.#writersOfTargets(workload.metadata?.namespace, this.#readers!.gone(kind, workload)), ['delete']);
    }
    watches.informer(informers.projects, (project) => keysOf(this.#projectUsers.changedFor(project)), ['add', 'update']);
    watches.informer(informers.projects, (project) => keysOf(this.#projectUsers.goneFor(project)), ['delete']);
    watches.changes((changes) => this.#affectedBy(changes));
  }

  forget(key: ObjectKey): void {
    this.#changes.forget(key);
    this.#reported.delete(formatNamespacedName(key));
  }

  /** The operator stops: the template worker goes. */
  async close(): Promise<void> {
    await this.#renderer.close();
  }

  async reconcile(resource: IntegrationResource): Promise<ReconcileResult> {
    const context = this.#context;
    let integrationId = resource.status?.integrationId;
    // read first inside the try: an unreachable Coffer is a failure like any other (CofferUnavailable)
    let readAt: Revision | undefined;
    const progress = { indexed: false };
    try {
      // everything read below is at least this current; changes after it reach the Integration once it is indexed
      readAt = await context.port.changes.latestRevision();
      const project = await resolveProject(context, resource.metadata.namespace, resource.spec);
      await context.permissions.assertHeld(project.projectId);
      const record = await this.#upsertRecord(resource, project.projectId);
      integrationId = record.id;
      const identity = { integrationId: record.id, projectId: project.projectId, projectSlug: project.slug };
      const { missed, recheckInMs } =
        (resource.spec.isActive ?? record.isActive)
          ? await this.#sync(resource, project.projectId, identity, readAt, progress)
          : await this.#pause(resource, record, identity, readAt);
      if (missed) return requeueAfter(0);
      return recheckInMs === undefined ? done() : requeueAfter(recheckInMs);
    } catch (error) {
      if (error instanceof ClaimedElsewhere) {
        leaveAlone(context, 'Integration', resource, error);
        return done();
      }
      // what a failure means for the target and the index is this controller's; reporting it is the runtime's
      const failure = toFailure(error, 'NotFound');
      if (!failure) {
        await this.#recordUnnamedFailure(resource, integrationId);
        throw error;
      }
      return this.#failed(resource, integrationId, failure, error, readAt, progress.indexed);
    }
  }

  /**
   * A failure, before the failure path reports it: a missing source is
   * indexed by its own place (its creation wakes the Integration) and named
   * precisely; revoked access removes the copy; a deleted source keeps the
   * last data unless the spec asks otherwise; the record says it failed.
   */
  async #failed(
    resource: IntegrationResource,
    integrationId: string | undefined,
    failure: Failure,
    error: unknown,
    readAt: Revision | undefined,
    indexed: boolean,
  ): Promise<ReconcileResult> {
    let missed = false;
    let reason = failure.reason;
    if (isCofferNotFound(error) && readAt !== undefined) {
      const place = await this.#indexOwnPlace(resource, readAt);
      missed = place.missed;
      reason = place.missing ?? reason;
    } else if (!indexed) {
      this.#changes.unindex(resource.metadata);
    }
    const target = describeTarget(resource);
    const merge = resource.spec.target.creationPolicy === 'Merge';
    let message = failure.message;
    let fields: Record<string, unknown> | undefined;
    // the message states what holds while the failure stands (the same on every retry), not what this one did
    if (ACCESS_REVOKED.has(reason)) {
      await this.#targets.remove(resource);
      message += merge
        ? `; Coffer removes this Integration's keys from ${target} (no copy stays where access is revoked)`
        : `; Coffer deletes ${target} (no copy stays where access is revoked)`;
      fields = REMOVED_COPY;
    } else if (SOURCE_DELETED.has(reason) && resource.spec.target.deletionPolicy === 'Delete') {
      await this.#targets.remove(resource);
      message += merge ? `; this Integration's keys are removed from ${target} (target.deletionPolicy Delete)` : `; ${target} is deleted (target.deletionPolicy Delete)`;
      fields = REMOVED_COPY;
    } else if (SOURCE_DELETED.has(reason)) {
      message += `; ${target} keeps its last data (target.deletionPolicy Retain)`;
    }
    if (integrationId) {
      // a failed sync leaves the revision the target reached as it was; a removed copy reflects none
      const reached = fields === REMOVED_COPY ? { syncedRevision: null, targetKeys: null } : {};
      if (fields === REMOVED_COPY) this.#reported.delete(formatNamespacedName(resource.metadata));
      await this.#recordFailedSync(resource, integrationId, reason, { syncMessage: message, ...reached });
    }
    return failed({ reason, message, fields, retry: missed ? { afterMs: 0 } : failure.retry });
  }

  /**
   * A sync that failed for a reason no Failure names (the apiserver unreachable, a bug: retried with backoff) is
   * recorded as failed, so the API and the revision barrier do not show the last success as current. The sentence is
   * fixed: the error's own text can quote data.
   */
  async #recordUnnamedFailure(resource: IntegrationResource, integrationId: string | undefined): Promise<void> {
    if (integrationId) await this.#recordFailedSync(resource, integrationId, 'an error retried with backoff', { syncMessage: UNNAMED_FAILURE_MESSAGE });
  }

  /**
   * Tells the integration record the sync failed. When it cannot be told, the condition and the Event still say it,
   * so the failure path goes on; the record's isSynced and syncMessage lag until a later sync writes them.
   */
  async #recordFailedSync(
    resource: IntegrationResource,
    integrationId: string,
    reason: ConditionReason | 'an error retried with backoff',
    result: Omit<Parameters<IntegrationsPort['recordSyncResult']>[1], 'isSynced'>,
  ): Promise<void> {
    await this.#context.port.integrations
      .recordSyncResult(integrationId, { ...result, isSynced: false })
      .catch((recordError: unknown) => this.#recordNotUpdated(resource, reason, recordError));
  }

  #recordNotUpdated(resource: IntegrationResource, reason: ConditionReason | 'an error retried with backoff', error: unknown): void {
    const { namespace, name } = resource.metadata;
    this.#context.logger.warn(
      { namespace, integration: name, reason, error: describeError(error) },
      `Integration ${namespace}/${name}: could not record the failed sync (${reason}) on its integration record; its condition says it`,
    );
  }

  #upsertRecord(resource: IntegrationResource, projectId: string): Promise<IntegrationRecord> {
    const { identity } = this.#context;
    const { namespace, name, uid } = resource.metadata;
    const expectNew = resource.status?.integrationId === undefined;
    return this.#context.port.integrations.upsert(
      {
        managedBy: formatNamespacedName(resource.metadata),
        cluster: identity.clusterName,
        projectId,
        environment: resource.spec.environment,
        secretPath: resource.spec.secretPath ?? '/',
        app: resource.spec.target.name,
        owner: namespace,
        targetEnvironment: namespace,
        isActive: resource.spec.isActive,
        metadata: { installationId: identity.installationId, cluster: identity.clusterName, namespace, name, ...(uid ? { uid } : {}) },
        reloads: resource.spec.reload !== undefined,
      },
      { expectNew },
    );
  }

  /** Inactive: still indexed by its own place, so the change that reactivates it wakes it up. */
  async #pause(resource: IntegrationResource, record: IntegrationRecord, identity: RecordIdentity, readAt: Revision): Promise<SyncOutcome> {
    const missed = this.#changes.index(
      resource.metadata,
      { projectId: identity.projectId, places: [{ environmentId: record.environmentId, path: record.secretPath, recursive: false }] },
      readAt,
    );
    await this.#context.status.write('Integration', resource, identity, [
      { type: 'Ready', status: 'True', reason: 'Paused', message: `the integration is inactive; ${describeTarget(resource)} is not updated` },
      { type: 'Synced', status: 'False', reason: 'Paused', message: 'sync paused (isActive is false)' },
    ]);
    return { missed };
  }

  /** Reads the sources (once per listing and revision), indexes what they read, writes the target if it differs, and says so in the status. */
  async #sync(
    resource: IntegrationResource,
    projectId: string,
    identity: RecordIdentity,
    latestRevision: Revision,
    progress: { indexed: boolean },
  ): Promise<SyncOutcome> {
    const { port, status, logger } = this.#context;
    const { namespace } = resource.metadata;
    const sources = sourcesOf(resource, projectId);
    const forceSync = resource.metadata.annotations?.[ANNOTATION_FORCE_SYNC];
    const forced = forceSync !== undefined && forceSync !== resource.status?.forceSync;
    // `revision`: the one the listings' data is current at (older than the latest when only integration records changed since)
    const listings = await Promise.all(sources.map(({ source }) => this.#listing(source, latestRevision, forced)));
    const revision = Math.max(...listings.map((listing) => listing.revision));
    const places = placesRead(sources, listings);
    const missed = this.#changes.index(resource.metadata, { projectId, places }, latestRevision);
    progress.indexed = true;
    const { data, skipped, collisions, origins } = await targetDataOf(resource, sources, listings, this.#renderer);
    const keys = Object.keys(data).length;
    logger.debug(
      { namespace, integration: resource.metadata.name, revision, keys, skipped: skipped.length, collisions: collisions.length, forced },
      `Integration ${namespace}/${resource.metadata.name}: ${sources.length === 1 ? 'source' : `${sources.length} sources`} read at revision ${revision} (${keys} keys)`,
    );
    const dataHash = (await this.#dataHasher()).hash(data);
    const { reload, message } = await this.#whileSyncing(resource, dataHash, async () => {
      const outcome = await this.#targets.write(resource, data, revision, dataHash);
      reportWrite(this.#context, resource, outcome, keys, revision, this.#changes.takeChangedAt(resource.metadata));
      reportSkipped(this.#context, resource, skipped);
      reportCollisions(this.#context, resource, collisions);
      this.#context.reloader.noteChangedKeys(resource, outcome.changed);
      const reload = await this.#context.reloader.reconcile(resource, data, revision);
      const message = syncedMessage(keys, skipped, collisions);
      await status.write(
        'Integration',
        resource,
        (current) => ({
          ...identity,
          secretCount: keys,
          dataHash,
          skippedKeys: skipped.length > 0 ? skipped.slice(0, SKIPPED_KEYS_KEPT) : null,
          collisions: collisions.length > 0 ? collisions.slice(0, COLLISIONS_KEPT) : null,
          ...(forceSync !== undefined ? { forceSync } : {}),
          ...syncedFields(current, outcome, revision, this.#changes.lastChangeOf(resource.metadata)),
          ...reloadFields(reload),
        }),
        [
          { type: 'Ready', status: 'True', reason: 'Synced', message },
          skipped.length > 0
            ? {
                type: 'Synced',
                status: 'True',
                reason: 'KeysSkipped',
                message: `${describeTarget(resource)} holds the selected secrets except ${skipped.length} key${skipped.length === 1 ? '' : 's'} that cannot be data keys`,
              }
            : { type: 'Synced', status: 'True', reason: 'Synced', message: `${describeTarget(resource)} holds the selected secrets` },
          ...(reload ? [reload.condition] : []),
        ],
        reload ? [] : ['Reloaded'],
      );
      return { reload, message };
    });
    const targetKeys = targetKeysReport(data, origins, this.#readers?.readersOf(namespace, targetRefOf(resource)));
    const reported = hash('sha256', JSON.stringify([identity.integrationId, targetKeys]), 'base64');
    const reportedBefore = this.#reported.get(formatNamespacedName(resource.metadata)) === reported;
    await port.integrations.recordSyncResult(identity.integrationId, {
      isSynced: true,
      syncMessage: skipped.length > 0 ? message : null,
      syncedRevision: revision,
      places,
      ...(reportedBefore ? {} : { targetKeys }),
    });
    this.#reported.set(formatNamespacedName(resource.metadata), reported);
    if (resource.spec.reload && reload?.reloadedRevision !== undefined) {
      await port.integrations.recordReloadResult(identity.integrationId, { reloadedRevision: reload.reloadedRevision, rolling: reload.rolling });
    }
    return { missed, recheckInMs: reload?.recheckInMs };
  }

  /** Runs `work` (the target's write up to the status naming `dataHash`) with the watch's echo of that write known as this Integration's own (#writersOf). */
  async #whileSyncing<T>(resource: IntegrationResource, dataHash: string, work: () => Promise<T>): Promise<T> {
    const key = formatNamespacedName(resource.metadata);
    this.#syncing.set(key, dataHash);
    try {
      return await work();
    } finally {
      this.#syncing.delete(key);
    }
  }

  /** The data hash keyed by the installation's digest key: without the key nothing is written (the status must not hold an unkeyed hash). */
  async #dataHasher(): Promise<DataHasher> {
    if (this.#hasher) return this.#hasher;
    try {
      this.#hasher = new DataHasher(await this.#context.installationKey.get());
      return this.#hasher;
    } catch (error) {
      this.#context.logger.warn({ error: describeError(error) }, `could not read or make the installation's digest key (Secret ${RELOAD_KEY_SECRET})`);
      throw new NotReadyError(
        'DigestKeyUnavailable',
        `the installation's digest key (Secret ${RELOAD_KEY_SECRET} in the operator's namespace) could not be read or made; nothing was written, and it is tried again`,
        { afterMs: DIGEST_KEY_RETRY_MS },
      );
    }
  }

  /** One source's listing as of `latestRevision`: shared by every Integration reading it, read afresh when forced. */
  async #listing(source: PlannedSource['source'], latestRevision: Revision, forced: boolean): Promise<SecretListing & { revision: Revision }> {
    // a forced sync reads past every listing kept here and in the server, so it repairs what bypassed the change log
    return this.#changes.listing(listingKeyOf(source), latestRevision, () => this.#context.port.secrets.list(source, { fresh: forced }), forced);
  }

  /**
   * A source that does not exist (yet): every source is indexed by its own
   * place, so that creating the missing one wakes the Integration at once
   * (`missed` if it was created since `readAt`, before the index had it), and
   * what is missing named. Without its project, or a source's environment, it
   * is only retried.
   */
  async #indexOwnPlace(resource: IntegrationResource, readAt: Revision): Promise<{ missed: boolean; missing?: 'EnvironmentNotFound' | 'FolderNotFound' }> {
    let sources: PlannedSource[];
    try {
      const { projectId } = await resolveProject(this.#context, resource.metadata.namespace, resource.spec);
      sources = sourcesOf(resource, projectId);
    } catch (error) {
      // the failure being reported stands; this one only means there is no place to index yet
      this.#context.logger.debug(
        { namespace: resource.metadata.namespace, integration: resource.metadata.name, error: describeError(error) },
        `Integration ${formatNamespacedName(resource.metadata)}: its project did not resolve while indexing its own place; it is retried`,
      );
      this.#changes.unindex(resource.metadata);
      return { missed: false };
    }
    const places: ReadPlace[] = [];
    for (const { source } of sources) {
      const environment = await this.#context.port.projects.environmentBySlug(source.projectId, source.environment).catch(ignoreCofferNotFound);
      if (!environment) {
        this.#changes.unindex(resource.metadata);
        return { missed: false, missing: 'EnvironmentNotFound' };
      }
      places.push({ environmentId: environment.id, path: source.path, recursive: source.recursive });
    }
    const missed = this.#changes.index(resource.metadata, { projectId: sources[0]!.source.projectId, places }, readAt);
    return { missed, missing: 'FolderNotFound' };
  }

  /** The record goes, and the target as its creationPolicy says (Owner: deleted; Merge: this Integration's keys removed; Orphan: kept). */
  async finalize(resource: IntegrationResource): Promise<void> {
    this.forget(objectKey('Integration', resource.metadata));
    await this.#context.port.integrations.delete(this.#context.identity.clusterName, formatNamespacedName(resource.metadata));
    await this.#targets.release(resource);
  }

  /** An Event on the Integration naming the rotation and its phase (never a value). */
  #tellRotation({ integration, rotation, revision }: RotationReached): void {
    const resource = this.informer.get(integration.name, integration.namespace);
    if (!resource) return;
    const { type, says } = ROTATION_PHASE_EVENTS[rotation.phase];
    this.#context.events.record(resource, type, 'SecretRotation', `secret rotation ${rotation.rotation} ${says} (revision ${revision})`);
  }

  /**
   * The Integrations that write a Secret or ConfigMap: the ones in its namespace that target its kind and name;
   * on an update, not the one whose own sync the object holds as written (the watch's echo of its write).
   */
  #writersOf(kind: TargetKind, object: KubernetesObject, verb: 'update' | 'delete'): ObjectKey[] {
    const { namespace, name } = object.metadata ?? {};
    if (!name) return [];
    const writers = this.#writerResources(namespace, [targetRef(kind, name)]);
    const hasher = this.#hasher;
    if (verb === 'delete' || !hasher) return keysOf(writers);
    const { identity, status } = this.#context;
    const echoOf = (resource: IntegrationResource) =>
      holdsOwnSync({ ...object, kind }, resource, identity.installationId, hasher, [
        status.current('Integration', resource).dataHash,
        this.#syncing.get(formatNamespacedName(resource.metadata)),
      ]);
    return keysOf(writers.filter((resource) => !echoOf(resource)));
  }

  /** The Integrations of `namespace` that write one of `targets`. */
  #writersOfTargets(namespace: string | undefined, targets: readonly TargetRef[]): ObjectKey[] {
    return keysOf(this.#writerResources(namespace, targets));
  }

  #writerResources(namespace: string | undefined, targets: readonly TargetRef[]): IntegrationResource[] {
    if (!namespace || targets.length === 0) return [];
    const wanted = new Set(targets);
    return this.informer.list(namespace).filter((resource) => wanted.has(targetRefOf(resource)));
  }

  /** The Integrations committed changes touch: through what they read, or a grant on their project given or revoked. */
  *#affectedBy(changes: readonly Change[]): Iterable<ObjectKey> {
    const { projects } = this.#context.informers;
    for (const routed of this.#changes.route(changes)) {
      if ('access' in routed) {
        for (const project of projects.list().filter((resource) => resource.status?.projectId === routed.access)) yield* keysOf(this.#projectUsers.of(project));
      } else if ('rotation' in routed) {
        this.#tellRotation(routed);
      } else {
        yield objectKey('Integration', routed);
      }
    }
  }
}

/** Every place the sources read: each source (recursive ones with what lies below) and each folder read through imports and references. */
function placesRead(sources: readonly PlannedSource[], listings: readonly SecretListing[]): ReadPlace[] {
  return sources.flatMap(({ source }, index) => {
    const listing = listings[index]!;
    const own = { environmentId: listing.environmentId, path: source.path, recursive: source.recursive };
    return [own, ...listing.reads.map((read) => ({ ...read, recursive: false }))];
  });
}

function targetRefOf(resource: IntegrationResource): TargetRef {
  return targetRef(targetKindOf(resource), resource.spec.target.name);
}

/** The status fields a reload check sets: how far it got, and the last rollout. */
function reloadFields(reload: ReloadReport | undefined): Record<string, unknown> {
  if (!reload) return { reloadedRevision: null };
  return {
    ...(reload.reloadedRevision !== undefined ? { reloadedRevision: reload.reloadedRevision } : {}),
    ...(reload.lastRollout ? { lastRollout: reload.lastRollout } : {}),
  };
}

function keysOf(resources: readonly IntegrationResource[]): ObjectKey[] {
  return resources.map((resource) => keyOf('Integration', resource));
}
