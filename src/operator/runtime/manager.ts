import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Change } from '../port/coffer-port.ts';
import { FINALIZER, type KindName } from '../resources.ts';
import { type Controller, done, type Failure, failed, type Reconciled, type ReconcileResult, type Retry, type WatchVerb, type Watches } from './controller.ts';
import type { EventRecorder } from './event-recorder.ts';
import type { CachedInformer } from './informers.ts';
import { describeError } from './kube-api.ts';
import type { OperatorMetrics } from './metrics.ts';
import { keyOf, type ObjectKey, queueId } from './object-key.ts';
import type { StatusWriter } from './status.ts';
import { type Clock, type Requeue, WorkQueue } from './work-queue.ts';

export interface ManagerOptions {
  logger: Logger;
  status: Pick<StatusWriter, 'write' | 'condition' | 'observe' | 'forget' | 'ensureFinalizer' | 'removeFinalizer' | 'holds' | 'heldElsewhere'>;
  /** Whether this installation may reconcile the resource at all (installation-guard.ts); default: every one. */
  admits?: (kind: KindName, resource: Reconciled) => Promise<boolean>;
  /**
   * Whether the resource gets the finalizer before its first reconcile (default: every one). One that does not is
   * finalized when the informer reports it gone, if this installation held it; what that misses while no operator
   * runs must be cleaned up by other means (Owner targets by the garbage collector, records by a sweep).
   */
  needsFinalizer?: (kind: KindName, resource: Reconciled) => boolean;
  /** The Failure a thrown error stands for, or undefined for one the runtime only logs and retries (failures.ts); default: none. */
  failureOf?: (error: unknown) => Failure | undefined;
  events: Pick<EventRecorder, 'record'>;
  metrics?: Pick<OperatorMetrics, 'reconciled' | 'failed' | 'forgetResource' | 'observeQueue'>;
  concurrency: number;
  /** An annotation whose new value asks for a reconcile (as a new generation does). */
  reconcileOnAnnotation?: string;
  /** The work queue's time (retries, requeues); default the system's. */
  clock?: Clock;
  /** The jitter of the work queue's backoff (default Math.random). */
  random?: () => number;
  /** Runs each reconcile's work (CofferPort.asOneRequest: its calls to Coffer as one request); default: as it is. */
  asOneRequest?: <T>(work: () => Promise<T>) => Promise<T>;
}

/** What the runtime remembers of a resource to tell our own writes (status, finalizer) from changes that need a reconcile. */
interface Seen {
  generation?: number;
  deletion: string | null;
  finalized: boolean;
  requested?: string;
}

/** A refusal that waits for someone to act is retried slowly: from 5 s, doubling, to 10 minutes. */
const SLOW_BACKOFF = { baseMs: 5_000, maxMs: 600_000 };

/**
 * Runs the controllers: one rate-limited work queue of typed keys, the
 * watches each controller declared, and the outcome of every reconcile
 * turned into what the queue does next. It owns the preamble of every
 * reconcile (the installation guard; a deletion finalized and the finalizer
 * removed; the finalizer added otherwise, where one is needed; a resource
 * deleted without one finalized from its last copy; a thrown error turned into a
 * Failure) and the one failure path: a failed reconcile sets the
 * controller's conditions to False with the failure's reason, posts a
 * Warning Event when that is news (not on every retry) and counts an error
 * by reason.
 */
export class Manager {
  readonly #options: ManagerOptions;
  readonly #controllers = new Map<KindName, Controller>();
  readonly #changeWatches: ((changes: readonly Change[]) => Iterable<ObjectKey>)[] = [];
  readonly #seen = new Map<string, Seen>();
  /** The last copy of each resource deleted without our finalizer that this installation held, until it is finalized. */
  readonly #departed = new Map<string, Reconciled>();
  #running = false;
  readonly #queue: WorkQueue<ObjectKey>;

  constructor(options: ManagerOptions) {
    this.#options = options;
    this.#queue = new WorkQueue<ObjectKey>({
      concurrency: options.concurrency,
      identify: queueId,
      handler: (key) => this.#reconcile(key),
      isUrgent: (key) => this.#controllers.get(key.kind)?.urgent === true,
      onError: (key, error, retryInMs, failures) => this.#unexpected(key, error, retryInMs, failures),
      clock: options.clock,
      random: options.random,
    });
    options.metrics?.observeQueue({ length: () => this.#queue.pending, oldestWaitMs: () => this.#queue.oldestWaitMs });
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
    this.#running = true;
    this.#departed.clear();
    this.#queue.start();
  }

  /** Resolves when no key is waiting or being processed (delayed retries aside). */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  /** Stops taking work and waits for the reconciles running. */
  stop(): Promise<void> {
    this.#running = false;
    this.#departed.clear();
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
        if (verb !== 'delete') this.#options.status.observe(controller.kind, resource);
        else this.#noteDeparture(controller.kind, resource);
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

  /** Whether the resource is to hold our finalizer (ManagerOptions.needsFinalizer; every one by default). */
  #needsFinalizer(kind: KindName, resource: Reconciled): boolean {
    return this.#options.needsFinalizer?.(kind, resource) ?? true;
  }

  /**
   * A resource without our finalizer left the cluster while this manager runs (leads): kept to be finalized, unless
   * another installation held it. Not while it does not run: the next leader's sweep is for what nobody saw go.
   */
  #noteDeparture(kind: KindName, resource: Reconciled): void {
    if (!this.#running || resource.metadata.finalizers?.includes(FINALIZER)) return;
    if (this.#needsFinalizer(kind, resource)) return;
    if (this.#options.status.heldElsewhere(kind, resource)) return;
    this.#departed.set(queueId(keyOf(kind, resource)), resource);
  }

  /**
   * Our own status and finalizer writes come back as updates; only a new
   * generation, a deletion, our finalizer taken away, or a new value of the
   * request annotation call for a reconcile.
   */
  #needsReconcile(verb: WatchVerb, kind: KindName, resource: KubernetesObject): boolean {
    const id = queueId(keyOf(kind, resource));
    if (verb === 'delete') {
      this.#seen.delete(id);
      return true;
    }
    const { generation, deletionTimestamp, finalizers, annotations } = resource.metadata!;
    const requestAnnotation = this.#options.reconcileOnAnnotation;
    const current: Seen = {
      generation,
      deletion: deletionTimestamp ? String(deletionTimestamp) : null,
      finalized: finalizers?.includes(FINALIZER) ?? false,
      requested: requestAnnotation ? annotations?.[requestAnnotation] : undefined,
    };
    const previous = this.#seen.get(id);
    this.#seen.set(id, current);
    return (
      !previous ||
      previous.generation !== current.generation ||
      previous.deletion !== current.deletion ||
      (previous.finalized && !current.finalized) ||
      previous.requested !== current.requested
    );
  }

  async #reconcile(key: ObjectKey): Promise<Requeue> {
    const controller = this.#controllers.get(key.kind)!;
    await this.#finalizeDeparted(controller, key);
    const resource = controller.informer.get(key.name, key.namespace);
    if (!resource) {
      controller.forget?.(key);
      this.#options.status.forget(key.kind, key);
      this.#options.metrics?.forgetResource(key);
      return undefined;
    }
    this.#options.logger.debug({ kind: key.kind, namespace: key.namespace, name: key.name }, `reconciling ${key.kind} ${key.namespace}/${key.name}`);
    const started = performance.now();
    const { asOneRequest } = this.#options;
    const result = await (asOneRequest ? asOneRequest(() => this.#run(controller, resource)) : this.#run(controller, resource));
    const requeue = await this.#settle(controller, resource, result);
    this.#options.metrics?.reconciled(key.kind, outcomeOf(result), (performance.now() - started) / 1000);
    return requeue;
  }

  /**
   * A resource deleted without a finalizer is finalized from its last copy, before anything else of its key (a
   * new resource of the same name then starts as it would after a finalizer's removal). An error keeps the copy, and
   * the key is retried with backoff, unless a new resource of that name is waiting: it is not held up (what the
   * copy left behind is the sweep's, at the next term).
   */
  async #finalizeDeparted(controller: Controller, key: ObjectKey): Promise<void> {
    const id = queueId(key);
    const departed = this.#departed.get(id);
    if (!departed) return;
    try {
      await controller.finalize(departed);
    } catch (error) {
      if (!controller.informer.get(key.name, key.namespace)) throw error;
      const fields = { kind: key.kind, namespace: key.namespace, name: key.name, error: describeError(error) };
      this.#options.logger.warn(fields, `could not finalize the deleted ${key.kind} ${key.namespace}/${key.name}; its successor of that name goes on`);
    }
    this.#departed.delete(id);
  }

  /**
   * The preamble every reconcile shares, in the order of controller-runtime's finalizer helpers: a
   * resource another installation manages is left alone; one being deleted
   * is finalized, then its finalizer removed; any other gets the finalizer
   * (if it needs one) before the controller touches anything outside the
   * cluster, so nothing it makes outlives the resource unfinalized.
   */
  async #run(controller: Controller, resource: Reconciled): Promise<ReconcileResult> {
    const { status, admits, failureOf } = this.#options;
    if (admits && !(await admits(controller.kind, resource))) return done();
    if (resource.metadata.deletionTimestamp) {
      await controller.finalize(resource);
      await status.removeFinalizer(controller.kind, resource);
      return done();
    }
    if (this.#needsFinalizer(controller.kind, resource)) await status.ensureFinalizer(controller.kind, resource);
    try {
      return await controller.reconcile(resource);
    } catch (error) {
      const failure = failureOf?.(error);
      if (!failure) throw error;
      return failed(failure);
    }
  }

  async #settle(controller: Controller, resource: Reconciled, result: ReconcileResult): Promise<Requeue> {
    switch (result.outcome) {
      case 'done':
        return undefined;
      case 'requeue':
        return { afterMs: result.afterMs };
      case 'failed':
        await this.#markFailed(controller, resource, result.failure);
        return requeueFor(result.failure.retry);
    }
  }

  /** The one failure path: the conditions, a Warning Event when the failure is news, the error count. */
  async #markFailed(controller: Controller, resource: Reconciled, failure: Failure): Promise<void> {
    const before = this.#options.status.condition(controller.kind, resource, controller.failureConditions[0]!);
    const news = !(before?.status === 'False' && before.reason === failure.reason && before.message === failure.message);
    const conditions = controller.failureConditions.map((type) => ({ type, status: 'False' as const, reason: failure.reason, message: failure.message }));
    // a failure of a resource its target claims takes nothing: another installation may be creating that target
    const claims = this.#needsFinalizer(controller.kind, resource) || this.#options.status.holds(controller.kind, resource);
    await this.#options.status.write(controller.kind, resource, failure.fields ?? {}, conditions, [], claims);
    if (news) this.#options.events.record(resource, 'Warning', failure.reason, failure.message);
    this.#options.metrics?.failed(controller.kind, failure.reason);
  }

  /** A reconcile threw (Coffer or the apiserver unreachable, a bug): logged once per spell of failures, counted, retried with backoff. */
  #unexpected(key: ObjectKey, error: unknown, retryInMs: number, failures: number): void {
    this.#options.metrics?.reconciled(key.kind, 'error');
    this.#options.metrics?.failed(key.kind, 'Error');
    const fields = { kind: key.kind, namespace: key.namespace, name: key.name, error: describeError(error), retryInMs, failures };
    const what = `reconcile of ${key.kind} ${key.namespace}/${key.name} failed`;
    if (failures === 1) this.#options.logger.warn(fields, `${what}; retrying with backoff`);
    else this.#options.logger.debug(fields, `${what} again (${failures} times in a row)`);
  }
}

function outcomeOf(result: ReconcileResult): 'ok' | 'requeue' | 'error' {
  if (result.outcome === 'done') return 'ok';
  return result.outcome === 'requeue' ? 'requeue' : 'error';
}

function requeueFor(retry: Retry): Requeue {
  if (retry === 'backoff') return { backoff: {} };
  if (retry === 'slow-backoff') return { backoff: SLOW_BACKOFF };
  return retry === 'on-change' ? undefined : retry;
}
