import type { V1Secret } from '@kubernetes/client-node';
import { AppError } from '../errors.ts';
import { normalizeSecretPath } from '../folders/secret-path.ts';
import type { OperatorContext } from './context.ts';
import { NotReadyError } from './context.ts';
import { dataHash, desiredSecret, emptyApply, liveDataHash, resolveSecretData } from './managed-secret.ts';
import { ABSENT, isConflict } from './kube-api.ts';
import { mayReconcile } from './installation-guard.ts';
import { resolveProject } from './project-resolution.ts';
import { ensureFinalizer, removeFinalizer, writeStatus } from './resource-status.ts';
import { ANNOTATION_DATA_HASH, ANNOTATION_INSTALLATION, ANNOTATION_INTEGRATION, type IntegrationResource, MANAGED_BY_LABEL, resourceKey } from './resources.ts';

/**
 * Integration → an integration record in the API and a native Secret holding
 * the resolved plain secrets, written only when its content differs.
 */
export async function reconcileIntegration(context: OperatorContext, resource: IntegrationResource): Promise<number | void> {
  const key = resourceKey(resource.metadata.namespace, resource.metadata.name);
  if (!(await mayReconcile(context, 'Integration', resource))) return;
  if (resource.metadata.deletionTimestamp) return finalize(context, resource, key);
  await ensureFinalizer(context, 'Integration', resource);
  let integrationId = resource.status?.integrationId;
  // everything read below is at least this current; changes after it reach the Integration once it is indexed
  const readAt = await context.services.changes.latestRevision(context.services.db);
  try {
    const project = await resolveProject(context, resource.metadata.namespace, resource.spec);
    const record = await context.services.integrations.upsertManaged(context.actor, {
      managedBy: key,
      projectId: project.projectId,
      environment: resource.spec.environment,
      secretPath: resource.spec.secretPath ?? '/',
      app: resource.spec.target.name,
      owner: resource.metadata.namespace,
      targetEnvironment: resource.metadata.namespace,
      isActive: resource.spec.isActive,
      metadata: {
        installationId: context.installationId,
        cluster: context.clusterName,
        namespace: resource.metadata.namespace,
        name: resource.metadata.name,
        ...(resource.metadata.uid ? { uid: resource.metadata.uid } : {}),
      },
    });
    integrationId = record.id;
    const identity = { integrationId: record.id, projectId: project.projectId, projectSlug: project.slug };
    if (!(resource.spec.isActive ?? record.isActive)) {
      // Still indexed by its own place, so the change that reactivates it wakes it up.
      const missed = context.dependencies.set(key, { projectId: project.projectId, environmentId: record.envId, path: record.secretPath, recursive: false, reads: new Set() }, readAt);
      await writeStatus(context, 'Integration', resource, identity, [
        { type: 'Ready', status: 'True', reason: 'Paused', message: 'the integration is inactive; the Secret is not updated' },
        { type: 'Synced', status: 'False', reason: 'Paused', message: 'sync paused (isActive is false)' },
      ]);
      return missed ? 0 : undefined;
    }
    if (await sync(context, resource, key, project.projectId, identity, readAt)) return 0;
  } catch (error) {
    if (!(error instanceof NotReadyError) && !(error instanceof AppError && error.statusCode < 500)) throw error;
    let missed = false;
    if (error instanceof AppError && error.statusCode === 404) missed = await indexOwnPlace(context, key, resource, readAt);
    else context.dependencies.delete(key);
    const reason = error instanceof NotReadyError ? error.reason : error.statusCode === 404 ? 'NotFound' : 'Rejected';
    await writeStatus(context, 'Integration', resource, {}, [
      { type: 'Ready', status: 'False', reason, message: error.message },
      { type: 'Synced', status: 'False', reason, message: error.message },
    ]);
    if (integrationId) await context.services.integrations.recordSyncResult(integrationId, { isSynced: false, syncMessage: error.message, syncedRevision: null }).catch(() => {});
    context.events.record(resource, 'Warning', reason, error.message);
    if (missed) return 0;
    return error instanceof NotReadyError ? error.retryInMs : 60_000;
  }
}

/**
 * A source folder that does not exist (yet): indexed by its own place, so that
 * creating the folder wakes the Integration at once (true if it was created
 * since `readAt`, before the index had it). Without its project or
 * environment it is only retried.
 */
async function indexOwnPlace(context: OperatorContext, key: string, resource: IntegrationResource, readAt: number): Promise<boolean> {
  try {
    const { projectId } = await resolveProject(context, resource.metadata.namespace, resource.spec);
    const environment = await context.services.lookups.requireEnvironment(context.services.db, projectId, resource.spec.environment);
    const path = normalizeSecretPath(resource.spec.secretPath ?? '/');
    return context.dependencies.set(key, { projectId, environmentId: environment.id, path, recursive: resource.spec.recursive ?? false, reads: new Set() }, readAt);
  } catch {
    context.dependencies.delete(key);
    return false;
  }
}

/** Syncs the Secret; true when a change the sync missed (it came before the index had the Integration) needs another. */
async function sync(
  context: OperatorContext,
  resource: IntegrationResource,
  key: string,
  projectId: string,
  identity: { integrationId: string; projectId: string; projectSlug: string },
  latestRevision: number,
): Promise<boolean> {
  const { services, actor } = context;
  const source = {
    workspaceId: projectId,
    environment: resource.spec.environment,
    secretPath: normalizeSecretPath(resource.spec.secretPath ?? '/'),
    recursive: resource.spec.recursive ?? false,
    includeImports: resource.spec.includeImports ?? true,
  };
  // `revision`: the one the listing's data is current at (older than the latest when only integration records changed since)
  const { data, skipped, environmentId, reads, revision } = await context.listings.get(JSON.stringify(source), latestRevision, async () => {
    const dependencies = new Set<string>();
    const listing = await services.secretReader.list(actor, { ...source, expandSecretReferences: true, dependencies });
    return { ...resolveSecretData(listing.secrets, listing.imports), environmentId: [...dependencies][0]!.split(':')[0]!, reads: dependencies };
  });
  const missed = context.dependencies.set(key, { projectId, environmentId, path: source.secretPath, recursive: source.recursive, reads }, latestRevision);
  const written = await applyIfChanged(context, resource, data, revision);
  if (!written) context.logger.debug({ namespace: resource.metadata.namespace, name: resource.spec.target.name, revision }, 'Secret unchanged; nothing written');
  const hash = dataHash(data);
  const message = skipped.length > 0 ? `${Object.keys(data).length} keys synced; skipped keys that are not valid Secret keys: ${skipped.join(', ')}` : `${Object.keys(data).length} keys synced`;
  await writeStatus(
    context,
    'Integration',
    resource,
    { ...identity, secretCount: Object.keys(data).length, dataHash: hash, ...(written || !resource.status?.syncedRevision ? { syncedRevision: revision, lastSyncTime: new Date().toISOString() } : {}) },
    [
      { type: 'Ready', status: 'True', reason: 'Synced', message },
      { type: 'Synced', status: 'True', reason: 'Synced', message: `Secret '${resource.spec.target.name}' holds the project's secrets` },
    ],
  );
  await services.integrations.recordSyncResult(identity.integrationId, { isSynced: true, syncMessage: null, syncedRevision: revision });
  return missed;
}

/** Server-side applies the Secret unless the live one already holds exactly this data; repairs drift. */
async function applyIfChanged(context: OperatorContext, resource: IntegrationResource, data: Record<string, string>, revision: number): Promise<boolean> {
  const target = resource.spec.target;
  const policy = target.creationPolicy ?? 'Owner';
  const desired = desiredSecret(resource, data, revision, context.installationId);
  const hash = dataHash(data);
  const wasDeleted = resource.status?.dataHash === hash ? 'was deleted' : undefined;
  const cached = context.managedSecrets.get(target.name, resource.metadata.namespace);
  // Not among the Secrets we manage: created on condition that no Secret of that name exists (no read first).
  if (!cached && policy !== 'Merge' && (await createIfAbsent(context, desired))) {
    recordWrite(context, resource, data, revision, wasDeleted);
    return true;
  }
  const live = cached ?? (await context.kube.readSecret(resource.metadata.namespace, target.name));
  assertWritable(context, resource, live, policy);
  const liveHash = live ? liveDataHash(live, policy === 'Merge' ? Object.keys(data) : undefined) : undefined;
  const annotated = live?.metadata?.annotations?.[ANNOTATION_DATA_HASH];
  if (live && liveHash === hash && annotated === hash) return false;
  // A Secret just read is written only if it is still the one checked above.
  await context.kube.applySecret(desired, cached ? undefined : (live?.metadata?.resourceVersion ?? ABSENT));
  recordWrite(context, resource, data, revision, live ? (annotated === hash ? 'was changed outside Coffer' : undefined) : wasDeleted);
  return true;
}

/** Applies `desired` if no Secret of its name exists; false when one does (409). */
async function createIfAbsent(context: OperatorContext, desired: V1Secret): Promise<boolean> {
  try {
    await context.kube.applySecret(desired, ABSENT);
    return true;
  } catch (error) {
    if (isConflict(error)) return false;
    throw error;
  }
}

/** A Synced event, or DriftRepaired when the Secret had been changed or deleted outside Coffer. */
function recordWrite(context: OperatorContext, resource: IntegrationResource, data: Record<string, string>, revision: number, drift: string | undefined): void {
  const name = resource.spec.target.name;
  const { namespace } = resource.metadata;
  const fields = { namespace, secret: name, integration: resource.metadata.name, revision, keys: Object.keys(data).length };
  if (drift) {
    context.events.record(resource, 'Normal', 'DriftRepaired', `Secret '${name}' ${drift} and has been restored`);
    context.logger.info(fields, `Secret ${namespace}/${name} ${drift}; restored (revision ${revision})`);
  } else {
    context.events.record(resource, 'Normal', 'Synced', `Secret '${name}' updated to revision ${revision} (${Object.keys(data).length} keys)`);
    context.logger.info(fields, `Secret ${namespace}/${name} written at revision ${revision} (${Object.keys(data).length} keys)`);
  }
}

function assertWritable(context: OperatorContext, resource: IntegrationResource, live: V1Secret | undefined, policy: string): void {
  const name = resource.spec.target.name;
  const installation = live?.metadata?.annotations?.[ANNOTATION_INSTALLATION];
  if (installation && installation !== context.installationId) {
    throw new NotReadyError('InstallationConflict', `Secret '${name}' is managed by Coffer installation ${installation}; this installation (${context.installationId}) does not write it`);
  }
  if (policy === 'Merge') {
    if (!live) throw new NotReadyError('TargetMissing', `creationPolicy Merge needs an existing Secret '${name}'`, 30_000);
    return;
  }
  if (!live) return;
  const ours = live.metadata?.labels?.[MANAGED_BY_LABEL] === 'coffer' && live.metadata?.annotations?.[ANNOTATION_INTEGRATION] === resourceKey(resource.metadata.namespace, resource.metadata.name);
  if (!ours) throw new NotReadyError('SecretConflict', `Secret '${name}' exists and is not managed by this Integration; use creationPolicy Merge to add keys to it`);
}

async function finalize(context: OperatorContext, resource: IntegrationResource, key: string): Promise<void> {
  context.dependencies.delete(key);
  await context.services.integrations.deleteManaged(context.actor, key);
  const { namespace } = resource.metadata;
  const name = resource.spec.target.name;
  const live = await context.kube.readSecret(namespace, name);
  const annotations = live?.metadata?.annotations;
  const installation = annotations?.[ANNOTATION_INSTALLATION];
  const ours = annotations?.[ANNOTATION_INTEGRATION] === key && (!installation || installation === context.installationId);
  const policy = resource.spec.target.creationPolicy ?? 'Owner';
  if (ours && policy === 'Owner') await context.kube.deleteSecret(namespace, name);
  if (ours && policy === 'Merge') await context.kube.applySecret(emptyApply(namespace, name));
  await removeFinalizer(context, 'Integration', resource);
}
