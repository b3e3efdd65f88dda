import type { V1Secret } from '@kubernetes/client-node';
import { normalizeSecretPath } from '../../../folders/secret-path.ts';
import type { Change, IntegrationRecord, Revision } from '../../port/coffer-port.ts';
import { ANNOTATION_FORCE_SYNC, type IntegrationResource, type SecretsProject } from '../../resources.ts';
import { type Controller, done, type Failure, failed, type ReconcileResult, requeueAfter, type Watches } from '../../runtime/controller.ts';
import type { CachedInformer } from '../../runtime/informers.ts';
import { formatNamespacedName, keyOf, type ObjectKey, objectKey } from '../../runtime/object-key.ts';
import type { ControllerContext } from '../context.ts';
import { ignoreNotFound, isNotFound, toFailure } from '../failures.ts';
import { mayReconcile } from '../installation-guard.ts';
import { resolveProject, usesProject } from '../project-resolution.ts';
import { ChangeRouter } from './change-router.ts';
import { dataHash, resolveSecretData } from './managed-secret.ts';
import { reportSkipped, reportWrite, SKIPPED_KEYS_KEPT, syncedMessage } from './sync-report.ts';
import { TargetSecret } from './target-secret.ts';

/** What the status names of the record and project an Integration syncs from. */
type RecordIdentity = {
  integrationId: string;
  projectId: string;
  projectSlug: string;
};

/**
 * A sync is done; `missed`: a change came before the index had the
 * Integration, so it runs again; `recheckInMs`: its read may not have seen a
 * folder, environment or import changed a moment ago, so it reads again then.
 */
interface SyncOutcome {
  missed: boolean;
  recheckInMs?: number;
}

/** Refusals that mean this namespace may no longer read the project: the copy goes. */
const ACCESS_REVOKED: ReadonlySet<string> = new Set(['GrantRevoked', 'Forbidden']);
/** Failures that mean the whole source was deleted in Coffer: the Secret keeps its last data unless target.deletionPolicy is Delete. */
const SOURCE_DELETED: ReadonlySet<string> = new Set(['ProjectDeleted', 'EnvironmentNotFound', 'FolderNotFound']);
/** What the status no longer says once the copy is removed. */
const REMOVED_COPY = { dataHash: null, secretCount: null, syncedRevision: null, skippedKeys: null };

/**
 * Integration → an integration record in Coffer and a native Secret holding
 * the resolved plain secrets, written only when its content differs. Woken
 * by the changes that touch what it read (the dependency index), by its
 * Secret being edited or deleted, and by its SecretsProject.
 */
export class IntegrationController implements Controller<IntegrationResource> {
  readonly kind = 'Integration';
  readonly failureConditions = ['Ready', 'Synced'] as const;
  readonly informer: CachedInformer<IntegrationResource>;
  readonly #context: ControllerContext;
  readonly #changes: ChangeRouter;
  readonly #secrets: TargetSecret;

  constructor(context: ControllerContext) {
    this.#context = context;
    this.informer = context.informers.integrations;
    const { changes, secrets } = context.port;
    this.#changes = new ChangeRouter({ logger: context.logger, isOwnWrite: (revision) => changes.isOwnWrite(revision), structureLagMs: secrets.structureLagMs });
    this.#secrets = new TargetSecret(context);
  }

  /** Leadership starts at `revision`: listings read before it are not trusted. */
  startAt(revision: Revision): void {
    this.#changes.startAt(revision);
  }

  setup(watches: Watches): void {
    const { informers } = this.#context;
    watches.informer(informers.managedSecrets, (secret) => this.#writersOf(secret), ['update', 'delete']);
    watches.informer(informers.projects, (project) => this.#usersOf(project));
    watches.changes((changes) => this.#affectedBy(changes));
  }

  forget(key: ObjectKey): void {
    this.#changes.forget(key);
  }

  async reconcile(resource: IntegrationResource): Promise<ReconcileResult> {
    const context = this.#context;
    if (!(await mayReconcile(context, 'Integration', resource))) return done();
    if (resource.metadata.deletionTimestamp) return this.#finalize(resource);
    await context.status.ensureFinalizer('Integration', resource);
    let integrationId = resource.status?.integrationId;
    // read first inside the try: an unreachable Coffer is a failure like any other (CofferUnavailable)
    let readAt: Revision | undefined;
    const progress = { indexed: false };
    try {
      // everything read below is at least this current; changes after it reach the Integration once it is indexed
      readAt = await context.port.changes.latestRevision();
      const project = await resolveProject(context, resource.metadata.namespace, resource.spec);
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
      const failure = toFailure(error, 'NotFound');
      if (!failure) throw error;
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
    if (isNotFound(error) && readAt !== undefined) {
      const place = await this.#indexOwnPlace(resource, readAt);
      missed = place.missed;
      reason = place.missing ?? reason;
    } else if (!indexed) {
      this.#changes.unindex(resource.metadata);
    }
    const name = resource.spec.target.name;
    const merge = resource.spec.target.creationPolicy === 'Merge';
    let message = failure.message;
    let fields: Record<string, unknown> | undefined;
    // the message states what holds while the failure stands (the same on every retry), not what this one did
    if (ACCESS_REVOKED.has(reason)) {
      await this.#secrets.remove(resource);
      message += merge
        ? `; Coffer removes this Integration's keys from Secret '${name}' (no copy stays where access is revoked)`
        : `; Coffer deletes Secret '${name}' (no copy stays where access is revoked)`;
      fields = REMOVED_COPY;
    } else if (SOURCE_DELETED.has(reason) && resource.spec.target.deletionPolicy === 'Delete') {
      await this.#secrets.remove(resource);
      message += merge
        ? `; this Integration's keys are removed from Secret '${name}' (target.deletionPolicy Delete)`
        : `; Secret '${name}' is deleted (target.deletionPolicy Delete)`;
      fields = REMOVED_COPY;
    } else if (SOURCE_DELETED.has(reason)) {
      message += `; Secret '${name}' keeps its last data (target.deletionPolicy Retain)`;
    }
    if (integrationId)
      await this.#context.port.integrations.recordSyncResult(integrationId, { isSynced: false, syncMessage: message, syncedRevision: null }).catch(() => {});
    return failed({ reason, message, fields, retry: missed ? { afterMs: 0 } : failure.retry });
  }

  #upsertRecord(resource: IntegrationResource, projectId: string): Promise<IntegrationRecord> {
    const { identity } = this.#context;
    const { namespace, name, uid } = resource.metadata;
    return this.#context.port.integrations.upsert({
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
    });
  }

  /** Inactive: still indexed by its own place, so the change that reactivates it wakes it up. */
  async #pause(resource: IntegrationResource, record: IntegrationRecord, identity: RecordIdentity, readAt: Revision): Promise<SyncOutcome> {
    const missed = this.#changes.index(
      resource.metadata,
      { projectId: identity.projectId, environmentId: record.environmentId, path: record.secretPath, recursive: false, reads: [] },
      readAt,
    );
    await this.#context.status.write('Integration', resource, identity, [
      { type: 'Ready', status: 'True', reason: 'Paused', message: 'the integration is inactive; the Secret is not updated' },
      { type: 'Synced', status: 'False', reason: 'Paused', message: 'sync paused (isActive is false)' },
    ]);
    return { missed };
  }

  /** Reads the source (once per listing and revision), indexes what it read, writes the Secret if it differs, and says so in the status. */
  async #sync(
    resource: IntegrationResource,
    projectId: string,
    identity: RecordIdentity,
    latestRevision: Revision,
    progress: { indexed: boolean },
  ): Promise<SyncOutcome> {
    const { port, status, logger } = this.#context;
    const { namespace } = resource.metadata;
    const source = {
      projectId,
      environment: resource.spec.environment,
      path: normalizeSecretPath(resource.spec.secretPath ?? '/'),
      recursive: resource.spec.recursive ?? false,
      includeImports: resource.spec.includeImports ?? true,
    };
    const forceSync = resource.metadata.annotations?.[ANNOTATION_FORCE_SYNC];
    const forced = forceSync !== undefined && forceSync !== resource.status?.forceSync;
    const read = async () => {
      const listing = await port.secrets.list(source);
      return { ...resolveSecretData(listing), environmentId: listing.environmentId, reads: listing.reads };
    };
    // `revision`: the one the listing's data is current at (older than the latest when only integration records changed since)
    const listingKey = JSON.stringify(source);
    const { data, skipped, environmentId, reads, revision } = forced
      ? { ...(await read()), revision: latestRevision }
      : await this.#changes.listing(listingKey, latestRevision, read);
    const recheckInMs = this.#changes.recheckAfterStructureChange(projectId, listingKey);
    const keys = Object.keys(data).length;
    logger.debug(
      { namespace, integration: resource.metadata.name, revision, keys, skipped: skipped.length, forced },
      `Integration ${namespace}/${resource.metadata.name}: source read at revision ${revision} (${keys} keys)`,
    );
    const missed = this.#changes.index(resource.metadata, { projectId, environmentId, path: source.path, recursive: source.recursive, reads }, latestRevision);
    progress.indexed = true;
    const outcome = await this.#secrets.write(resource, data, revision);
    reportWrite(this.#context, resource, outcome, keys, revision, this.#changes.takeChangedAt(resource.metadata));
    reportSkipped(this.#context, resource, skipped);
    const message = syncedMessage(keys, skipped);
    const written = outcome.kind !== 'unchanged';
    await status.write(
      'Integration',
      resource,
      {
        ...identity,
        secretCount: keys,
        dataHash: dataHash(data),
        skippedKeys: skipped.length > 0 ? skipped.slice(0, SKIPPED_KEYS_KEPT) : null,
        ...(forceSync !== undefined ? { forceSync } : {}),
        ...(written || !resource.status?.syncedRevision ? { syncedRevision: revision, lastSyncTime: new Date().toISOString() } : {}),
      },
      [
        { type: 'Ready', status: 'True', reason: 'Synced', message },
        skipped.length > 0
          ? {
              type: 'Synced',
              status: 'True',
              reason: 'KeysSkipped',
              message: `Secret '${resource.spec.target.name}' holds the project's secrets except ${skipped.length} key${skipped.length === 1 ? '' : 's'} that cannot be Secret keys`,
            }
          : { type: 'Synced', status: 'True', reason: 'Synced', message: `Secret '${resource.spec.target.name}' holds the project's secrets` },
      ],
    );
    await port.integrations.recordSyncResult(identity.integrationId, { isSynced: true, syncMessage: skipped.length > 0 ? message : null, syncedRevision: revision });
    return { missed, recheckInMs };
  }

  /**
   * A source that does not exist (yet): indexed by its own place, so that
   * creating it wakes the Integration at once (`missed` if it was created
   * since `readAt`, before the index had it), and what is missing named.
   * Without its project or environment it is only retried.
   */
  async #indexOwnPlace(resource: IntegrationResource, readAt: Revision): Promise<{ missed: boolean; missing?: 'EnvironmentNotFound' | 'FolderNotFound' }> {
    let projectId: string;
    try {
      ({ projectId } = await resolveProject(this.#context, resource.metadata.namespace, resource.spec));
    } catch {
      this.#changes.unindex(resource.metadata);
      return { missed: false };
    }
    const path = normalizeSecretPath(resource.spec.secretPath ?? '/');
    const environment = await this.#context.port.projects.environmentBySlug(projectId, resource.spec.environment).catch(ignoreNotFound);
    if (!environment) {
      this.#changes.unindex(resource.metadata);
      return { missed: false, missing: 'EnvironmentNotFound' };
    }
    const missed = this.#changes.index(
      resource.metadata,
      { projectId, environmentId: environment.id, path, recursive: resource.spec.recursive ?? false, reads: [] },
      readAt,
    );
    return { missed, missing: 'FolderNotFound' };
  }

  async #finalize(resource: IntegrationResource): Promise<ReconcileResult> {
    this.forget(objectKey('Integration', resource.metadata));
    await this.#context.port.integrations.delete(this.#context.identity.clusterName, formatNamespacedName(resource.metadata));
    await this.#secrets.release(resource);
    await this.#context.status.removeFinalizer('Integration', resource);
    return done();
  }

  #usersOf(project: SecretsProject): ObjectKey[] {
    return this.informer
      .list()
      .filter((resource) => usesProject(project, resource))
      .map((resource) => keyOf('Integration', resource));
  }

  /** The Integrations that write a Secret: the ones in its namespace that target its name. */
  #writersOf(secret: V1Secret): ObjectKey[] {
    const { namespace, name } = secret.metadata ?? {};
    if (!namespace || !name) return [];
    return this.informer
      .list(namespace)
      .filter((resource) => resource.spec.target.name === name)
      .map((resource) => keyOf('Integration', resource));
  }

  /** The Integrations committed changes touch: through what they read, or a grant on their project given or revoked. */
  *#affectedBy(changes: readonly Change[]): Iterable<ObjectKey> {
    const { projects } = this.#context.informers;
    for (const routed of this.#changes.route(changes)) {
      if ('access' in routed) {
        for (const project of projects.list().filter((resource) => resource.status?.projectId === routed.access)) yield* this.#usersOf(project);
      } else {
        yield objectKey('Integration', routed);
      }
    }
  }
}
