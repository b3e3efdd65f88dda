import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Change } from '../port/coffer-port.ts';
import { FINALIZER, type KindName } from '../resources.ts';
import type { Controller, Failure, Reconciled, ReconcileResult, Retry, WatchVerb, Watches } from './controller.ts';
import type { EventRecorder } from './event-recorder.ts';
import type { CachedInformer } from './informers.ts';
import type { OperatorMetrics } from './metrics.ts';
import { keyOf, type ObjectKey, queueId } from './object-key.ts';
import type { StatusWriter } from './status.ts';
import { type Requeue, WorkQueue } from './work-queue.ts';

export interface ManagerOptions {
  logger: Logger;
  status: Pick<StatusWriter, 'write' | 'forget'>;
  events: Pick<EventRecorder, 'record'>;
  metrics?: Pick<OperatorMetrics, 'reconciled'>;
  concurrency: number;
}

/** What the runtime remembers of a resource to tell our own writes (status, finalizer) from changes that need a reconcile. */
interface Seen {
  generation?: number;
  deletion: string | null;
  finalized: boolean;
}

/**
 * Runs the controllers: one rate-limited work queue of typed keys, the
 * watches each controller declared, and the outcome of every reconcile
 * turned into what the queue does next. It owns the one failure path: a
 * failed reconcile sets the controller's conditions to False with the
 * failure's reason, posts a Warning Event and counts an error.
 */
export class Manager {
  readonly #options: ManagerOptions;
  readonly #controllers = new Map<KindName, Controller>();
  readonly #changeWatches: ((changes: readonly Change[]) => Iterable<ObjectKey>)[] = [];
  readonly #seen = new Map<string, Seen>();
  readonly #queue: WorkQueue<ObjectKey>;

  constructor(options: ManagerOptions) {
    this.#options = options;
    this.#queue = new WorkQueue<ObjectKey>({
      concurrency: options.concurrency,
      identify: queueId,
      handler: (key) => this.#reconcile(key),
      isUrgent: (key) => this.#controllers.get(key.kind)?.urgent === true,
      onError: (key, error, retryInMs) => {
        options.metrics?.reconciled(key.kind, 'error');
        options.logger.warn({ kind: key.kind, namespace: key.namespace, name: key.name, err: error, retryInMs }, 'reconcile failed; retrying');
      },
    });
  }

  /** Adds a controller: its own kind is watched, then the watches it declares. */
  add<R extends Reconciled>(controller: Controller<R>): void {
    this.#controllers.set(controller.kind, controller);
    this.#watchOwnKind(controller);
    const watches: Watches = {
      informer: (source, map, verbs = ['add', 'update', 'delete']) => this.#watchInformer(source, map, verbs),
      changes: (map) => this.#changeWatches.push(map),
    };
    controller.setup(watches);
  }

  /** Keys waiting or being processed. */
  get pending(): number {
    return this.#queue.pending;
  }

  start(): void {
    this.#queue.start();
  }

  /** Resolves when no key is waiting or being processed (delayed retries aside). */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  /** Stops taking work and waits for the reconciles running. */
  stop(): Promise<void> {
    return this.#queue.stop();
  }

  enqueue(key: ObjectKey): void {
    this.#queue.add(key);
  }

  /** Enqueues every resource of every controller (start of leadership, each resync interval). */
  resyncAll(): void {
    for (const controller of this.#controllers.values()) {
      for (const resource of controller.informer.list()) this.#queue.add(keyOf(controller.kind, resource));
    }
  }

  /** Routes committed changes to the controllers that watch them. */
  deliver(changes: readonly Change[]): void {
    for (const map of this.#changeWatches) for (const key of map(changes)) this.#queue.add(key);
  }

  #watchOwnKind<R extends Reconciled>(controller: Controller<R>): void {
    for (const verb of ['add', 'update', 'delete'] as const) {
      controller.informer.on(verb, (resource: R) => {
        if (this.#needsReconcile(verb, controller.kind, resource)) this.#queue.add(keyOf(controller.kind, resource));
      });
    }
  }

  #watchInformer<T extends KubernetesObject>(source: CachedInformer<T>, map: (object: T) => Iterable<ObjectKey>, verbs: readonly WatchVerb[]): void {
    for (const verb of verbs) {
      source.on(verb, (object: T) => {
        for (const key of map(object)) this.#queue.add(key);
      });
    }
  }

  /**
   * Our own status and finalizer writes come back as updates; only a new
   * generation, a deletion, or our finalizer taken away call for a reconcile.
   */
  #needsReconcile(verb: WatchVerb, kind: KindName, resource: KubernetesObject): boolean {
    const id = queueId(keyOf(kind, resource));
    if (verb === 'delete') {
      this.#seen.delete(id);
      return true;
    }
    const { generation, deletionTimestamp, finalizers } = resource.metadata!;
    const current = { generation, deletion: deletionTimestamp ? String(deletionTimestamp) : null, finalized: finalizers?.includes(FINALIZER) ?? false };
    const previous = this.#seen.get(id);
    this.#seen.set(id, current);
    return !previous || previous.generation !== current.generation || previous.deletion !== current.deletion || (previous.finalized && !current.finalized);
  }

  async #reconcile(key: ObjectKey): Promise<Requeue> {
    const controller = this.#controllers.get(key.kind)!;
    const resource = controller.informer.get(key.name, key.namespace);
    if (!resource) {
      controller.forget?.(key);
      this.#options.status.forget(key.kind, key);
      return undefined;
    }
    this.#options.logger.debug({ kind: key.kind, namespace: key.namespace, name: key.name }, `reconciling ${key.kind} ${key.namespace}/${key.name}`);
    const result = await controller.reconcile(resource);
    return this.#settle(controller, resource, result);
  }

  async #settle(controller: Controller, resource: Reconciled, result: ReconcileResult): Promise<Requeue> {
    const { metrics } = this.#options;
    switch (result.outcome) {
      case 'done':
        metrics?.reconciled(controller.kind, 'ok');
        return undefined;
      case 'requeue':
        metrics?.reconciled(controller.kind, 'requeue');
        return { afterMs: result.afterMs };
      case 'failed':
        await this.#markFailed(controller, resource, result.failure);
        return requeueFor(result.failure.retry);
    }
  }

  /** The one failure path: the conditions, a Warning Event, the error count. */
  async #markFailed(controller: Controller, resource: Reconciled, failure: Failure): Promise<void> {
    const conditions = controller.failureConditions.map((type) => ({ type, status: 'False' as const, reason: failure.reason, message: failure.message }));
    await this.#options.status.write(controller.kind, resource, {}, conditions);
    this.#options.events.record(resource, 'Warning', failure.reason, failure.message);
    this.#options.metrics?.reconciled(controller.kind, 'error');
  }
}

function requeueFor(retry: Retry): Requeue {
  if (retry === 'backoff') return { backoff: true };
  return retry === 'on-change' ? undefined : retry;
}
