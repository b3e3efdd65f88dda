import type { Revision } from '../../port/coffer-port.ts';
import {
  ANNOTATION_DATA_HASH,
  ANNOTATION_INSTALLATION,
  ANNOTATION_INTEGRATION,
  ANNOTATION_REVISION,
  API_VERSION,
  type IntegrationResource,
  type TargetKind,
} from '../../resources.ts';
import { ABSENT, apiRefusal, isConflict, type TargetObject } from '../../runtime/kube-api.ts';
import { formatNamespacedName } from '../../runtime/object-key.ts';
import type { ConditionReason } from '../../runtime/condition-reason.ts';
import { type ControllerContext, NotReadyError } from '../context.ts';
import {
  cachedTarget,
  claimedElsewhere,
  describeTarget,
  desiredTarget,
  emptyApply,
  fieldManagerOf,
  hasTypeChanged,
  isCofferManager,
  isCurrent,
  isOwnTarget,
  liveData,
  MAX_TARGET_DATA_BYTES,
  MERGE_MANAGER_PREFIX,
  ownedBy,
  ownValue,
  policyOf,
  targetDataBytes,
  targetKindOf,
} from './managed-target.ts';
import { checkSecretType } from './secret-types.ts';
import { ClaimedElsewhere } from './target-claim.ts';

/**
 * What a write did: created the object, updated it, put it back after a
 * change outside Coffer, recreated it with another type, or nothing (it was current).
 */
export type WriteOutcome = Written & {
  /** The keys whose value the write changed (added, altered or removed), as the cache saw the target before; names only. */
  changed: string[];
  /**
   * The revision the target holds the data of afterwards: the one written, or
   * for an unchanged Owner or Orphan object the one its annotation names
   * (unknown for an unchanged Merge: the object is not the Integration's alone).
   */
  heldRevision: Revision | undefined;
};

type Written = { kind: 'created' | 'updated' | 'retyped' } | { kind: 'unchanged'; heldRevision?: Revision } | { kind: 'repaired'; drift: string };

/** Longest apiserver message quoted in a status or Event. */
const QUOTED_MESSAGE_MAX = 1_000;

/**
 * The Secret or ConfigMap an Integration writes. Owner and Orphan: the whole
 * object is the Integration's: created when absent, written when it differs
 * from the source (keys someone else added are removed: drift means
 * different from the source), recreated when its Secret type must change
 * (Kubernetes never changes it in place), never written over when someone
 * else's. Merge: only its own keys, with its own field manager, never taking
 * a key another Integration or tool holds. A refusal of the apiserver becomes
 * a NotReadyError with a specific reason; the target keeps its last data.
 */
export class TargetWriter {
  readonly #context: ControllerContext;

  constructor(context: ControllerContext) {
    this.#context = context;
  }

  /** `hash`: the data's hash (DataHasher), which the target's annotation and the status carry. */
  async write(resource: IntegrationResource, data: Record<string, string>, revision: Revision, hash: string): Promise<WriteOutcome> {
    const kind = targetKindOf(resource);
    const bytes = targetDataBytes(data);
    if (bytes > MAX_TARGET_DATA_BYTES) {
      throw new NotReadyError(
        kind === 'Secret' ? 'SecretTooLarge' : 'ConfigMapTooLarge',
        `the data adds up to ${bytes} bytes; a ${kind} holds at most ${MAX_TARGET_DATA_BYTES} (1 MiB). Nothing was written: ${describeTarget(resource)} keeps its last data. Sync a smaller folder (a deeper secretPath, without recursive or imports) or select fewer keys`,
        'on-change',
      );
    }
    if (kind === 'Secret') checkSecretType(resource, data);
    const before = this.#cached(resource);
    try {
      const written = policyOf(resource) === 'Merge' ? await this.#merge(resource, data, revision, hash) : await this.#own(resource, data, revision, hash);
      const heldRevision = written.kind === 'unchanged' ? written.heldRevision : revision;
      return { ...written, changed: changedKeys(before ? liveData(before) : {}, data, policyOf(resource) === 'Merge'), heldRevision };
    } catch (error) {
      throw asRefusal(error, resource) ?? error;
    }
  }

  /**
   * Access was revoked, or the source was deleted and the spec asks for the
   * target to go: an Owner or Orphan object of this Integration is deleted, a
   * Merge Integration's keys are removed. True when something was removed.
   */
  async remove(resource: IntegrationResource): Promise<boolean> {
    const { kube, identity } = this.#context;
    const { namespace } = resource.metadata;
    const name = resource.spec.target.name;
    const kind = targetKindOf(resource);
    if (policyOf(resource) === 'Merge') return this.#giveUpKeys(resource);
    const live = this.#cached(resource) ?? (resource.status?.dataHash ? await kube.readTarget(kind, namespace, name) : undefined);
    if (!live || !isOwnTarget(live, resource, identity.installationId)) return false;
    await kube.deleteTarget(kind, namespace, name);
    return true;
  }

  /**
   * The Integration is deleted: its target goes (Owner), loses its keys (Merge) or stays (Orphan). An Owner target
   * goes only while this Integration (by uid) owns it, on condition that it is still the object read: a later
   * Integration of the same name may have made one since.
   */
  async release(resource: IntegrationResource): Promise<void> {
    const { kube, identity } = this.#context;
    const { namespace, uid } = resource.metadata;
    const name = resource.spec.target.name;
    const kind = targetKindOf(resource);
    const policy = policyOf(resource);
    if (policy === 'Merge') {
      await this.#giveUpKeys(resource);
      return;
    }
    if (policy !== 'Owner') return;
    const live = await kube.readTarget(kind, namespace, name);
    if (live && ownedBy(live, uid) && isOwnTarget(live, resource, identity.installationId)) await kube.deleteTarget(kind, namespace, name, live.metadata!.uid);
  }

  /** The labelled object of this name in the informer's cache. */
  #cached(resource: IntegrationResource): TargetObject | undefined {
    return cachedTarget(this.#context.informers, resource);
  }

  async #own(resource: IntegrationResource, data: Record<string, string>, revision: Revision, hash: string): Promise<Written> {
    const { kube, identity } = this.#context;
    const { namespace } = resource.metadata;
    const name = resource.spec.target.name;
    const kind = targetKindOf(resource);
    const desired = desiredTarget(resource, data, revision, identity.installationId, hash);
    const cached = this.#cached(resource);
    // Not among the labelled objects: created on condition that none of that name exists (no read first).
    if (!cached && (await this.#createIfAbsent(desired))) {
      return resource.status?.dataHash === hash ? { kind: 'repaired', drift: 'was deleted' } : { kind: 'created' };
    }
    const live = cached ?? (await kube.readTarget(kind, namespace, name));
    if (live) this.#assertOwn(resource, live);
    if (live && isCurrent(live, desired, policyOf(resource))) return { kind: 'unchanged', heldRevision: revisionOf(live) };
    if (live && hasTypeChanged(live, desired)) return this.#retype(live, desired);
    // An object just read is written only if it is still the one checked above.
    const applied = await kube.applyTarget(desired, { expectedVersion: cached ? undefined : (live?.metadata?.resourceVersion ?? ABSENT) });
    const foreign = Object.keys(applied.data ?? {}).filter((key) => !Object.hasOwn(data, key));
    // keys another field manager set stay through an apply: removed on purpose
    if (foreign.length > 0) await kube.removeTargetKeys(kind, namespace, name, foreign, applied.metadata!.resourceVersion!);
    if (!live) return resource.status?.dataHash === hash ? { kind: 'repaired', drift: 'was deleted' } : { kind: 'created' };
    if (foreign.length > 0) return { kind: 'repaired', drift: `was changed outside Coffer (${foreign.length} key${foreign.length === 1 ? '' : 's'} added)` };
    return live.metadata?.annotations?.[ANNOTATION_DATA_HASH] === hash ? { kind: 'repaired', drift: 'was changed outside Coffer' } : { kind: 'updated' };
  }

  /** A Secret's type never changes in place: this Integration's own Secret is deleted (if still the one read) and created anew. */
  async #retype(live: TargetObject, desired: TargetObject): Promise<Written> {
    const { namespace, name, uid } = live.metadata!;
    await this.#context.kube.deleteTarget(live.kind as TargetKind, namespace!, name!, uid);
    await this.#context.kube.applyTarget(desired, { expectedVersion: ABSENT });
    return { kind: 'retyped' };
  }

  async #merge(resource: IntegrationResource, data: Record<string, string>, revision: Revision, hash: string): Promise<Written> {
    const { kube, identity } = this.#context;
    const { namespace } = resource.metadata;
    const name = resource.spec.target.name;
    const kind = targetKindOf(resource);
    const live = this.#cached(resource) ?? (await kube.readTarget(kind, namespace, name));
    if (!live) throw new NotReadyError('TargetMissing', `creationPolicy Merge needs an existing ${kind} '${name}'`, { afterMs: 30_000 });
    this.#assertMergeable(resource, live);
    const desired = desiredTarget(resource, data, revision, identity.installationId, hash, live);
    // its keys as they should be, and no key of its last sync gone from the source since (that one the apply removes)
    if (isCurrent(live, desired, 'Merge') && resource.status?.dataHash === hash) return { kind: 'unchanged' };
    const fieldManager = fieldManagerOf(resource);
    try {
      await kube.applyTarget(desired, { fieldManager, force: false });
      return { kind: 'updated' };
    } catch (error) {
      if (!isConflict(error)) throw error;
      const conflicts = fieldConflicts(error);
      const byIntegrations = conflicts.filter((conflict) => isCofferManager(conflict.manager));
      // Before its first sync a key someone already set is theirs; after it, a change to one of its keys is drift.
      if (byIntegrations.length > 0 || !resource.status?.dataHash) throw keyConflict(resource, conflicts);
      await kube.applyTarget(desired, { fieldManager, force: true });
      return { kind: 'repaired', drift: `was changed outside Coffer (${conflicts.map((conflict) => conflict.field).join(', ')})` };
    }
  }

  /** Applies `desired` if no object of its kind and name exists; false when one does (409). */
  async #createIfAbsent(desired: TargetObject): Promise<boolean> {
    try {
      await this.#context.kube.applyTarget(desired, { expectedVersion: ABSENT });
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }

  /** A Merge Integration gives up every field it owns (its keys); the object stays. True when it owned any. */
  async #giveUpKeys(resource: IntegrationResource): Promise<boolean> {
    const { kube } = this.#context;
    const { namespace } = resource.metadata;
    const name = resource.spec.target.name;
    const kind = targetKindOf(resource);
    const live = await kube.readTarget(kind, namespace, name);
    const manager = fieldManagerOf(resource);
    if (!live?.metadata?.managedFields?.some((entry) => entry.manager === manager)) return false;
    await kube.applyTarget(emptyApply(kind, namespace, name), { fieldManager: manager, expectedVersion: live.metadata.resourceVersion });
    return true;
  }

  #assertInstallation(resource: IntegrationResource, live: TargetObject): void {
    const { installationId } = this.#context.identity;
    const installation = live.metadata?.annotations?.[ANNOTATION_INSTALLATION];
    // not yet held by this installation (claimed by its target): another one created the target for it first
    const other = claimedElsewhere(live, resource, installationId);
    if (other && !this.#context.status.holds('Integration', resource)) throw new ClaimedElsewhere(other);
    if (installation && installation !== installationId) {
      throw new NotReadyError(
        'InstallationConflict',
        `${describeTarget(resource)} is managed by Coffer installation ${installation}; this installation (${installationId}) does not write it`,
      );
    }
  }

  #assertOwn(resource: IntegrationResource, live: TargetObject): void {
    this.#assertInstallation(resource, live);
    if (!isOwnTarget(live, resource, this.#context.identity.installationId)) {
      throw new NotReadyError(
        conflictReason(resource),
        `${describeTarget(resource)} exists and is not managed by this Integration; use creationPolicy Merge to add keys to it`,
      );
    }
  }

  /** Merge adds keys to an object no Integration owns as a whole. */
  #assertMergeable(resource: IntegrationResource, live: TargetObject): void {
    this.#assertInstallation(resource, live);
    const self = formatNamespacedName(resource.metadata);
    const writer = live.metadata?.annotations?.[ANNOTATION_INTEGRATION];
    const owner = live.metadata?.ownerReferences?.find((reference) => reference.apiVersion === API_VERSION && reference.kind === 'Integration');
    const other = writer && writer !== self ? writer : owner && owner.uid !== resource.metadata.uid ? `${resource.metadata.namespace}/${owner.name}` : undefined;
    if (other) {
      throw new NotReadyError(
        conflictReason(resource),
        `${describeTarget(resource)} is written as a whole by Integration ${other} (creationPolicy Owner or Orphan); Merge adds keys only to a ${targetKindOf(resource)} that no Integration owns`,
      );
    }
  }
}

/** The revision a target's annotation names, if it names one. */
function revisionOf(live: TargetObject): Revision | undefined {
  const revision = Number(live.metadata?.annotations?.[ANNOTATION_REVISION]);
  return Number.isSafeInteger(revision) && revision > 0 ? revision : undefined;
}

/** Keys whose value differs between `before` and `after` (for Merge, only `after`'s own keys). */
function changedKeys(before: Record<string, string>, after: Record<string, string>, mergeOnly: boolean): string[] {
  const keys = mergeOnly ? Object.keys(after) : [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys.filter((key) => ownValue(before, key) !== ownValue(after, key)).sort();
}

interface FieldConflict {
  field: string;
  manager: string;
}

/** The fields and field managers a server-side apply conflicted with (from the 409's Status causes). */
function fieldConflicts(error: unknown): FieldConflict[] {
  return (apiRefusal(error)?.causes ?? []).map((cause) => ({
    field: cause.field ?? '(unknown field)',
    manager: /conflict with "([^"]*)"/.exec(cause.message ?? '')?.[1] ?? '(unknown manager)',
  }));
}

function keyConflict(resource: IntegrationResource, conflicts: FieldConflict[]): NotReadyError {
  const holders = conflicts.map(({ field, manager }) => `${field} (${describeManager(resource, manager)})`);
  return new NotReadyError(
    'KeyConflict',
    `${describeTarget(resource)} already holds other values for ${holders.join(', ')}; this Integration does not take them over and writes none of its keys until they are free`,
  );
}

function describeManager(resource: IntegrationResource, manager: string): string {
  if (manager.startsWith(MERGE_MANAGER_PREFIX)) return `set by Integration ${resource.metadata.namespace}/${manager.slice(MERGE_MANAGER_PREFIX.length)}`;
  if (isCofferManager(manager)) return 'set by an Integration that owns the Secret';
  return `set by ${manager}`;
}

function conflictReason(resource: IntegrationResource): ConditionReason {
  return targetKindOf(resource) === 'Secret' ? 'SecretConflict' : 'ConfigMapConflict';
}

/**
 * A refusal of the apiserver as the status reports it (a reason of its own,
 * the apiserver's message, retried slowly); undefined for what is not a
 * refusal (the apiserver unreachable, overloaded, or a race to retry).
 */
function asRefusal(error: unknown, resource: IntegrationResource): NotReadyError | undefined {
  const refusal = apiRefusal(error);
  if (!refusal || refusal.status >= 500 || [404, 409, 429].includes(refusal.status)) return undefined;
  const what = refusal.status === 422 ? 'Invalid' : refusal.status === 403 || refusal.status === 401 ? 'Forbidden' : refusal.status === 413 ? 'TooLarge' : 'Refused';
  const reason = `${targetKindOf(resource)}${what}` as const;
  const said = refusal.message.length > QUOTED_MESSAGE_MAX ? `${refusal.message.slice(0, QUOTED_MESSAGE_MAX)}…` : refusal.message;
  return new NotReadyError(
    reason,
    `the apiserver refused ${describeTarget(resource)} (${refusal.status}${refusal.reason ? ` ${refusal.reason}` : ''}): ${said}. The ${targetKindOf(resource)} keeps its last data`,
    'slow-backoff',
  );
}
