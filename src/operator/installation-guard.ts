import type { KubernetesObject } from '@kubernetes/client-node';
import type { OperatorContext } from './context.ts';
import type { KindName } from './resources.ts';

interface GuardedResource extends KubernetesObject {
  metadata: { name: string; namespace: string; uid?: string; resourceVersion?: string };
  status?: { installationId?: string; projectId?: string; integrationId?: string; secretImportId?: string };
}

/**
 * One installation, one owner: a resource is reconciled only by the
 * installation (database) whose id its status carries. The first installation
 * to reconcile a resource records its id, conditionally on the resourceVersion
 * it read; another installation then leaves the resource alone (no write to
 * it, its Secret or its database), reports the conflict with one Warning
 * Event per resource and a log line per installation, and returns false.
 * A resource from before installation ids that names a project, import or
 * integration this database does not have belongs to another installation too.
 */
export async function mayReconcile(context: OperatorContext, kind: KindName, resource: GuardedResource): Promise<boolean> {
  const holder = resource.status?.installationId;
  if (holder === context.installationId) return true;
  if (holder) return refuse(context, kind, resource, holder);
  if (await namesAnotherDatabase(context, kind, resource)) return refuse(context, kind, resource, 'an installation from before installation ids');
  const { namespace, name, resourceVersion } = resource.metadata;
  const claimed = await context.kube.claimStatus(kind, namespace, name, context.installationId, resourceVersion!);
  if (claimed.status?.installationId !== context.installationId) {
    // an older CRD prunes the field: without it no installation could tell the resource is taken
    throw new Error(`the ${kind} CRD has no status.installationId: apply the CRDs of this Coffer version (crds/) before running its operator`);
  }
  resource.status = { ...resource.status, installationId: context.installationId };
  resource.metadata.resourceVersion = claimed.metadata?.resourceVersion;
  return true;
}

function refuse(context: OperatorContext, kind: KindName, resource: GuardedResource, holder: string): false {
  const { namespace, name, uid } = resource.metadata;
  const message = `${kind} ${namespace}/${name} is managed by Coffer installation ${holder}; this installation (${context.installationId}, cluster '${context.clusterName}') leaves it alone`;
  if (context.conflicts.noteResource(uid ?? `${kind}/${namespace}/${name}`)) context.events.record(resource, 'Warning', 'InstallationConflict', message);
  if (context.conflicts.noteInstallation(holder)) {
    context.logger.warn({ otherInstallation: holder, installationId: context.installationId, cluster: context.clusterName, kind, resource: `${namespace}/${name}` }, `resources in this cluster are managed by Coffer installation ${holder}; this installation leaves them alone and writes nothing to them`);
  }
  return false;
}

/** A status written before installation ids, naming something this database does not hold. */
async function namesAnotherDatabase(context: OperatorContext, kind: KindName, resource: GuardedResource): Promise<boolean> {
  const { services, actor } = context;
  const status = resource.status ?? {};
  const missing = (lookup: Promise<unknown>) => lookup.then(() => false, (error: { statusCode?: number }) => (error.statusCode === 404 ? true : Promise.reject(error)));
  if (kind === 'SecretsProject' && status.projectId) return missing(services.projects.get(actor, status.projectId));
  if (kind === 'Integration' && status.integrationId) return missing(services.integrations.getById(actor, status.integrationId));
  if (kind === 'SecretImport' && status.secretImportId) return missing(services.imports.get(actor, status.secretImportId));
  return false;
}

/** What this process already reported, so a conflict is told once per resource and once per installation. */
export class ConflictReports {
  readonly #resources = new Set<string>();
  readonly #installations = new Set<string>();

  /** True the first time `uid` is noted. */
  noteResource(uid: string): boolean {
    if (this.#resources.has(uid)) return false;
    this.#resources.add(uid);
    return true;
  }

  noteInstallation(id: string): boolean {
    if (this.#installations.has(id)) return false;
    this.#installations.add(id);
    return true;
  }
}
