import type { KubernetesObject } from '@kubernetes/client-node';
import type { Change } from '../port/coffer-port.ts';
import type { KindName } from '../resources.ts';
import type { ConditionReason } from './condition-reason.ts';
import type { CachedInformer } from './informers.ts';
import type { ObjectKey } from './object-key.ts';
import type { ConditionType, StatusResource } from './status.ts';

/**
 * Why a reconcile could not do its work, as the resource's status, a Warning
 * Event and the error metrics say it: `reason` is one of the vocabulary
 * (condition-reason.ts), `message` says what to do, never carrying a secret value.
 */
export interface Failure {
  readonly reason: ConditionReason;
  readonly message: string;
  readonly retry: Retry;
  /** Status fields to set with the conditions (null removes one). */
  readonly fields?: Record<string, unknown>;
}

/**
 * When a failed reconcile runs again: after a delay; with the work queue's
 * backoff (doubling per consecutive failure from 200 ms to a minute); with a
 * slow backoff (from 5 s to 10 minutes: a refusal that someone must act on,
 * retried without hammering the apiserver); or only when something it
 * watches changes.
 */
export type Retry = { readonly afterMs: number } | 'backoff' | 'slow-backoff' | 'on-change';

/**
 * The outcome of one reconcile: done (nothing to do until something changes),
 * requeue after a delay (not a failure: e.g. a change the sync may have
 * missed), or failed (the runtime's one failure path marks it). A thrown
 * error is a failure the controller did not expect: logged, counted and
 * retried with backoff.
 */
export type ReconcileResult =
  { readonly outcome: 'done' } | { readonly outcome: 'requeue'; readonly afterMs: number } | { readonly outcome: 'failed'; readonly failure: Failure };

const DONE: ReconcileResult = { outcome: 'done' };

export function done(): ReconcileResult {
  return DONE;
}

export function requeueAfter(afterMs: number): ReconcileResult {
  return { outcome: 'requeue', afterMs };
}

export function failed(failure: Failure): ReconcileResult {
  return { outcome: 'failed', failure };
}

/** A reconciled resource: a Kubernetes object with the status the status writer handles. */
export type Reconciled = KubernetesObject & StatusResource;

/** How a controller says what enqueues its keys (controller-runtime's builder: For, Owns, Watches). */
export interface Watches {
  /** Another informer's adds, updates and deletions, mapped to keys of this controller. */
  informer<T extends KubernetesObject>(source: CachedInformer<T>, map: (object: T) => Iterable<ObjectKey>, verbs?: readonly WatchVerb[]): void;
  /** Committed changes from the change stream, mapped to keys of this controller (in revision order). */
  changes(map: (changes: readonly Change[]) => Iterable<ObjectKey>): void;
}

export type WatchVerb = 'add' | 'update' | 'delete';

/**
 * One controller: the kind it reconciles, where its resources are cached, the
 * watches that enqueue them, its reconcile and its finalize. Its own kind is
 * watched by the runtime (a new generation, a deletion, or the finalizer taken
 * away); every resource is also enqueued at each resync. The runtime runs the
 * preamble around both (manager.ts): the installation guard, the finalizer
 * added before a reconcile and removed after a finalize, and an error the
 * reconcile throws turned into a Failure.
 */
export interface Controller<R extends Reconciled = Reconciled> {
  readonly kind: KindName;
  /** The informer (and cache) of its own kind. */
  readonly informer: CachedInformer<R>;
  /** The conditions a failure sets to False (Ready; Synced too where the kind has it). */
  readonly failureConditions: readonly ConditionType[];
  /** Keys of this kind go before all others (what other resources wait for). */
  readonly urgent?: boolean;
  /** Declares the watches beyond its own kind. */
  setup(watches: Watches): void;
  /**
   * Brings the world in line with `resource` (the cached object, admitted by
   * the guard, holding the finalizer if it needs one, not being deleted; one key at a time).
   */
  reconcile(resource: R): Promise<ReconcileResult>;
  /**
   * The resource is being deleted, or was deleted without a finalizer (its last
   * copy): lets go of what it holds (in Coffer, in the cluster). The runtime
   * then removes the finalizer; an error leaves it, and the finalize is retried
   * with backoff.
   */
  finalize(resource: R): Promise<void>;
  /** The resource is gone from the cache: drops what is kept about it. */
  forget?(key: ObjectKey): void;
}
