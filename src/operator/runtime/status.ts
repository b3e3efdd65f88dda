import type { Logger } from 'pino';
import { isDeepStrictEqual } from 'node:util';
import { type Condition, FINALIZER, type KindName, setCondition } from '../resources.ts';
import { isNotFound, type KubeApi } from './kube-api.ts';
import type { OperatorMetrics } from './metrics.ts';

/** What the status writer needs of a resource. */
export interface StatusResource {
  metadata: { name: string; namespace: string; finalizers?: string[]; resourceVersion?: string; generation?: number };
  status?: { conditions?: Condition[] } & Record<string, unknown>;
}

import type { ConditionType } from './condition-type.ts';

export type { ConditionType };

export interface ConditionUpdate {
  type: ConditionType;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/**
 * Writes the status subresource and the finalizer of the resources the
 * controllers reconcile: a write only when something would change, each
 * condition stamped with the observed generation, and one log line when a
 * resource becomes Ready or stops being Ready (never one per retry).
 */
export class StatusWriter {
  readonly #kube: KubeApi;
  readonly #logger: Logger;
  /**
   * The conditions last written per resource. The informer's copy of a
   * resource lags behind our own writes; a reconcile that runs before the
   * watch delivers them would otherwise take its Ready state for news.
   */
  readonly #written = new Map<string, Map<string, ConditionUpdate>>();
  readonly #metrics: Pick<OperatorMetrics, 'condition'> | undefined;

  constructor(kube: KubeApi, logger: Logger, metrics?: Pick<OperatorMetrics, 'condition'>) {
    this.#kube = kube;
    this.#logger = logger;
    this.#metrics = metrics;
  }

  async ensureFinalizer(kind: KindName, resource: StatusResource): Promise<void> {
    const finalizers = resource.metadata.finalizers ?? [];
    if (finalizers.includes(FINALIZER)) return;
    const { namespace, name, resourceVersion } = resource.metadata;
    await this.#kube.setFinalizers(kind, namespace, name, [...finalizers, FINALIZER], resourceVersion);
  }

  async removeFinalizer(kind: KindName, resource: StatusResource): Promise<void> {
    const finalizers = resource.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) return;
    const { namespace, name, resourceVersion } = resource.metadata;
    try {
      await this.#kube.setFinalizers(
        kind,
        namespace,
        name,
        finalizers.filter((finalizer) => finalizer !== FINALIZER),
        resourceVersion,
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /**
   * Patches the status with these fields (null removes one) and conditions,
   * without the condition types in `remove`; skips the write when nothing
   * would change. The condition metric follows either way.
   */
  async write(
    kind: KindName,
    resource: StatusResource,
    fields: Record<string, unknown>,
    conditions: readonly ConditionUpdate[],
    remove: readonly ConditionType[] = [],
  ): Promise<void> {
    const observedGeneration = resource.metadata.generation;
    let nextConditions = resource.status?.conditions?.filter((condition) => !remove.includes(condition.type as ConditionType));
    for (const condition of conditions) {
      nextConditions = setCondition(nextConditions, { ...condition, observedGeneration });
      this.#metrics?.condition({ kind, namespace: resource.metadata.namespace, name: resource.metadata.name }, condition.type, condition.status);
    }
    const next = { ...resource.status, ...fields, conditions: nextConditions, observedGeneration };
    if (isDeepStrictEqual(stripVolatile(next), stripVolatile(resource.status ?? {}))) {
      this.#remember(kind, resource, conditions);
      return;
    }
    const { namespace, name } = resource.metadata;
    try {
      await this.#kube.patchStatus(kind, namespace, name, next);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return;
    }
    this.#logReadyChange(
      kind,
      resource,
      conditions.find((condition) => condition.type === 'Ready'),
    );
    this.#remember(kind, resource, conditions);
  }

  /** A condition as it stands: as this process last wrote it, else as the cached resource shows it. */
  condition(kind: KindName, resource: StatusResource, type: ConditionType): Pick<ConditionUpdate, 'status' | 'reason' | 'message'> | undefined {
    return this.#written.get(writtenKey(kind, resource.metadata))?.get(type) ?? resource.status?.conditions?.find((condition) => condition.type === type);
  }

  /** The resource is gone. */
  forget(kind: KindName, resource: { namespace: string; name: string }): void {
    this.#written.delete(writtenKey(kind, resource));
  }

  #remember(kind: KindName, resource: StatusResource, conditions: readonly ConditionUpdate[]): void {
    const key = writtenKey(kind, resource.metadata);
    const written = this.#written.get(key) ?? new Map<string, ConditionUpdate>();
    for (const condition of conditions) written.set(condition.type, condition);
    this.#written.set(key, written);
  }

  #logReadyChange(kind: KindName, resource: StatusResource, ready: ConditionUpdate | undefined): void {
    if (!ready) return;
    const before = this.condition(kind, resource, 'Ready');
    if (before?.status === ready.status && before.reason === ready.reason) return;
    const { namespace, name } = resource.metadata;
    const fields = { kind, namespace, name, reason: ready.reason };
    if (ready.status === 'True') this.#logger.info(fields, `${kind} ${namespace}/${name} is Ready (${ready.reason}): ${ready.message}`);
    else this.#logger.warn(fields, `${kind} ${namespace}/${name} is not Ready (${ready.reason}): ${ready.message}`);
  }
}

function writtenKey(kind: KindName, { namespace, name }: { namespace: string; name: string }): string {
  return `${kind}/${namespace}/${name}`;
}

/** Sync timestamps alone do not warrant a write; a field set to null (removed) is one that is absent. */
function stripVolatile(status: Record<string, unknown>): Record<string, unknown> {
  const { lastSyncTime: _ignored, ...rest } = status;
  return JSON.parse(JSON.stringify(rest, (_key, value: unknown) => (value === null ? undefined : value))) as Record<string, unknown>;
}
