import type { Logger } from 'pino';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ANNOTATION_INSTALLATION, type Condition, FINALIZER, type KindName, setCondition } from '../resources.ts';
import { type CustomResource, isConflict, isKubeNotFound, type KubeApi } from './kube-api.ts';
import type { OperatorMetrics } from './metrics.ts';
import { sameStatus } from './status-equality.ts';

/** What the status writer needs of a resource. */
export interface StatusResource {
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    finalizers?: string[];
    annotations?: Record<string, string>;
    resourceVersion?: string;
    generation?: number;
  };
  status?: { conditions?: Condition[] } & Record<string, unknown>;
}

import type { ConditionReason } from './condition-reason.ts';
import type { ConditionType } from './condition-type.ts';

export type { ConditionType };

export interface ConditionUpdate {
  type: ConditionType;
  status: 'True' | 'False' | 'Unknown';
  reason: ConditionReason;
  message: string;
}

/** The status fields a write sets (null removes one), or how to derive them from the status as it stands. */
export type StatusFields = Record<string, unknown> | ((current: Status) => Record<string, unknown>);

type Status = NonNullable<StatusResource['status']>;

/** A resource's status, finalizers and claim as the apiserver held them at one resourceVersion. */
interface StatusAt {
  uid?: string;
  resourceVersion?: string;
  finalizers?: string[];
  /** The installation the claim annotation names. */
  installation?: string;
  status: Status;
}

/** Tries of one status write: the first, and re-reads after conflicts (each a GET and a PATCH). */
const STATUS_WRITE_ATTEMPTS = 3;

/**
 * Writes the status subresource and the finalizer of the resources the
 * controllers reconcile: a write only when something would change, each
 * condition stamped with the observed generation, and one log line when a
 * resource becomes Ready or stops being Ready (never one per retry).
 *
 * A status write is computed from the status as the apiserver holds it and
 * sent on condition that it still holds it (the resourceVersion; a 409 is
 * answered by a re-read and a new try). Its base is the newer of the
 * informer's copy and the resource as this writer's own last write answered
 * it: the informer lags behind our writes, and a patch built from its copy
 * once put back the revision and time of an earlier sync beside a new key
 * count (issue 29). Optimistic concurrency rather than a server-side apply of
 * the status: the write must be compared with the previous status anyway (no
 * request when nothing changes; lastTransitionTime and lastSyncTime kept
 * while their condition or revision stands), so the previous status has to
 * be exact, and the precondition is what makes it exact.
 */
export class StatusWriter {
  readonly #kube: KubeApi;
  readonly #logger: Logger;
  /**
   * Per resource this writer wrote, the newest copy known: its own last
   * answer, or the informer's copy once that is newer (the status object is
   * the cache's own, not a copy).
   */
  readonly #latest = new Map<string, StatusAt>();
  readonly #installationId: string;
  readonly #metrics: Pick<OperatorMetrics, 'condition'> | undefined;
  readonly #cached: CachedCopy | undefined;

  /**
   * `installationId`: this installation, which every status written names (status.installationId); `cached`: the
   * informers' copy of a resource, so that a write's answer the informer already delivered is not kept twice.
   */
  constructor(kube: KubeApi, logger: Logger, installationId: string, metrics?: Pick<OperatorMetrics, 'condition'>, cached?: CachedCopy) {
    this.#kube = kube;
    this.#logger = logger;
    this.#installationId = installationId;
    this.#metrics = metrics;
    this.#cached = cached;
  }

  async ensureFinalizer(kind: KindName, resource: StatusResource): Promise<void> {
    const { finalizers = [], resourceVersion } = this.#freshest(kind, resource);
    if (finalizers.includes(FINALIZER)) return;
    const { namespace, name } = resource.metadata;
    this.#note(kind, resource, await this.#kube.setFinalizers(kind, namespace, name, [...finalizers, FINALIZER], resourceVersion));
  }

  async removeFinalizer(kind: KindName, resource: StatusResource): Promise<void> {
    const { finalizers = [], resourceVersion } = this.#freshest(kind, resource);
    if (!finalizers.includes(FINALIZER)) return;
    const { namespace, name } = resource.metadata;
    try {
      await this.#kube.setFinalizers(
        kind,
        namespace,
        name,
        finalizers.filter((finalizer) => finalizer !== FINALIZER),
        resourceVersion,
      );
    } catch (error) {
      if (!isKubeNotFound(error)) throw error;
    }
  }

  /**
   * Claims the resource for this installation, with our finalizer (unless it
   * is being deleted: none may be added then), in one write of its metadata
   * conditional on the resourceVersion read: of two installations claiming it
   * at once, one wins, before either writes anything else.
   */
  async claim(kind: KindName, resource: StatusResource & { metadata: { deletionTimestamp?: unknown } }): Promise<void> {
    const { namespace, name, deletionTimestamp } = resource.metadata;
    const { finalizers = [], resourceVersion } = this.#freshest(kind, resource);
    const withOurs = deletionTimestamp || finalizers.includes(FINALIZER) ? undefined : [...finalizers, FINALIZER];
    this.#note(
      kind,
      resource,
      await this.#kube.claim(kind, namespace, name, { installationId: this.#installationId, finalizers: withOurs, resourceVersion: resourceVersion! }),
    );
  }

  /**
   * The installation that manages the resource: the one its claim annotation
   * names, else the one its status names (resources claimed by their target,
   * or before the annotation).
   */
  holder(kind: KindName, resource: StatusResource): string | undefined {
    return holderOf(this.#freshest(kind, resource));
  }

  /** Whether this installation manages the resource (holder). */
  holds(kind: KindName, resource: StatusResource): boolean {
    return this.holder(kind, resource) === this.#installationId;
  }

  /** Whether another installation manages the resource (not this one, nor none). */
  heldElsewhere(kind: KindName, resource: StatusResource): boolean {
    return namesAnother(this.holder(kind, resource), this.#installationId);
  }

  /** The status as it stands: as this writer last wrote it, else as the informer's copy shows it. */
  current(kind: KindName, resource: StatusResource): Readonly<Status> {
    return this.#freshest(kind, resource).status;
  }

  /**
   * Sets these fields (null removes one) and conditions, without the
   * condition types in `remove`, conditionally on the status it was computed
   * from; skips the write when nothing would change, and when the status
   * names another installation. The status names this installation, unless
   * `claims` is false (a failure of a resource its target claims, before this
   * installation holds it: reporting it takes nothing). The condition metric
   * follows either way.
   */
  async write(
    kind: KindName,
    resource: StatusResource,
    fields: StatusFields,
    conditions: readonly ConditionUpdate[],
    remove: readonly ConditionType[] = [],
    claims = true,
  ): Promise<void> {
    for (const condition of conditions) {
      this.#metrics?.condition({ kind, namespace: resource.metadata.namespace, name: resource.metadata.name }, condition.type, condition.status);
    }
    let base = this.#freshest(kind, resource);
    const readyBefore = base.status.conditions?.find((condition) => condition.type === 'Ready');
    for (let attempt = 1; ; attempt++) {
      // another installation claimed it since the reconcile began (the first status write claims a resource claimed by its target)
      if (namesAnother(holderOf(base), this.#installationId)) return;
      const set = { ...(typeof fields === 'function' ? fields(base.status) : fields), ...(claims ? { installationId: this.#installationId } : {}) };
      const next = nextStatus(base.status, set, conditions, remove, resource.metadata.generation);
      if (sameStatus(next, base.status)) return;
      try {
        this.#note(kind, resource, await this.#send(kind, resource, base, next));
        break;
      } catch (error) {
        if (isKubeNotFound(error)) return;
        if (!isConflict(error) || attempt === STATUS_WRITE_ATTEMPTS) throw error;
        const live = await this.#kube.readResource(kind, resource.metadata.namespace, resource.metadata.name);
        if (!live) return;
        base = statusAt(live);
      }
    }
    this.#logReadyChange(
      kind,
      resource,
      readyBefore,
      conditions.find((condition) => condition.type === 'Ready'),
    );
  }

  /**
   * Sends the status write, on condition that the resource is still at the base's resourceVersion: the whole object
   * (a PUT of the status subresource) when the informer holds it at that version, which the apiserver decodes once;
   * else a merge patch of the status, which has it encode the stored object, merge and decode the result (the base
   * is this writer's own last answer, which the watch has not delivered yet).
   */
  async #send(kind: KindName, resource: StatusResource, base: StatusAt, next: Status): Promise<CustomResource> {
    const { namespace, name } = resource.metadata;
    const stored = this.#cached?.(kind, resource.metadata);
    if (stored && stored.metadata.uid === base.uid && stored.metadata.resourceVersion === base.resourceVersion) {
      return this.#kube.replaceStatus(kind, { ...stored, status: withoutRemovedFields(next) });
    }
    return this.#kube.patchStatus(kind, namespace, name, next, base.resourceVersion);
  }

  /** A condition as it stands: as this process last wrote it, else as the cached resource shows it (its reason as read, a string). */
  condition(kind: KindName, resource: StatusResource, type: ConditionType): Pick<Condition, 'status' | 'reason' | 'message'> | undefined {
    return this.current(kind, resource).conditions?.find((condition) => condition.type === type);
  }

  /**
   * The informer has a newer copy of the resource: it replaces what this
   * writer kept (the copy a reconcile started from may be older than both).
   */
  observe(kind: KindName, resource: StatusResource): void {
    const key = latestKey(kind, resource.metadata);
    const latest = this.#latest.get(key);
    if (latest && (latest.uid !== resource.metadata.uid || !isNewer(latest.resourceVersion, resource.metadata.resourceVersion)))
      this.#latest.set(key, statusAt(resource));
  }

  /** The resource is gone. */
  forget(kind: KindName, resource: { namespace: string; name: string }): void {
    this.#latest.delete(latestKey(kind, resource));
  }

  /**
   * Keeps what the apiserver answered to a write: the base of the next one. The watch often delivers the version
   * before the answer arrives; the informer's copy is then kept (its objects are the cache's own), not the answer's.
   */
  #note(kind: KindName, resource: StatusResource, answer: CustomResource): void {
    const answered = statusAt(answer);
    const cached = this.#cached?.(kind, resource.metadata);
    const delivered = cached && cached.metadata.uid === answered.uid && !isNewer(answered.resourceVersion, cached.metadata.resourceVersion);
    this.#latest.set(latestKey(kind, resource.metadata), delivered ? statusAt(cached) : answered);
  }

  /** The newer of the reconciled copy and the latest this writer knows (its own last answer, or a newer informer copy since). */
  #freshest(kind: KindName, resource: StatusResource): StatusAt {
    const reconciled = statusAt(resource);
    const latest = this.#latest.get(latestKey(kind, resource.metadata));
    return latest && latest.uid === reconciled.uid && isNewer(latest.resourceVersion, reconciled.resourceVersion) ? latest : reconciled;
  }

  #logReadyChange(kind: KindName, resource: StatusResource, before: ConditionUpdate | Condition | undefined, ready: ConditionUpdate | undefined): void {
    if (!ready) return;
    if (before?.status === ready.status && before.reason === ready.reason) return;
    const { namespace, name } = resource.metadata;
    const fields = { kind, namespace, name, reason: ready.reason };
    if (ready.status === 'True') this.#logger.info(fields, `${kind} ${namespace}/${name} is Ready (${ready.reason}): ${ready.message}`);
    else this.#logger.warn(fields, `${kind} ${namespace}/${name} is not Ready (${ready.reason}): ${ready.message}`);
  }
}

/** The status a write asks for: `base` with these fields and conditions, each condition stamped with the generation observed. */
function nextStatus(
  base: Status,
  fields: Record<string, unknown>,
  conditions: readonly ConditionUpdate[],
  remove: readonly ConditionType[],
  observedGeneration: number | undefined,
): Status {
  let nextConditions = base.conditions?.filter((condition) => !remove.includes(condition.type as ConditionType));
  for (const condition of conditions) nextConditions = setCondition(nextConditions, { ...condition, observedGeneration });
  return { ...base, ...fields, conditions: nextConditions, observedGeneration };
}

/** The status as a whole object states it: a field set to null (removed, in a merge patch) left out. */
function withoutRemovedFields(status: Status): Status {
  return Object.fromEntries(Object.entries(status).filter(([, value]) => value !== null));
}

function statusAt(object: CustomResource | StatusResource): StatusAt {
  const metadata: KubernetesObject['metadata'] = object.metadata;
  return {
    uid: metadata?.uid,
    resourceVersion: metadata?.resourceVersion,
    finalizers: metadata?.finalizers,
    installation: metadata?.annotations?.[ANNOTATION_INSTALLATION],
    status: object.status ?? {},
  };
}

/**
 * Whether resourceVersion `a` is later than `b`. Kubernetes calls them
 * opaque; they are etcd revisions, and this only chooses which copy to
 * build a write on: a wrong guess costs a 409 and a re-read, never a wrong status.
 */
function isNewer(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined) return false;
  if (b === undefined) return true;
  try {
    return BigInt(a) > BigInt(b);
  } catch {
    return false;
  }
}

/** The informers' cached copy of a resource, if any. */
export type CachedCopy = (kind: KindName, resource: { namespace: string; name: string }) => (StatusResource & CustomResource) | undefined;

function latestKey(kind: KindName, { namespace, name }: { namespace: string; name: string }): string {
  return `${kind}/${namespace}/${name}`;
}

/** Whether this copy of a resource shows it managed by an installation other than `installationId` (StatusWriter.heldElsewhere, without the writer's own newer copy). */
export function heldElsewhereIn(object: CustomResource | StatusResource, installationId: string): boolean {
  return namesAnother(holderOf(statusAt(object)), installationId);
}

function namesAnother(holder: string | undefined, installationId: string): boolean {
  return holder !== undefined && holder !== installationId;
}

/** The installation its claim annotation names, else (claimed before the annotation, or by its target) the one its status names. */
function holderOf({ installation, status }: StatusAt): string | undefined {
  return installation ?? (typeof status.installationId === 'string' ? status.installationId : undefined);
}
