import type { V1Secret } from '@kubernetes/client-node';
import { normalizeSecretPath } from '../../../folders/secret-path.ts';
import type { Change, IntegrationRecord, Revision } from '../../port/coffer-port.ts';
import { ANNOTATION_INTEGRATION, type IntegrationResource, type SecretsProject } from '../../resources.ts';
import { type Controller, done, failed, type ReconcileResult, requeueAfter, type Watches } from '../../runtime/controller.ts';
import type { CachedInformer } from '../../runtime/informers.ts';
import { formatNamespacedName, keyOf, type ObjectKey, objectKey, parseNamespacedName } from '../../runtime/object-key.ts';
import type { ControllerContext } from '../context.ts';
import { isNotFound, toFailure } from '../failures.ts';
import { mayReconcile } from '../installation-guard.ts';
import { resolveProject, usesProject } from '../project-resolution.ts';
import { DependencyIndex } from './dependency-index.ts';
import { ListingCache } from './listing-cache.ts';
import { dataHash, resolveSecretData } from './managed-secret.ts';
import { TargetSecret } from './target-secret.ts';

/** What the status names of the record and project an Integration syncs from. */
type RecordIdentity = {
  integrationId: string;
  projectId: string;
  projectSlug: string;
};

/** A sync is done; `missed`: a change came before the index had the Integration, so it runs again. */
interface SyncOutcome {
  missed: boolean;
}

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
  readonly #dependencies = new DependencyIndex();
  readonly #listings: ListingCache;
  readonly #secrets: TargetSecret;

  constructor(context: ControllerContext) {
    this.#context = context;
    this.informer = context.informers.integrations;
    // The operator's own integration-record writes alter no listing.
    this.#listings = new ListingCache((revision) => context.port.changes.isOwnWrite(revision));
    this.#secrets = new TargetSecret(context);
  }

  /** Leadership starts at `revision`: listings read before it are not trusted. */
  startAt(revision: Revision): void {
    this.#listings.reset(revision);
  }

  setup(watches: Watches): void {
    const { informers } = this.#context;
    watches.informer(informers.managedSecrets, (secret) => ownerOf(secret), ['update', 'delete']);
    watches.informer(informers.projects, (project) => this.#usersOf(project));
    watches.changes((changes) => this.#affectedBy(changes));
  }

  forget(key: ObjectKey): void {
    this.#dependencies.delete(key);
  }

  async reconcile(resource: IntegrationResource): Promise<ReconcileResult> {
    const context = this.#context;
    if (!(await mayReconcile(context, 'Integration', resource))) return done();
    if (resource.metadata.deletionTimestamp) return this.#finalize(resource);
    await context.status.ensureFinalizer('Integration', resource);
    let integrationId = resource.status?.integrationId;
    let readAt: Revision | undefined;
    try {
      // everything read below is at least this current; changes after it reach the Integration once it is indexed
      readAt = await context.port.changes.latestRevision();
      const project = await resolveProject(context, resource.metadata.namespace, resource.spec);
      const record = await this.#upsertRecord(resource, project.projectId);
      integrationId = record.id;
      const identity = { integrationId: record.id, projectId: project.projectId, projectSlug: project.slug };
      const { missed } = (resource.spec.isActive ?? record.isActive) ? await this.#sync(resource, project.projectId, identity, readAt) : await this.#pause(resource, record, identity, readAt);
      return missed ? requeueAfter(0) : done();
    } catch (error) {
      const failure = toFailure(error, 'NotFound');
      if (!failure) throw error;
      let missed = false;
      if (isNotFound(error) && readAt !== undefined) missed = await this.#indexOwnPlace(resource, readAt);
      else this.#dependencies.delete(resource.metadata);
      if (integrationId) await context.port.integrations.recordSyncResult(integrationId, { isSynced: false, syncMessage: failure.message, syncedRevision: null }).catch(() => {});
      return failed(missed ? { ...failure, retry: { afterMs: 0 } } : failure);
    }
  }

  #upsertRecord(resource: IntegrationResource, projectId: string): Promise<IntegrationRecord> {
    const { identity } = this.#context;
    const { namespace, name, uid } = resource.metadata;
    return this.#context.port.integrations.upsert({
      managedBy: formatNamespacedName(resource.metadata),
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
    const missed = this.#dependencies.set(resource.metadata, { projectId: identity.projectId, environmentId: record.environmentId, path: record.secretPath, recursive: false, reads: [] }, readAt);
    await this.#context.status.write('Integration', resource, identity, [
      { type: 'Ready', status: 'True', reason: 'Paused', message: 'the integration is inactive; the Secret is not updated' },
      { type: 'Synced', status: 'False', reason: 'Paused', message: 'sync paused (isActive is false)' },
    ]);
    return { missed };
  }

  /** Reads the source (once per listing and revision), indexes what it read, writes the Secret if it differs, and says so in the status. */
  async #sync(resource: IntegrationResource, projectId: string, identity: RecordIdentity, latestRevision: Revision): Promise<SyncOutcome> {
    const { port, status, logger } = this.#context;
    const source = {
      projectId,
      environment: resource.spec.environment,
      path: normalizeSecretPath(resource.spec.secretPath ?? '/'),
      recursive: resource.spec.recursive ?? false,
      includeImports: resource.spec.includeImports ?? true,
    };
    // `revision`: the one the listing's data is current at (older than the latest when only integration records changed since)
    const { data, skipped, environmentId, reads, revision } = await this.#listings.get(JSON.stringify(source), latestRevision, async () => {
      const listing = await port.secrets.list(source);
      return { ...resolveSecretData(listing), environmentId: listing.environmentId, reads: listing.reads };
    });
    const missed = this.#dependencies.set(resource.metadata, { projectId, environmentId, path: source.path, recursive: source.recursive, reads }, latestRevision);
    const written = await this.#secrets.applyIfChanged(resource, data, revision);
    if (!written) logger.debug({ namespace: resource.metadata.namespace, name: resource.spec.target.name, revision }, 'Secret unchanged; nothing written');
    const keys = Object.keys(data).length;
    const message = skipped.length > 0 ? `${keys} keys synced; skipped keys that are not valid Secret keys: ${skipped.join(', ')}` : `${keys} keys synced`;
    await status.write(
      'Integration',
      resource,
      { ...identity, secretCount: keys, dataHash: dataHash(data), ...(written || !resource.status?.syncedRevision ? { syncedRevision: revision, lastSyncTime: new Date().toISOString() } : {}) },
      [
        { type: 'Ready', status: 'True', reason: 'Synced', message },
        { type: 'Synced', status: 'True', reason: 'Synced', message: `Secret '${resource.spec.target.name}' holds the project's secrets` },
      ],
    );
    await port.integrations.recordSyncResult(identity.integrationId, { isSynced: true, syncMessage: null, syncedRevision: revision });
    return { missed };
  }

  /**
   * A source folder that does not exist (yet): indexed by its own place, so that
   * creating the folder wakes the Integration at once (true if it was created
   * since `readAt`, before the index had it). Without its project or
   * environment it is only retried.
   */
  async #indexOwnPlace(resource: IntegrationResource, readAt: Revision): Promise<boolean> {
    try {
      const { projectId } = await resolveProject(this.#context, resource.metadata.namespace, resource.spec);
      const environment = await this.#context.port.projects.environmentBySlug(projectId, resource.spec.environment);
      const path = normalizeSecretPath(resource.spec.secretPath ?? '/');
      return this.#dependencies.set(resource.metadata, { projectId, environmentId: environment.id, path, recursive: resource.spec.recursive ?? false, reads: [] }, readAt);
    } catch {
      this.#dependencies.delete(resource.metadata);
      return false;
    }
  }

  async #finalize(resource: IntegrationResource): Promise<ReconcileResult> {
    this.#dependencies.delete(resource.metadata);
    await this.#context.port.integrations.delete(formatNamespacedName(resource.metadata));
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

  /** The Integrations committed changes touch: through what they read, or a grant on their project given or revoked. */
  *#affectedBy(changes: readonly Change[]): Iterable<ObjectKey> {
    this.#listings.observe(changes);
    const { informers, logger } = this.#context;
    for (const change of changes) {
      // the reconcile that wrote an integration record of its own is already at work on it
      if (change.kind === 'integration' && change.ownWrite) continue;
      if (change.kind === 'tags') continue;
      if (change.kind === 'access') {
        for (const project of informers.projects.list().filter((resource) => resource.status?.projectId === change.projectId)) yield* this.#usersOf(project);
        continue;
      }
      this.#dependencies.observe(change);
      const affected = this.#dependencies.affected(change);
      logger.debug(
        { revision: change.revision, change: change.kind, projectId: change.projectId, environment: change.environmentSlug, secretPath: change.secretPath, integrations: affected.map(formatNamespacedName) },
        `change ${change.revision} (${change.kind}) affects ${affected.length} Integration${affected.length === 1 ? '' : 's'}`,
      );
      for (const key of affected) yield objectKey('Integration', key);
    }
  }
}

/** The Integration a managed Secret names as its writer. */
function ownerOf(secret: V1Secret): ObjectKey[] {
  const owner = secret.metadata?.annotations?.[ANNOTATION_INTEGRATION];
  const name = owner ? parseNamespacedName(owner) : undefined;
  return name ? [objectKey('Integration', name)] : [];
}
