import { OperatorPermissions } from './controllers/operator-permissions.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ControllerContext } from './controllers/context.ts';
import { ConflictReports } from './controllers/conflict-reports.ts';
import { toFailure } from './controllers/failures.ts';
import { mayReconcile } from './controllers/installation-guard.ts';
import { claimedByTarget } from './controllers/integration/target-claim.ts';
import { sweepRecords } from './controllers/integration/record-sweep.ts';
import { IntegrationController } from './controllers/integration/integration-controller.ts';
import { SecretImportController } from './controllers/secret-import/secret-import-controller.ts';
import { SecretsProjectController } from './controllers/secrets-project/secrets-project-controller.ts';
import type { ChangeSubscription, CofferPort } from './port/coffer-port.ts';
import { ANNOTATION_FORCE_SYNC, ANNOTATION_INSTALLATION, type WorkloadKind } from './resources.ts';
import { InstallationKey } from './controllers/installation-key.ts';
import { loadReloadKey } from './controllers/reload/reload-key.ts';
import { type ReloadState, WorkloadReloader } from './controllers/reload/workload-reloader.ts';
import { EventRecorder } from './runtime/event-recorder.ts';
import { OperatorHealth } from './runtime/health.ts';
import { createInformers, createWorkloadInformers, type OperatorInformers, runInformer } from './runtime/informers.ts';
import { describeError, describePermissions, KubeApi, WORKLOAD_RESOURCES } from './runtime/kube-api.ts';
import { LeaderElector } from './runtime/leader-election.ts';
import { Manager } from './runtime/manager.ts';
import type { OperatorMetrics } from './runtime/metrics.ts';
import { operatorPermissions, reloadPermissions } from './runtime/permissions.ts';
import { StatusWriter } from './runtime/status.ts';

/** Tries to check reload's permissions at start (0.5 s backoff doubling: ~15 s in all). */
const RELOAD_SETUP_ATTEMPTS = 5;
/** Tries of the sweep of records at the start of leadership (2, 4, 8, 16 and 32 s apart). */
const SWEEP_ATTEMPTS = 6;

/** How the operator reaches Coffer: the port, once there is something to act in. */
export interface PortConnector {
  /** The port, or undefined while Coffer cannot be used yet (e.g. not bootstrapped). */
  connect(): Promise<CofferPort | undefined>;
  /** What the operator waits for while connect() gives undefined (logged once). */
  readonly waitingFor: string;
}

export interface OperatorOptions {
  kubeConfig: KubeConfig;
  /** Namespace of the leader-election Lease. */
  leaseNamespace: string;
  /** This replica's name in the Lease. */
  replicaName: string;
  leaderElection: boolean;
  /** Watch one namespace only; all when unset. */
  watchNamespace?: string;
  /** The cluster as this operator names itself: what namespace grants name. */
  clusterName: string;
  resyncIntervalMs: number;
  concurrency: number;
  metrics?: OperatorMetrics;
}

const LEASE_NAME = 'coffer-operator';

/**
 * The operator: the three controllers on one manager, fed by informers on
 * the three kinds and on managed Secrets and by Coffer's change stream, a
 * periodic full resync, and leader election so that one replica reconciles
 * at a time.
 */
export class Operator {
  readonly #connector: PortConnector;
  readonly #logger: Logger;
  readonly #options: OperatorOptions;
  readonly #kube: KubeApi;
  readonly #events: EventRecorder;
  readonly #health: OperatorHealth;
  /** Keys the digests of secret data outside the Secrets (reload checksums, data hashes). */
  readonly #installationKey: InstallationKey;
  #port: CofferPort | null = null;
  #informers: OperatorInformers | null = null;
  #manager: Manager | null = null;
  #integrations: IntegrationController | null = null;
  #context: ControllerContext | null = null;
  /** Counts the terms of leadership begun and ended: work of one term stops when it changes. */
  #term = 0;
  #subscription: ChangeSubscription | null = null;
  #elector: LeaderElector | null = null;
  #resyncTimer: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(connector: PortConnector, logger: Logger, options: OperatorOptions) {
    this.#connector = connector;
    this.#logger = logger.child({ component: 'operator' });
    this.#options = options;
    this.#kube = new KubeApi(options.kubeConfig, (verb, resource) => options.metrics?.kubeRequest(verb, resource));
    this.#events = new EventRecorder({
      send: ({ object, type, reason, message }) => this.#kube.recordEvent(object, type, reason, message),
      onDropped: (type, cause) => options.metrics?.eventDropped(type, cause),
    });
    this.#installationKey = new InstallationKey(() => loadReloadKey(this.#kube, options.leaseNamespace));
    this.#health = new OperatorHealth(this.#kube, operatorPermissions(options), this.#logger, options.metrics);
  }

  /** Why the operator cannot work (missing RBAC, watches refused, Coffer unreachable), or null: part of /readyz. */
  readinessProblem(): string | null {
    return this.#health.problem();
  }

  /** Waits for Coffer to be usable (bootstrap), then runs until stop(). */
  async start(): Promise<void> {
    const port = await this.#connect();
    if (!port) return;
    this.#port = port;
    const { installationId } = port;
    this.#logStart(installationId);
    const informers = createInformers(this.#kube, this.#options.watchNamespace);
    const reload = await this.#prepareReload(informers);
    this.#informers = informers;
    const manager = this.#createManager(port, informers, reload);
    await this.#health.start();
    const running = {
      logger: this.#logger,
      isStopped: () => this.#stopped,
      onFailure: (resource: string, error: unknown) => {
        this.#options.metrics?.watchFailed(resource);
        this.#health.watchFailed(resource, error);
      },
      onWorking: (resource: string) => this.#health.watchWorking(resource),
    };
    await Promise.all([
      runInformer(informers.projects, 'secretsprojects', running),
      runInformer(informers.imports, 'secretimports', running),
      runInformer(informers.integrations, 'integrations', running),
      runInformer(informers.managedSecrets, 'secrets', running),
      runInformer(informers.managedConfigMaps, 'configmaps', running),
      ...Object.entries(informers.workloads ?? {}).map(([kind, informer]) => runInformer(informer, WORKLOAD_RESOURCES[kind as WorkloadKind], running)),
    ]);
    if (this.#stopped) return;
    this.#reportForeignResources(informers, installationId);
    if (!this.#options.leaderElection) {
      this.#logger.info('leader election off: this replica reconciles');
      return this.#startLeading(manager);
    }
    this.#elector = new LeaderElector(this.#kube, this.#logger, {
      namespace: this.#options.leaseNamespace,
      name: LEASE_NAME,
      identity: `${installationId}_${this.#options.replicaName}`,
      installationId,
      onForeignLease: (lease, other) => {
        const message = `the Lease is held by Coffer installation ${other}; this installation (${installationId}) does not run the operator in this cluster`;
        this.#logger.warn(
          { otherInstallation: other, installationId, lease: `${this.#options.leaseNamespace}/${LEASE_NAME}`, holder: lease.spec?.holderIdentity },
          message,
        );
        this.#events.record(lease, 'Warning', 'InstallationConflict', message);
      },
      onStartedLeading: () => this.#startLeading(manager),
      onStoppedLeading: () => this.#stopLeading(),
    });
    this.#elector.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#health.stop();
    if (this.#elector) await this.#elector.stop();
    else await this.#stopLeading();
    // Events still waiting get a moment to be posted (best-effort, as ever).
    await Promise.race([this.#events.idle(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    const { workloads, ...watched } = this.#informers ?? {};
    const informers = [...Object.values(watched), ...Object.values(workloads ?? {})] as { stop(): Promise<unknown> }[];
    await Promise.all(informers.map((informer) => informer.stop().catch(() => {})));
    await this.#integrations?.close();
  }

  /**
   * Workload reload, when its RBAC is granted (deploy/reload, the chart's
   * reload.enabled): informers on the workloads, and the checksum key read
   * from its Secret when first needed; otherwise off, and Integrations asking
   * for it say why.
   */
  async #prepareReload(informers: OperatorInformers): Promise<ReloadState> {
    const off = (disabledBecause: string) => {
      this.#logger.info(`workload reload is off: ${disabledBecause}`);
      return { disabledBecause };
    };
    // the apiserver briefly unreachable at start must not turn reload off for the life of the process
    for (let attempt = 1; ; attempt++) {
      try {
        const missing = await this.#kube.missingPermissions(reloadPermissions(this.#options));
        if (missing.length > 0) {
          return off(`the operator may not ${describePermissions(missing)} (enable reload: the chart's reload.enabled=true, or kubectl apply -k deploy/reload)`);
        }
        informers.workloads = createWorkloadInformers(this.#kube, this.#options.watchNamespace);
        this.#logger.info('workload reload is on: Deployments, StatefulSets and DaemonSets are watched');
        return { loadKey: () => this.#installationKey.get() };
      } catch (error) {
        if (attempt >= RELOAD_SETUP_ATTEMPTS || this.#stopped) {
          return off(`its permissions could not be checked: ${describeError(error).message as string}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
      }
    }
  }

  /** The controllers, each declaring its watches, on one manager (before the informers start, so no event is missed). */
  #createManager(port: CofferPort, informers: OperatorInformers, reload: ReloadState): Manager {
    const { metrics } = this.#options;
    const byKind = { SecretsProject: informers.projects, SecretImport: informers.imports, Integration: informers.integrations };
    const status = new StatusWriter(this.#kube, this.#logger, port.installationId, metrics, (kind, { namespace, name }) => byKind[kind].get(name, namespace));
    const context: ControllerContext = {
      port,
      kube: this.#kube,
      status,
      events: this.#events,
      logger: this.#logger,
      informers,
      identity: { installationId: port.installationId, clusterName: this.#options.clusterName },
      conflicts: new ConflictReports(),
      installationKey: this.#installationKey,
      reloader: new WorkloadReloader({ kube: this.#kube, informers, events: this.#events, logger: this.#logger, metrics }, reload),
      metrics,
      permissions: new OperatorPermissions(port.projects, this.#logger),
    };
    const manager = new Manager({
      logger: this.#logger,
      status,
      admits: (kind, resource) => mayReconcile(context, kind, resource),
      needsFinalizer: (kind, resource) => !claimedByTarget(kind, resource),
      failureOf: (error) => toFailure(error),
      events: this.#events,
      metrics,
      concurrency: this.#options.concurrency,
      reconcileOnAnnotation: ANNOTATION_FORCE_SYNC,
      asOneRequest: port.asOneRequest,
    });
    this.#context = context;
    this.#integrations = new IntegrationController(context);
    manager.add(new SecretsProjectController(context));
    manager.add(new SecretImportController(context));
    manager.add(this.#integrations);
    this.#manager = manager;
    return manager;
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
        lease: `${this.#options.leaseNamespace}/${LEASE_NAME}`,
        installationId,
      },
      `operator starting for cluster '${this.#options.clusterName}' (${config.getCurrentCluster()?.server}), ${this.#options.watchNamespace ? `namespace ${this.#options.watchNamespace}` : 'all namespaces'}, as installation ${installationId}`,
    );
  }

  /** At start: names every other installation whose resources are in this cluster (they are left alone). */
  #reportForeignResources(informers: OperatorInformers, installationId: string): void {
    const others = new Map<string, number>();
    for (const informer of [informers.projects, informers.imports, informers.integrations] as const) {
      for (const resource of informer.list() as readonly { metadata?: { annotations?: Record<string, string> }; status?: { installationId?: string } }[]) {
        const other = resource.metadata?.annotations?.[ANNOTATION_INSTALLATION] ?? resource.status?.installationId;
        if (other && other !== installationId) others.set(other, (others.get(other) ?? 0) + 1);
      }
    }
    for (const [other, count] of others) {
      this.#logger.warn(
        { otherInstallation: other, installationId, resources: count },
        `${count} Coffer resource(s) in this cluster are managed by installation ${other}; this installation leaves them alone and writes nothing to them`,
      );
    }
  }

  async #startLeading(manager: Manager): Promise<void> {
    if (this.#stopped) return;
    this.#options.metrics?.leading(true);
    const port = this.#port!;
    const after = await this.#whenAvailable('read the change log', () => port.changes.latestRevision());
    if (after === undefined) return;
    this.#integrations!.startAt(after);
    // every resource once, before the first reconcile: enqueued after, the ones already running would run twice
    manager.resyncAll();
    manager.start();
    void this.#sweepRecords(++this.#term);
    let failedReads = 0;
    this.#subscription = await port.changes.subscribe(
      after,
      async (changes) => {
        if (failedReads > 0) this.#logger.info({ failedReads }, 'the change feed is read again');
        failedReads = 0;
        manager.deliver(changes);
      },
      (error) => {
        failedReads++;
        const fields = { error: describeError(error), failedReads };
        if (failedReads === 1) this.#logger.warn(fields, 'change feed read failed; retrying (nothing is missed: it resumes from the last revision)');
        else this.#logger.debug(fields, 'change feed read failed again');
      },
      {
        onReset: () => {
          this.#logger.warn('Coffer does not have the revision this operator had reached (another or a restored database): resyncing everything');
          manager.resyncAll();
        },
        // every resource says Coffer is away (and keeps its Secret), then catches up when it is back
        onConnectionLost: (lost, reason) => {
          if (this.#stopped) return;
          this.#health.cofferUnavailable(lost ? `the operator cannot follow Coffer's changes: ${reason ?? 'the connection was lost'}` : null);
          if (lost) this.#logger.warn({ reason }, 'lost the connection to Coffer; Secrets keep their last data');
          else this.#logger.info('connected to Coffer again; catching up by revision');
          manager.resyncAll();
        },
      },
    );
    this.#resyncTimer = setInterval(() => manager.resyncAll(), this.#options.resyncIntervalMs);
    this.#resyncTimer.unref();
  }

  /**
   * The records of Integrations deleted while no operator ran go (record-sweep.ts). A failure is retried a few
   * times, then left to the next start: it affects no Secret and not the operator's readiness.
   */
  async #sweepRecords(term: number): Promise<void> {
    const going = () => !this.#stopped && term === this.#term;
    for (let attempt = 1; going(); attempt++) {
      try {
        const { dropped, failed } = await sweepRecords(this.#context!, this.#informers!.integrations, { namespace: this.#options.watchNamespace, going });
        if (dropped > 0) this.#logger.info({ dropped }, `dropped ${dropped} record(s) of Integrations deleted while no operator ran, or held by another installation`);
        if (failed > 0) this.#logger.warn({ failed }, `could not drop ${failed} record(s) of deleted Integrations; the next start tries again`);
        return;
      } catch (error) {
        if (attempt === SWEEP_ATTEMPTS) {
          this.#logger.warn({ error: describeError(error) }, 'could not list the records of Integrations; the next start tries again');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 1_000 * 2 ** attempt).unref());
      }
    }
  }

  async #stopLeading(): Promise<void> {
    this.#term++;
    this.#options.metrics?.leading(false);
    if (this.#resyncTimer) clearInterval(this.#resyncTimer);
    await this.#subscription?.stop();
    this.#subscription = null;
    await this.#manager?.stop();
  }

  /** Runs `action` until it succeeds (Coffer may be away for a while); undefined once stopped. */
  async #whenAvailable<T>(what: string, action: () => Promise<T>): Promise<T | undefined> {
    for (let attempt = 0; !this.#stopped; attempt++) {
      try {
        const done = await action();
        this.#health.cofferUnavailable(null);
        return done;
      } catch (error) {
        this.#health.cofferUnavailable(`the operator could not ${what}: ${describeError(error).message as string}`);
        if (attempt === 0) this.#logger.warn({ error: describeError(error) }, `could not ${what}; retrying until Coffer answers`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** attempt, 5_000)));
      }
    }
    return undefined;
  }

  /** The port, once Coffer can be used; undefined if stopped before. */
  async #connect(): Promise<CofferPort | undefined> {
    for (let waitLogged = false; !this.#stopped; waitLogged = true) {
      const port = await this.#whenAvailable('set up the operator identity', () => this.#connector.connect());
      if (this.#stopped) return undefined;
      if (port) return port;
      if (!waitLogged) this.#logger.info(`waiting for ${this.#connector.waitingFor}`);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
    return undefined;
  }
}
