import type { V1Secret } from '@kubernetes/client-node';
import type { Revision } from '../../port/coffer-port.ts';
import { ANNOTATION_DATA_HASH, ANNOTATION_INSTALLATION, ANNOTATION_INTEGRATION, API_VERSION, type IntegrationResource } from '../../resources.ts';
import { ABSENT, apiRefusal, isConflict } from '../../runtime/kube-api.ts';
import { formatNamespacedName } from '../../runtime/object-key.ts';
import { type ControllerContext, NotReadyError } from '../context.ts';
import {
  dataHash,
  desiredSecret,
  emptyApply,
  fieldManagerOf,
  isCofferManager,
  isCurrent,
  isOwnSecret,
  MAX_SECRET_DATA_BYTES,
  MERGE_MANAGER_PREFIX,
  policyOf,
  secretDataBytes,
} from './managed-secret.ts';

/** What a write did: created the Secret, updated it, put it back after a change outside Coffer, or nothing (it was current). */
export type WriteOutcome = { kind: 'created' | 'updated' | 'unchanged' } | { kind: 'repaired'; drift: string };

/** Longest apiserver message quoted in a status or Event. */
const QUOTED_MESSAGE_MAX = 1_000;

/**
 * The Secret an Integration writes. Owner and Orphan: the whole Secret is
 * the Integration's: created when absent, written when it differs from the
 * source (keys someone else added are removed: drift means different from
 * the source), never written over when someone else's. Merge: only its own
 * keys, with its own field manager, never taking a key another Integration
 * or tool holds. A refusal of the apiserver becomes a NotReadyError with a
 * specific reason; the Secret keeps its last data.
 */
export class TargetSecret {
  readonly #context: ControllerContext;

  constructor(context: ControllerContext) {
    this.#context = context;
  }

  async write(resource: IntegrationResource, data: Record<string, string>, revision: Revision): Promise<WriteOutcome> {
    const bytes = secretDataBytes(data);
    if (bytes > MAX_SECRET_DATA_BYTES) {
      throw new NotReadyError(
        'SecretTooLarge',
        `the source's values add up to ${bytes} bytes; a Secret holds at most ${MAX_SECRET_DATA_BYTES} (1 MiB). Nothing was written: Secret '${resource.spec.target.name}' keeps its last data. Sync a smaller folder (a deeper secretPath, without recursive or imports)`,
        'on-change',
      );
    }
    try {
      return policyOf(resource) === 'Merge' ? await this.#merge(resource, data, revision) : await this.#own(resource, data, revision);
    } catch (error) {
      throw asRefusal(error, resource.spec.target.name) ?? error;
    }
  }

  /**
   * Access was revoked, or the source was deleted and the spec asks for the
   * Secret to go: an Owner or Orphan Secret of this Integration is deleted, a
   * Merge Integration's keys are removed. True when something was removed.
   */
  async remove(resource: IntegrationResource): Promise<boolean> {
    const { kube, informers, identity } = this.#context;
    const { namespace } = resource.metadata;
    const name = resource.spec.target.name;
    if (policyOf(resource) === 'Merge') return this.#giveUpKeys(resource);
    const live = informers.managedSecrets.get(name, namespace) ?? (resource.status?.dataHash ? await kube.readSecret(namespace, name) : undefined);
    if (!live || !isOwnSecret(live, resource, identity.installationId)) return false;
    await kube.deleteSecret(namespace, name);
    return true;
  }

  /** The Integration is deleted: its Secret goes (Owner), loses its keys (Merge) or stays (Orphan). */
  async release(resource: IntegrationResource): Promise<void> {
    const { kube, identity } = this.#context;
    const { namespace } = resource.metadata;
    const name = resource.spec.target.name;
    const policy = policyOf(resource);
    if (policy === 'Merge') {
      await this.#giveUpKeys(resource);
      return;
    }
    const live = await kube.readSecret(namespace, name);
    if (policy === 'Owner' && live && isOwnSecret(live, resource, identity.installationId)) await kube.deleteSecret(namespace, name);
  }

  async #own(resource: IntegrationResource, data: Record<string, string>, revision: Revision): Promise<WriteOutcome> {
    const { kube, informers, identity } = this.#context;
    const { namespace } = resource.metadata;
    const name = resource.spec.target.name;
    const desired = desiredSecret(resource, data, revision, identity.installationId);
    const hash = dataHash(data);
    const cached = informers.managedSecrets.get(name, namespace);
    // Not among the labelled Secrets: created on condition that no Secret of that name exists (no read first).
    if (!cached && (await this.#createIfAbsent(desired))) {
      return resource.status?.dataHash === hash ? { kind: 'repaired', drift: 'was deleted' } : { kind: 'created' };
    }
    const live = cached ?? (await kube.readSecret(namespace, name));
    if (live) this.#assertOwn(resource, live);
    if (live && isCurrent(live, desired, policyOf(resource))) return { kind: 'unchanged' };
    // A Secret just read is written only if it is still the one checked above.
    const applied = await kube.applySecret(desired, { expectedVersion: cached ? undefined : (live?.metadata?.resourceVersion ?? ABSENT) });
    const foreign = Object.keys(applied.data ?? {}).filter((key) => !(key in data));
    // keys another field manager set stay through an apply: removed on purpose
    if (foreign.length > 0) await kube.removeSecretKeys(namespace, name, foreign, applied.metadata!.resourceVersion!);
    if (!live) return resource.status?.dataHash === hash ? { kind: 'repaired', drift: 'was deleted' } : { kind: 'created' };
    if (foreign.length > 0) return { kind: 'repaired', drift: `was changed outside Coffer (${foreign.length} key${foreign.length === 1 ? '' : 's'} added)` };
    return live.metadata?.annotations?.[ANNOTATION_DATA_HASH] === hash ? { kind: 'repaired', drift: 'was changed outside Coffer' } : { kind: 'updated' };
  }

  async #merge(resource: IntegrationResource, data: Record<string, string>, revision: Revision): Promise<WriteOutcome> {
    const { kube, informers, identity } = this.#context;
    const { namespace } = resource.metadata;
    const name = resource.spec.target.name;
    const live = informers.managedSecrets.get(name, namespace) ?? (await kube.readSecret(namespace, name));
    if (!live) throw new NotReadyError('TargetMissing', `creationPolicy Merge needs an existing Secret '${name}'`, { afterMs: 30_000 });
    this.#assertMergeable(resource, live);
    const desired = desiredSecret(resource, data, revision, identity.installationId, live);
    // its keys as they should be, and no key of its last sync gone from the source since (that one the apply removes)
    if (isCurrent(live, desired, 'Merge') && resource.status?.dataHash === dataHash(data)) return { kind: 'unchanged' };
    const fieldManager = fieldManagerOf(resource);
    try {
      await kube.applySecret(desired, { fieldManager, force: false });
      return { kind: 'updated' };
    } catch (error) {
      if (!isConflict(error)) throw error;
      const conflicts = fieldConflicts(error);
      const byIntegrations = conflicts.filter((conflict) => isCofferManager(conflict.manager));
      // Before its first sync a key someone already set is theirs; after it, a change to one of its keys is drift.
      if (byIntegrations.length > 0 || !resource.status?.dataHash) throw keyConflict(resource, conflicts);
      await kube.applySecret(desired, { fieldManager, force: true });
      return { kind: 'repaired', drift: `was changed outside Coffer (${conflicts.map((conflict) => conflict.field).join(', ')})` };
    }
  }

  /** Applies `desired` if no Secret of its name exists; false when one does (409). */
  async #createIfAbsent(desired: V1Secret): Promise<boolean> {
    try {
      await this.#context.kube.applySecret(desired, { expectedVersion: ABSENT });
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }

  /** A Merge Integration gives up every field it owns (its keys); the Secret stays. True when it owned any. */
  async #giveUpKeys(resource: IntegrationResource): Promise<boolean> {
    const { kube } = this.#context;
    const { namespace } = resource.metadata;
    const name = resource.spec.target.name;
    const live = await kube.readSecret(namespace, name);
    const manager = fieldManagerOf(resource);
    if (!live?.metadata?.managedFields?.some((entry) => entry.manager === manager)) return false;
    await kube.applySecret(emptyApply(namespace, name), { fieldManager: manager, expectedVersion: live.metadata.resourceVersion });
    return true;
  }

  #assertInstallation(resource: IntegrationResource, live: V1Secret): void {
    const { installationId } = this.#context.identity;
    const installation = live.metadata?.annotations?.[ANNOTATION_INSTALLATION];
    if (installation && installation !== installationId) {
      throw new NotReadyError(
        'InstallationConflict',
        `Secret '${resource.spec.target.name}' is managed by Coffer installation ${installation}; this installation (${installationId}) does not write it`,
      );
    }
  }

  #assertOwn(resource: IntegrationResource, live: V1Secret): void {
    this.#assertInstallation(resource, live);
    if (!isOwnSecret(live, resource, this.#context.identity.installationId)) {
      throw new NotReadyError(
        'SecretConflict',
        `Secret '${resource.spec.target.name}' exists and is not managed by this Integration; use creationPolicy Merge to add keys to it`,
      );
    }
  }

  /** Merge adds keys to a Secret no Integration owns as a whole. */
  #assertMergeable(resource: IntegrationResource, live: V1Secret): void {
    this.#assertInstallation(resource, live);
    const self = formatNamespacedName(resource.metadata);
    const writer = live.metadata?.annotations?.[ANNOTATION_INTEGRATION];
    const owner = live.metadata?.ownerReferences?.find((reference) => reference.apiVersion === API_VERSION && reference.kind === 'Integration');
    const other = writer && writer !== self ? writer : owner && owner.uid !== resource.metadata.uid ? `${resource.metadata.namespace}/${owner.name}` : undefined;
    if (other) {
      throw new NotReadyError(
        'SecretConflict',
        `Secret '${resource.spec.target.name}' is written as a whole by Integration ${other} (creationPolicy Owner or Orphan); Merge adds keys only to a Secret that no Integration owns`,
      );
    }
  }
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
    `Secret '${resource.spec.target.name}' already holds other values for ${holders.join(', ')}; this Integration does not take them over and writes none of its keys until they are free`,
  );
}

function describeManager(resource: IntegrationResource, manager: string): string {
  if (manager.startsWith(MERGE_MANAGER_PREFIX)) return `set by Integration ${resource.metadata.namespace}/${manager.slice(MERGE_MANAGER_PREFIX.length)}`;
  if (isCofferManager(manager)) return 'set by an Integration that owns the Secret';
  return `set by ${manager}`;
}

/**
 * A refusal of the apiserver as the status reports it (a reason of its own,
 * the apiserver's message, retried slowly); undefined for what is not a
 * refusal (the apiserver unreachable, overloaded, or a race to retry).
 */
function asRefusal(error: unknown, name: string): NotReadyError | undefined {
  const refusal = apiRefusal(error);
  if (!refusal || refusal.status >= 500 || [404, 409, 429].includes(refusal.status)) return undefined;
  const reason =
    refusal.status === 422
      ? 'SecretInvalid'
      : refusal.status === 403 || refusal.status === 401
        ? 'SecretForbidden'
        : refusal.status === 413
          ? 'SecretTooLarge'
          : 'SecretRefused';
  const said = refusal.message.length > QUOTED_MESSAGE_MAX ? `${refusal.message.slice(0, QUOTED_MESSAGE_MAX)}…` : refusal.message;
  return new NotReadyError(
    reason,
    `the apiserver refused Secret '${name}' (${refusal.status}${refusal.reason ? ` ${refusal.reason}` : ''}): ${said}. The Secret keeps its last data`,
    'slow-backoff',
  );
}
