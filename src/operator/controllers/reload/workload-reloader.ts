import type { Logger } from 'pino';
import { parseDuration } from '../../../validation/duration.ts';
import { ROLLING_WORKLOADS_MAX } from '../../../integrations/workload-rollout.ts';
import type { Revision, WorkloadRef } from '../../port/coffer-port.ts';
import type { IntegrationResource, WorkloadKind } from '../../resources.ts';
import type { EventRecorder } from '../../runtime/event-recorder.ts';
import type { OperatorInformers, Workload } from '../../runtime/informers.ts';
import { describeError, type KubeApi } from '../../runtime/kube-api.ts';
import type { OperatorMetrics } from '../../runtime/metrics.ts';
import { keyOf, type ObjectKey } from '../../runtime/object-key.ts';
import type { ConditionUpdate } from '../../runtime/status.ts';
import { describeTarget, liveData, targetKindOf } from '../integration/managed-target.ts';
import { type ConsumedKeys, consumedKeys, keysRead, type TargetRef, targetRef } from './consumed-keys.ts';
import { checksumAnnotation, RELOAD_OPT_IN_ANNOTATION, ReloadHasher } from './reload-checksum.ts';
import { rolloutFinished } from './rollout-status.ts';
import { RELOAD_KEY_SECRET } from './reload-key.ts';

/** The debounce when spec.reload names none (and for workloads that opt in by annotation). */
export const DEFAULT_DEBOUNCE_MS = 5_000;
const WORKLOAD_KINDS: readonly WorkloadKind[] = ['Deployment', 'StatefulSet', 'DaemonSet'];
/** When a reload whose key could not be read is tried again. */
const KEY_RETRY_MS = 5_000;

/** Reload on (its key read when first needed), or off and why. */
export type ReloadState = { loadKey: () => Promise<Buffer> } | { disabledBecause: string };

export interface ReloaderContext {
  kube: KubeApi;
  informers: OperatorInformers;
  events: EventRecorder;
  logger: Logger;
  metrics?: Pick<OperatorMetrics, 'rolledOut'>;
}

/** What a reload check tells the Integration's status; undefined when nothing consumes its target and none is named. */
export interface ReloadReport {
  condition: ConditionUpdate;
  /** The revision every consuming workload reflects (rolled or found current); absent while a rollout waits. */
  reloadedRevision?: Revision;
  /** With reloadedRevision: the consuming workloads whose rollout has not finished (their status says so). */
  rolling?: WorkloadRef[];
  lastRollout?: { time: string; revision: Revision; workloads: string[]; keys: string[] };
  /** A rollout waits for its debounce window: check again then. */
  recheckInMs?: number;
}

/** One workload that reads the Integration's target, and what the reload decided for it. */
interface Consumer {
  kind: WorkloadKind;
  workload: Workload;
  consumed: ConsumedKeys;
}

/** A workload rolled, and the keys it reads whose change rolled it. */
interface Rolled {
  consumer: Consumer;
  keys: string[];
}

type WorkloadId = `${WorkloadKind}/${string}/${string}`;

/**
 * Rolls the workloads that consume a key that changed, as the Integration's
 * reconcile asks after each sync. A workload is eligible when the Integration
 * names it (spec.reload.workloads) or it opts in (annotation coffer.dev/reload:
 * "true"); it is rolled only for the Secrets and ConfigMaps its pod template
 * reads, and only when the keyed checksum of the keys it reads differs from the
 * one recorded on it (checksumAnnotation). A workload first seen gets its
 * checksum recorded on its metadata, which rolls nothing (no storm when the
 * operator is installed or restarted); a differing checksum schedules a
 * rollout at the end of the debounce window, and the rollout sets every
 * differing checksum of the workload at once (metadata and pod template), so a
 * burst rolls it once. Everything decided is on the workload itself: a restart
 * finds what is due.
 */
export class WorkloadReloader {
  readonly #context: ReloaderContext;
  /** Reads (or makes) the checksum key; first called when a reload needs it, so an operator that never reconciles (a standby, another installation) writes nothing. */
  readonly #loadKey: (() => Promise<Buffer>) | undefined;
  #hasher: ReloadHasher | undefined;
  #loadingKey: Promise<Buffer> | undefined;
  /** Why the reload cannot work (its RBAC missing), when it cannot. */
  readonly #disabledBecause: string | undefined;
  /** When each workload's pending rollout is due. */
  readonly #dueAt = new Map<WorkloadId, number>();
  /** Checksums this operator wrote that the informer may not show yet (workload + annotation → value). */
  readonly #written = new Map<string, string>();
  /** Keys written since the workloads consuming them were last current, per namespace and target (for the Events). */
  readonly #changedKeys = new Map<string, Set<string>>();
  /** The generation this operator's last patch gave each workload, until the informer shows it. */
  readonly #patchedGeneration = new Map<WorkloadId, number>();

  constructor(context: ReloaderContext, state: ReloadState) {
    this.#context = context;
    this.#loadKey = 'loadKey' in state ? state.loadKey : undefined;
    this.#disabledBecause = 'disabledBecause' in state ? state.disabledBecause : undefined;
  }

  /** Keys a write of the Integration's target changed (named in the rollout's Event). */
  noteChangedKeys(resource: IntegrationResource, keys: readonly string[]): void {
    if (keys.length === 0 || !this.#loadKey) return;
    const id = targetId(resource.metadata.namespace, ref(resource));
    const known = this.#changedKeys.get(id) ?? new Set<string>();
    for (const key of keys) known.add(key);
    this.#changedKeys.set(id, known);
  }

  /** The Integrations whose reload a workload's appearance or change concerns: those in its namespace whose target it reads and that it may be rolled for. */
  integrationsConcerned(kind: WorkloadKind, workload: Workload): ObjectKey[] {
    const namespace = workload.metadata?.namespace;
    if (!namespace) return [];
    const reads = consumedKeys(workload.spec?.template?.spec);
    return this.#context.informers.integrations
      .list(namespace)
      .filter((resource) => reads.has(ref(resource)) && isEligible(resource, kind, workload))
      .map((resource) => keyOf('Integration', resource));
  }

  /**
   * After a sync: `data` is what the Integration's target holds now (its
   * keys; a Merge target's others come from the cache). Records baselines,
   * schedules and performs rollouts, and says how the reload stands.
   */
  async reconcile(resource: IntegrationResource, data: Record<string, string>, revision: Revision): Promise<ReloadReport | undefined> {
    const named = resource.spec.reload?.workloads ?? [];
    if (!this.#loadKey) {
      if (!resource.spec.reload) return undefined;
      return { condition: { type: 'Reloaded', status: 'False', reason: 'ReloadForbidden', message: `workload reload is off: ${this.#disabledBecause}` } };
    }
    const target = ref(resource);
    const { consumers, missing, notConsuming } = this.#consumersOf(resource, target);
    if (consumers.length === 0 && named.length === 0) {
      // nothing reads the target: a workload that comes later starts from its checksum, with no changed keys to name
      this.#changedKeys.delete(targetId(resource.metadata.namespace, target));
      return undefined;
    }
    if (!(await this.#ensureHasher())) {
      const message = `the key of the reload checksums (Secret ${RELOAD_KEY_SECRET} in the operator's namespace) could not be read or made; it is tried again`;
      return { condition: { type: 'Reloaded', status: 'False', reason: 'RolloutFailed', message }, recheckInMs: KEY_RETRY_MS };
    }
    const fullData = { ...this.#cachedData(resource), ...data };
    const due: { consumer: Consumer; dueAt: number }[] = [];
    for (const consumer of consumers) {
      const decision = await this.#decide(resource, consumer, target, fullData);
      if (decision !== undefined) due.push({ consumer, dueAt: decision });
    }
    const now = Date.now();
    const rolled: Rolled[] = [];
    for (const { consumer } of due.filter((entry) => entry.dueAt <= now)) {
      const keys = await this.#roll(consumer, resource, target, fullData, revision);
      if (keys === undefined) return { condition: this.#rolloutFailed(consumer) };
      rolled.push({ consumer, keys });
    }
    const waiting = due.filter((entry) => entry.dueAt > now);
    return this.#report({ resource, target, consumers, missing, notConsuming, rolled, waiting, revision, now });
  }

  async #ensureHasher(): Promise<ReloadHasher | undefined> {
    if (this.#hasher) return this.#hasher;
    try {
      this.#hasher = new ReloadHasher(await (this.#loadingKey ??= this.#loadKey!()));
    } catch (error) {
      this.#context.logger.warn({ error: describeError(error) }, `could not read or make the reload key (Secret ${RELOAD_KEY_SECRET})`);
    } finally {
      this.#loadingKey = undefined;
    }
    return this.#hasher;
  }

  /** The eligible workloads in the Integration's namespace that read its target; the named ones that are missing or read none of it. */
  #consumersOf(resource: IntegrationResource, target: TargetRef) {
    const { namespace } = resource.metadata;
    const workloads = this.#context.informers.workloads!;
    const consumers: Consumer[] = [];
    const named = new Set((resource.spec.reload?.workloads ?? []).map(({ kind, name }) => `${kind}/${name}`));
    const seen = new Set<string>();
    for (const kind of WORKLOAD_KINDS) {
      for (const workload of workloads[kind].list(namespace)) {
        const name = workload.metadata?.name ?? '';
        const isNamed = named.has(`${kind}/${name}`);
        if (isNamed) seen.add(`${kind}/${name}`);
        if (!isNamed && workload.metadata?.annotations?.[RELOAD_OPT_IN_ANNOTATION] !== 'true') continue;
        const consumed = consumedKeys(workload.spec?.template?.spec).get(target);
        if (consumed) consumers.push({ kind, workload, consumed });
        else if (isNamed) seen.add(`!${kind}/${name}`);
      }
    }
    const missing = [...named].filter((id) => !seen.has(id));
    const notConsuming = [...named].filter((id) => seen.has(`!${id}`));
    return { consumers, missing, notConsuming };
  }

  /** Undefined when the workload is current (or was just given its first checksum); else when its rollout is due. */
  async #decide(resource: IntegrationResource, consumer: Consumer, target: TargetRef, data: Record<string, string>): Promise<number | undefined> {
    const id = workloadId(consumer);
    const annotation = checksumAnnotation(target);
    const wanted = this.#hasher!.checksum(data, keysRead(consumer.consumed, data));
    const recorded = this.#recorded(consumer, annotation);
    if (recorded === wanted) return undefined;
    if (recorded === undefined) {
      await this.#patch(consumer, { metadata: { annotations: { [annotation]: wanted } } }, { [annotation]: wanted });
      return undefined;
    }
    const dueAt = this.#dueAt.get(id) ?? Date.now() + debounceOf(resource);
    this.#dueAt.set(id, dueAt);
    return dueAt;
  }

  /**
   * Rolls the workload: every Coffer checksum it should carry and does not
   * (for this target and any other it is eligible for) is set on its metadata
   * and its pod template, in one patch: one rollout.
   */
  async #roll(consumer: Consumer, resource: IntegrationResource, target: TargetRef, data: Record<string, string>, revision: Revision): Promise<string[] | undefined> {
    const checksums = this.#differingChecksums(consumer, target, data);
    const name = consumer.workload.metadata!.name!;
    const keys = this.#changedKeysOf(resource, consumer, data);
    try {
      await this.#patch(consumer, { metadata: { annotations: checksums }, spec: { template: { metadata: { annotations: checksums } } } }, checksums);
    } catch (error) {
      this.#context.logger.warn({ error: describeError(error), workload: `${consumer.kind}/${name}` }, `could not roll ${consumer.kind} ${name}`);
      return undefined;
    }
    this.#dueAt.delete(workloadId(consumer));
    this.#context.metrics?.rolledOut(consumer.kind);
    const message = `${consumer.kind} ${name} rolled: ${describeKeys(keys)} of ${describeTarget(resource)} changed (revision ${revision})`;
    this.#context.events.record(resource, 'Normal', 'Rolled', message);
    this.#context.events.record({ ...consumer.workload, apiVersion: 'apps/v1', kind: consumer.kind }, 'Normal', 'Rolled', message);
    this.#context.logger.info({ namespace: resource.metadata.namespace, workload: `${consumer.kind}/${name}`, revision, keys }, message);
    return keys;
  }

  /** Every checksum of the workload (eligible targets it reads) that differs from what is recorded; this target's with `data`. */
  #differingChecksums(consumer: Consumer, target: TargetRef, data: Record<string, string>): Record<string, string> {
    const { workload, kind } = consumer;
    const namespace = workload.metadata!.namespace!;
    const checksums: Record<string, string> = {};
    for (const [other, consumed] of consumedKeys(workload.spec?.template?.spec)) {
      const writer = this.#context.informers.integrations.list(namespace).find((resource) => ref(resource) === other && isEligible(resource, kind, workload));
      if (!writer) continue;
      const otherData = other === target ? data : this.#cachedData(writer);
      const annotation = checksumAnnotation(other);
      const wanted = this.#hasher!.checksum(otherData, keysRead(consumed, otherData));
      if (other === target || this.#recorded(consumer, annotation) !== wanted) checksums[annotation] = wanted;
    }
    return checksums;
  }

  async #patch(consumer: Consumer, patch: object, checksums: Record<string, string>): Promise<void> {
    const { namespace, name } = consumer.workload.metadata!;
    const generation = await this.#context.kube.patchWorkload(consumer.kind, namespace!, name!, patch);
    this.#patchedGeneration.set(workloadId(consumer), generation);
    for (const [annotation, value] of Object.entries(checksums)) this.#written.set(`${workloadId(consumer)}#${annotation}`, value);
  }

  /** The checksum recorded on the workload: what this operator wrote last, until the informer shows it. */
  #recorded(consumer: Consumer, annotation: string): string | undefined {
    const key = `${workloadId(consumer)}#${annotation}`;
    const cached = consumer.workload.metadata?.annotations?.[annotation];
    const written = this.#written.get(key);
    if (written !== undefined && written === cached) this.#written.delete(key);
    return written ?? cached;
  }

  #cachedData(resource: IntegrationResource): Record<string, string> {
    const { informers } = this.#context;
    const { namespace } = resource.metadata;
    const name = resource.spec.target.name;
    const kind = targetKindOf(resource);
    const cached = kind === 'Secret' ? informers.managedSecrets.get(name, namespace) : informers.managedConfigMaps.get(name, namespace);
    return cached ? liveData({ ...cached, kind }) : {};
  }

  /** The keys the workload reads that were written since it was last current (unknown after a restart). */
  #changedKeysOf(resource: IntegrationResource, consumer: Consumer, data: Record<string, string>): string[] {
    const changed = this.#changedKeys.get(targetId(resource.metadata.namespace, ref(resource)));
    const read = keysRead(consumer.consumed, data);
    return changed ? read.filter((key) => changed.has(key)) : [];
  }

  /** The consumers whose rollout has not finished: by their status, and never before it shows this operator's last patch. */
  #rolling(consumers: Consumer[]): WorkloadRef[] {
    return consumers
      .filter((consumer) => {
        const id = workloadId(consumer);
        const patched = this.#patchedGeneration.get(id) ?? 0;
        if (patched <= (consumer.workload.metadata?.generation ?? 0)) this.#patchedGeneration.delete(id);
        return !rolloutFinished(consumer.kind, consumer.workload, patched);
      })
      .map(({ kind, workload }) => ({ kind, namespace: workload.metadata!.namespace!, name: workload.metadata!.name! }))
      .slice(0, ROLLING_WORKLOADS_MAX);
  }

  #rolloutFailed(consumer: Consumer): ConditionUpdate {
    return {
      type: 'Reloaded',
      status: 'False',
      reason: 'RolloutFailed',
      message: `${consumer.kind} ${consumer.workload.metadata?.name} could not be patched (the apiserver refused or was unreachable); it is tried again`,
    };
  }

  #report(state: {
    resource: IntegrationResource;
    target: TargetRef;
    consumers: Consumer[];
    missing: string[];
    notConsuming: string[];
    rolled: Rolled[];
    waiting: { consumer: Consumer; dueAt: number }[];
    revision: Revision;
    now: number;
  }): ReloadReport {
    const { resource, consumers, missing, notConsuming, rolled, waiting, revision, now } = state;
    const target = describeTarget(resource);
    const names = (list: Consumer[]) => list.map(({ kind, workload }) => `${kind} ${workload.metadata?.name}`).join(', ');
    const notes = [
      ...missing.map((id) => `${id.replace('/', ' ')} does not exist`),
      ...notConsuming.map((id) => `${id.replace('/', ' ')} reads nothing of ${target} in its pod template and is not rolled`),
    ];
    const noted = notes.length > 0 ? `; ${notes.join('; ')}` : '';
    if (waiting.length > 0) {
      const soonest = Math.min(...waiting.map((entry) => entry.dueAt));
      return {
        condition: {
          type: 'Reloaded',
          status: 'False',
          reason: 'RolloutPending',
          message: `${names(waiting.map((entry) => entry.consumer))} roll${waiting.length === 1 ? 's' : ''} when the debounce window ends (${resource.spec.reload?.debounce ?? `${DEFAULT_DEBOUNCE_MS / 1000}s`})${noted}`,
        },
        recheckInMs: Math.max(0, soonest - now) + 10,
      };
    }
    this.#changedKeys.delete(targetId(resource.metadata.namespace, state.target));
    const lastRollout =
      rolled.length > 0
        ? {
            time: new Date(now).toISOString(),
            revision,
            workloads: rolled.map(({ consumer }) => `${consumer.kind}/${consumer.workload.metadata?.name}`),
            keys: [...new Set(rolled.flatMap((entry) => entry.keys))].sort(),
          }
        : undefined;
    if (missing.length > 0) {
      return {
        condition: { type: 'Reloaded', status: 'False', reason: 'WorkloadNotFound', message: `${notes.join('; ')}` },
        reloadedRevision: revision,
        rolling: this.#rolling(consumers),
        lastRollout,
      };
    }
    const message =
      rolled.length > 0
        ? `${names(rolled.map((entry) => entry.consumer))} rolled at revision ${revision}${noted}`
        : consumers.length > 0
          ? `${consumers.length} workload${consumers.length === 1 ? '' : 's'} read${consumers.length === 1 ? 's' : ''} ${target} (${names(consumers)}); all current${noted}`
          : `no workload reads ${target}${noted}`;
    return {
      condition: { type: 'Reloaded', status: 'True', reason: rolled.length > 0 ? 'Rolled' : 'UpToDate', message },
      reloadedRevision: revision,
      rolling: this.#rolling(consumers),
      lastRollout,
    };
  }
}

function ref(resource: IntegrationResource): TargetRef {
  return targetRef(targetKindOf(resource), resource.spec.target.name);
}

function targetId(namespace: string, target: TargetRef): string {
  return `${namespace}/${target}`;
}

function workloadId({ kind, workload }: Consumer): WorkloadId {
  return `${kind}/${workload.metadata?.namespace}/${workload.metadata?.name}`;
}

function isEligible(resource: IntegrationResource, kind: WorkloadKind, workload: Workload): boolean {
  if (workload.metadata?.annotations?.[RELOAD_OPT_IN_ANNOTATION] === 'true') return true;
  return (resource.spec.reload?.workloads ?? []).some((named) => named.kind === kind && named.name === workload.metadata?.name);
}

function debounceOf(resource: IntegrationResource): number {
  const window = resource.spec.reload?.debounce;
  if (window === undefined) return DEFAULT_DEBOUNCE_MS;
  if (/^0+(\.0+)?(ms|s|m|h)$/.test(window)) return 0;
  return parseDuration(window) ?? DEFAULT_DEBOUNCE_MS;
}

function describeKeys(keys: readonly string[]): string {
  if (keys.length === 0) return 'keys it reads';
  const shown = keys.slice(0, 20).join(', ');
  return `key${keys.length === 1 ? '' : 's'} ${shown}${keys.length > 20 ? `, and ${keys.length - 20} more` : ''}`;
}
