import type { V1Secret } from '@kubernetes/client-node';
import type { Revision } from '../../port/coffer-port.ts';
import { ANNOTATION_DATA_HASH, ANNOTATION_INSTALLATION, ANNOTATION_INTEGRATION, type IntegrationResource, MANAGED_BY_LABEL } from '../../resources.ts';
import { ABSENT, isConflict } from '../../runtime/kube-api.ts';
import { formatNamespacedName } from '../../runtime/object-key.ts';
import { type ControllerContext, NotReadyError } from '../context.ts';
import { dataHash, desiredSecret, emptyApply, liveDataHash } from './managed-secret.ts';

/**
 * The Secret an Integration writes: server-side applied unless the live one
 * already holds exactly this data, put back when it was changed or deleted
 * outside Coffer (drift), never written over when someone else's.
 */
export class TargetSecret {
  readonly #context: ControllerContext;

  constructor(context: ControllerContext) {
    this.#context = context;
  }

  /** Writes `data` at `revision` if the Secret differs; true when it wrote. */
  async applyIfChanged(resource: IntegrationResource, data: Record<string, string>, revision: Revision): Promise<boolean> {
    const context = this.#context;
    const target = resource.spec.target;
    const policy = target.creationPolicy ?? 'Owner';
    const desired = desiredSecret(resource, data, revision, context.identity.installationId);
    const hash = dataHash(data);
    const wasDeleted = resource.status?.dataHash === hash ? 'was deleted' : undefined;
    const cached = context.informers.managedSecrets.get(target.name, resource.metadata.namespace);
    // Not among the Secrets we manage: created on condition that no Secret of that name exists (no read first).
    if (!cached && policy !== 'Merge' && (await this.#createIfAbsent(desired))) {
      this.#recordWrite(resource, data, revision, wasDeleted);
      return true;
    }
    const live = cached ?? (await context.kube.readSecret(resource.metadata.namespace, target.name));
    this.#assertWritable(resource, live, policy);
    const liveHash = live ? liveDataHash(live, policy === 'Merge' ? Object.keys(data) : undefined) : undefined;
    const annotated = live?.metadata?.annotations?.[ANNOTATION_DATA_HASH];
    if (live && liveHash === hash && annotated === hash) return false;
    // A Secret just read is written only if it is still the one checked above.
    await context.kube.applySecret(desired, cached ? undefined : (live?.metadata?.resourceVersion ?? ABSENT));
    this.#recordWrite(resource, data, revision, live ? (annotated === hash ? 'was changed outside Coffer' : undefined) : wasDeleted);
    return true;
  }

  /** The Integration is deleted: its Secret goes (Owner), loses Coffer's keys (Merge) or stays (Orphan), if it is still its own. */
  async release(resource: IntegrationResource): Promise<void> {
    const { kube, identity } = this.#context;
    const { namespace } = resource.metadata;
    const name = resource.spec.target.name;
    const live = await kube.readSecret(namespace, name);
    const annotations = live?.metadata?.annotations;
    const installation = annotations?.[ANNOTATION_INSTALLATION];
    const ours = annotations?.[ANNOTATION_INTEGRATION] === formatNamespacedName(resource.metadata) && (!installation || installation === identity.installationId);
    const policy = resource.spec.target.creationPolicy ?? 'Owner';
    if (ours && policy === 'Owner') await kube.deleteSecret(namespace, name);
    if (ours && policy === 'Merge') await kube.applySecret(emptyApply(namespace, name));
  }

  /** Applies `desired` if no Secret of its name exists; false when one does (409). */
  async #createIfAbsent(desired: V1Secret): Promise<boolean> {
    try {
      await this.#context.kube.applySecret(desired, ABSENT);
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }

  /** A Synced event, or DriftRepaired when the Secret had been changed or deleted outside Coffer. */
  #recordWrite(resource: IntegrationResource, data: Record<string, string>, revision: Revision, drift: string | undefined): void {
    const { events, logger } = this.#context;
    const name = resource.spec.target.name;
    const { namespace } = resource.metadata;
    const keys = Object.keys(data).length;
    const fields = { namespace, secret: name, integration: resource.metadata.name, revision, keys };
    if (drift) {
      events.record(resource, 'Normal', 'DriftRepaired', `Secret '${name}' ${drift} and has been restored`);
      logger.info(fields, `Secret ${namespace}/${name} ${drift}; restored (revision ${revision})`);
    } else {
      events.record(resource, 'Normal', 'Synced', `Secret '${name}' updated to revision ${revision} (${keys} keys)`);
      logger.info(fields, `Secret ${namespace}/${name} written at revision ${revision} (${keys} keys)`);
    }
  }

  #assertWritable(resource: IntegrationResource, live: V1Secret | undefined, policy: string): void {
    const { installationId } = this.#context.identity;
    const name = resource.spec.target.name;
    const installation = live?.metadata?.annotations?.[ANNOTATION_INSTALLATION];
    if (installation && installation !== installationId) {
      throw new NotReadyError('InstallationConflict', `Secret '${name}' is managed by Coffer installation ${installation}; this installation (${installationId}) does not write it`);
    }
    if (policy === 'Merge') {
      if (!live) throw new NotReadyError('TargetMissing', `creationPolicy Merge needs an existing Secret '${name}'`, { afterMs: 30_000 });
      return;
    }
    if (!live) return;
    const ours = live.metadata?.labels?.[MANAGED_BY_LABEL] === 'coffer' && live.metadata?.annotations?.[ANNOTATION_INTEGRATION] === formatNamespacedName(resource.metadata);
    if (!ours) throw new NotReadyError('SecretConflict', `Secret '${name}' exists and is not managed by this Integration; use creationPolicy Merge to add keys to it`);
  }
}
