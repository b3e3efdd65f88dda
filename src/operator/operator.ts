import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Actor } from '../actor/actor.ts';
import type { ChangeRecord } from '../changes/change-feed.ts';
import { ChangeSubscriber } from '../changes/change-subscriber.ts';
import { ensureServiceIdentity } from '../identities/service-identity.ts';
import { installationIdOf } from '../installation/installation-service.ts';
import { findSingleOrganization } from '../orgs/org-lookup.ts';
import type { Services } from '../services/container.ts';
import type { OperatorContext } from './context.ts';
import { DependencyIndex } from './dependency-index.ts';
import { EventRecorder } from './event-recorder.ts';
import { createInformers, type OperatorInformers, startInformer } from './informers.ts';
import { ConflictReports } from './installation-guard.ts';
import { reconcileIntegration } from './integration-reconciler.ts';
import { KubeApi } from './kube-api.ts';
import { ListingCache } from './listing-cache.ts';
import { LeaderElector } from './leader-election.ts';
import type { OperatorMetrics } from './metrics.ts';
import { dependentsOf } from './project-resolution.ts';
import { ANNOTATION_INTEGRATION, FINALIZER, type KindName, resourceKey, splitKey } from './resources.ts';
import { reconcileSecretImport } from './secret-import-reconciler.ts';
import { reconcileSecretsProject } from './secrets-project-reconciler.ts';
import { WorkQueue } from './work-queue.ts';

export const OPERATOR_IDENTITY_NAME = 'coffer-operator';

export interface OperatorOptions {
  kubeConfig: KubeConfig;
  version: string;
  /** Namespace of the leader-election Lease. */
  leaseNamespace: string;
  /** This replica's name in the Lease. */
  replicaName: string;
  leaderElection: boolean;
  /** Watch one namespace only; all when unset. */
  watchNamespace?: string;
  /** Organization slug; the only organization when unset. */
  organization?: string;
  /** The cluster as this operator names itself: what namespace grants name. */
  clusterName: string;
  resyncIntervalMs: number;
  concurrency: number;
  metrics?: OperatorMetrics;
}

/**
 * The in-process operator: informers on the three kinds and on managed
 * Secrets, a work queue, the change feed for instant sync, a periodic full
 * resync, and leader election so that one replica reconciles at a time.
 */
export class Operator {
  readonly #services: Services;
  readonly #logger: Logger;
  readonly #options: OperatorOptions;
  readonly #kube: KubeApi;
  readonly #dependencies = new DependencyIndex();
  readonly #listings: ListingCache;
  readonly #events: EventRecorder;
  readonly #seen = new Map<string, { generation?: number; deletion: string | null; finalized: boolean }>();
  #informers: OperatorInformers | null = null;
  #context: OperatorContext | null = null;
  #queue: WorkQueue | null = null;
  #subscriber: ChangeSubscriber | null = null;
  #elector: LeaderElector | null = null;
  #resyncTimer: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(services: Services, logger: Logger, options: OperatorOptions) {
    this.#services = services;
    this.#logger = logger.child({ component: 'operator' });
    this.#options = options;
    // Quiet changes are this operator's own integration-record writes (they alter no listing).
    this.#listings = new ListingCache((revision) => services.changes.recordedQuietly(revision));
    this.#kube = new KubeApi(options.kubeConfig, (verb, resource) => options.metrics?.kubeRequest(verb, resource));
    this.#events = new EventRecorder({
      send: ({ object, type, reason, message }) => this.#kube.recordEvent(object, type, reason, message),
      onDropped: (type, cause) => options.metrics?.eventDropped(type, cause),
    });
  }

  /** Waits for an organization (bootstrap), then runs until stop(). */
  async start(): Promise<void> {
    const actor = await this.#operatorActor();
    if (!actor) return;
    const installationId = await installationIdOf(this.#services.db);
    this.#logStart(installationId);
    const informers = createInformers(this.#kube, this.#options.watchNamespace);
    this.#informers = informers;
    const context: OperatorContext = {
      services: this.#services,
      kube: this.#kube,
      actor,
      logger: this.#logger,
      projects: informers.projects,
      imports: informers.imports,
      integrations: informers.integrations,
      managedSecrets: informers.managedSecrets,
      dependencies: this.#dependencies,
      listings: this.#listings,
      events: this.#events,
      installationId,
      clusterName: this.#options.clusterName,
      conflicts: new ConflictReports(),
    };
    this.#context = context;
    this.#queue = new WorkQueue({
      concurrency: this.#options.concurrency,
      handler: (key) => this.#reconcile(context, key),
      // Integrations and imports need their SecretsProject reconciled (its status) first.
      isUrgent: (key) => key.startsWith('SecretsProject:'),
      onError: (key, error, retryInMs) => {
        this.#options.metrics?.reconciled(key.slice(0, key.indexOf(':')), 'error');
        this.#logger.warn({ key, err: error, retryInMs }, 'reconcile failed; retrying');
      },
    });
    const queue = this.#queue;
    this.#options.metrics?.observeQueue(() => queue.pending);
    this.#watch(context, informers);
    const isStopped = () => this.#stopped;
    await Promise.all([
      startInformer(informers.projects, 'secretsprojects', this.#logger, isStopped),
      startInformer(informers.imports, 'secretimports', this.#logger, isStopped),
      startInformer(informers.integrations, 'integrations', this.#logger, isStopped),
      startInformer(informers.managedSecrets, 'secrets', this.#logger, isStopped),
    ]);
    this.#reportForeignResources(informers, installationId);
    if (!this.#options.leaderElection) {
      this.#logger.info('leader election off: this replica reconciles');
      return this.#startLeading();
    }
    this.#elector = new LeaderElector(this.#kube, this.#logger, {
      namespace: this.#options.leaseNamespace,
      name: 'coffer-operator',
      identity: `${installationId}_${this.#options.replicaName}`,
      installationId,
      onForeignLease: (lease, other) => {
        const message = `the Lease is held by Coffer installation ${other}; this installation (${installationId}) does not run the operator in this cluster`;
        this.#logger.warn({ otherInstallation: other, installationId, lease: `${this.#options.leaseNamespace}/coffer-operator`, holder: lease.spec?.holderIdentity }, message);
        this.#events.record(lease as KubernetesObject, 'Warning', 'InstallationConflict', message);
      },
      onStartedLeading: () => this.#startLeading(),
      onStoppedLeading: () => this.#stopLeading(),
    });
    this.#elector.start();
  }

  /** Which cluster and namespaces this operator acts on, and as which installation. */
  #logStart(installationId: string): void {
    const config = this.#options.kubeConfig;
    this.#logger.info(
      {
        cluster: this.#options.clusterName,
        server: config.getCurrentCluster()?.server,
        context: config.getCurrentContext(),
        namespaces: this.#options.watchNamespace ?? 'all',
        lease: `${this.#options.leaseNamespace}/coffer-operator`,
        installationId,
      },
      `operator starting for cluster '${this.#options.clusterName}' (${config.getCurrentCluster()?.server}), ${this.#options.watchNamespace ? `namespace ${this.#options.watchNamespace}` : 'all namespaces'}, as installation ${installationId}`,
    );
  }

  /** At start: names every other installation whose resources are in this cluster (they are left alone). */
  #reportForeignResources(informers: OperatorInformers, installationId: string): void {
    const others = new Map<string, number>();
    for (const informer of [informers.projects, informers.imports, informers.integrations] as const) {
      for (const resource of informer.list() as readonly { status?: { installationId?: string } }[]) {
        const other = resource.status?.installationId;
        if (other && other !== installationId) others.set(other, (others.get(other) ?? 0) + 1);
      }
    }
    for (const [other, count] of others) {
      this.#logger.warn({ otherInstallation: other, installationId, resources: count }, `${count} Coffer resource(s) in this cluster are managed by installation ${other}; this installation leaves them alone and writes nothing to them`);
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#elector) await this.#elector.stop();
    else await this.#stopLeading();
    // Events still waiting get a moment to be posted (best-effort, as ever).
    await Promise.race([this.#events.idle(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    await Promise.all(Object.values(this.#informers ?? {}).map((informer) => informer.stop().catch(() => {})));
  }

  /** Enqueues every resource: at start of leadership and every resync interval. */
  resyncAll(): void {
    const informers = this.#informers;
    if (!informers || !this.#queue) return;
    for (const [kind, informer] of [['SecretsProject', informers.projects], ['SecretImport', informers.imports], ['Integration', informers.integrations]] as const) {
      for (const resource of informer.list()) this.#enqueue(kind, resource);
    }
  }

  async #startLeading(): Promise<void> {
    if (this.#stopped) return;
    const after = await this.#whenDatabaseAnswers('read the change log', () => this.#services.changes.latestRevision(this.#services.db));
    if (after === undefined) return;
    this.#listings.reset(after);
    this.#queue!.start();
    this.#subscriber = new ChangeSubscriber(this.#services.database, this.#services.changes, {
      after,
      onChanges: async (changes) => this.#onChanges(changes),
      onError: (error) => this.#logger.warn({ err: error }, 'change feed read failed'),
    });
    await this.#subscriber.start();
    this.resyncAll();
    this.#resyncTimer = setInterval(() => this.resyncAll(), this.#options.resyncIntervalMs);
    this.#resyncTimer.unref();
  }

  async #stopLeading(): Promise<void> {
    if (this.#resyncTimer) clearInterval(this.#resyncTimer);
    await this.#subscriber?.stop();
    this.#subscriber = null;
    await this.#queue?.stop();
  }

  async #onChanges(changes: ChangeRecord[]): Promise<void> {
    this.#listings.observe(changes);
    for (const change of changes) {
      // The reconciler that wrote an integration record of its own is already at work on it.
      if (change.kind === 'integration' && this.#services.changes.isQuiet(change.revision)) continue;
      if (change.kind === 'tags') continue;
      if (change.kind === 'access') {
        // a grant given or revoked: SecretsProjects waiting for one, and everything using this project, decide again
        for (const project of this.#informers!.projects.list()) this.#enqueue('SecretsProject', project);
        for (const project of this.#informers!.projects.list().filter((resource) => resource.status?.projectId === change.projectId)) {
          const dependents = dependentsOf(this.#context!, project);
          for (const key of dependents.integrations) this.#queue!.add(`Integration:${key}`);
          for (const key of dependents.imports) this.#queue!.add(`SecretImport:${key}`);
        }
        continue;
      }
      this.#dependencies.observe(change);
      const affected = [...this.#dependencies.affected(change)];
      this.#logger.debug(
        { revision: change.revision, change: change.kind, projectId: change.projectId, environment: change.environmentSlug, secretPath: change.secretPath, integrations: affected },
        `change ${change.revision} (${change.kind}) affects ${affected.length} Integration${affected.length === 1 ? '' : 's'}`,
      );
      for (const key of affected) this.#queue!.add(`Integration:${key}`);
      if (change.kind === 'project-deleted') {
        for (const project of this.#informers!.projects.list().filter((resource) => resource.status?.projectId === change.projectId)) {
          this.#enqueue('SecretsProject', project);
        }
      }
    }
  }

  #watch(context: OperatorContext, informers: OperatorInformers): void {
    for (const verb of ['add', 'update', 'delete'] as const) {
      informers.projects.on(verb, (project) => {
        if (this.#specChanged(verb, 'SecretsProject', project)) this.#enqueue('SecretsProject', project);
        const dependents = dependentsOf(context, project);
        for (const key of dependents.integrations) this.#queue!.add(`Integration:${key}`);
        for (const key of dependents.imports) this.#queue!.add(`SecretImport:${key}`);
      });
      informers.imports.on(verb, (resource) => this.#specChanged(verb, 'SecretImport', resource) && this.#enqueue('SecretImport', resource));
      informers.integrations.on(verb, (resource) => this.#specChanged(verb, 'Integration', resource) && this.#enqueue('Integration', resource));
      if (verb !== 'add') {
        informers.managedSecrets.on(verb, (secret) => {
          const owner = secret.metadata?.annotations?.[ANNOTATION_INTEGRATION];
          if (owner) this.#queue!.add(`Integration:${owner}`);
        });
      }
    }
  }

  /**
   * Our own status and finalizer writes come back as updates; only a new
   * generation, a deletion, or our finalizer taken away call for a reconcile.
   */
  #specChanged(verb: 'add' | 'update' | 'delete', kind: KindName, resource: KubernetesObject): boolean {
    const key = `${kind}:${resourceKey(resource.metadata!.namespace!, resource.metadata!.name!)}`;
    if (verb === 'delete') {
      this.#seen.delete(key);
      return true;
    }
    const { generation, deletionTimestamp, finalizers } = resource.metadata!;
    const current = { generation, deletion: deletionTimestamp ? String(deletionTimestamp) : null, finalized: finalizers?.includes(FINALIZER) ?? false };
    const previous = this.#seen.get(key);
    this.#seen.set(key, current);
    return !previous || previous.generation !== current.generation || previous.deletion !== current.deletion || (previous.finalized && !current.finalized);
  }

  #enqueue(kind: KindName, resource: KubernetesObject): void {
    this.#queue?.add(`${kind}:${resourceKey(resource.metadata!.namespace!, resource.metadata!.name!)}`);
  }

  async #reconcile(context: OperatorContext, queueKey: string): Promise<number | void> {
    const separator = queueKey.indexOf(':');
    const kind = queueKey.slice(0, separator) as KindName;
    const key = queueKey.slice(separator + 1);
    const { namespace, name } = splitKey(key);
    this.#logger.debug({ kind, namespace, name }, `reconciling ${kind} ${namespace}/${name}`);
    const result = await this.#reconcileKind(context, kind, namespace, name, key);
    this.#options.metrics?.reconciled(kind, typeof result === 'number' ? 'requeue' : 'ok');
    return result;
  }

  async #reconcileKind(context: OperatorContext, kind: KindName, namespace: string, name: string, key: string): Promise<number | void> {
    switch (kind) {
      case 'SecretsProject': {
        const resource = context.projects.get(name, namespace);
        return resource ? reconcileSecretsProject(context, resource) : undefined;
      }
      case 'SecretImport': {
        const resource = context.imports.get(name, namespace);
        return resource ? reconcileSecretImport(context, resource) : undefined;
      }
      case 'Integration': {
        const resource = context.integrations.get(name, namespace);
        if (!resource) context.dependencies.delete(key);
        return resource ? reconcileIntegration(context, resource) : undefined;
      }
    }
  }

  /** Runs `action` until it succeeds (the database may be away for a while); undefined once stopped. */
  async #whenDatabaseAnswers<T>(what: string, action: () => Promise<T>): Promise<T | undefined> {
    for (let attempt = 0; !this.#stopped; attempt++) {
      try {
        return await action();
      } catch (error) {
        if (attempt === 0) this.#logger.warn({ err: error }, `could not ${what}; retrying until the database answers`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** attempt, 5_000)));
      }
    }
    return undefined;
  }

  async #operatorActor(): Promise<Actor | undefined> {
    const { db } = this.#services;
    for (let waitedLogged = false; !this.#stopped; waitedLogged = true) {
      const organization = await this.#whenDatabaseAnswers('look up the organization', () => findSingleOrganization(db, this.#options.organization));
      if (this.#stopped) return undefined;
      if (organization) {
        const identity = await this.#whenDatabaseAnswers('set up the operator identity', () =>
          ensureServiceIdentity(db, organization.id, OPERATOR_IDENTITY_NAME, 'admin'),
        );
        if (!identity) return undefined;
        const userAgent = `k8-operator/${this.#options.version}`;
        return {
          kind: 'identity',
          id: identity.id,
          name: identity.name,
          orgId: organization.id,
          orgRole: identity.role,
          tokenId: null,
          authMethod: 'service',
          ip: null,
          userAgent,
          userAgentType: 'k8-operator',
        };
      }
      if (!waitedLogged) this.#logger.info('waiting for the instance to be bootstrapped (or COFFER_OPERATOR_ORG to name one organization)');
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
    return undefined;
  }
}
