import type { IntegrationResource, KindName } from '../resources.ts';
import { type ClaimedElsewhere, claimedByTarget, targetClaimedElsewhere } from './integration/target-claim.ts';
import type { Reconciled } from '../runtime/controller.ts';
import { formatNamespacedName } from '../runtime/object-key.ts';
import type { ControllerContext } from './context.ts';
import { isCofferNotFound } from './failures.ts';

/**
 * One installation, one owner: a resource is reconciled only by the
 * installation (database) whose id its annotation coffer.dev/installation
 * carries, else the one its status names. The first installation to
 * reconcile a resource claims it before it writes anything else:
 * - a SecretsProject, a SecretImport and a Merge Integration with the
 *   annotation and the finalizer, in one write conditional on the
 *   resourceVersion it read;
 * - an Owner or Orphan Integration by its target (target-claim.ts): the
 *   target is created only if absent and carries the installation, and the
 *   first status write, conditional on the resourceVersion, names it.
 * Another installation then leaves the resource alone (no write to it or its
 * target; a first sync that lost a race may have kept a record in its own
 * database, which record-sweep.ts drops), reports the conflict with one Warning Event per
 * resource and a log line per installation, and returns false. A resource
 * from before installation ids that names a project, import or integration
 * this database does not have belongs to another installation too.
 */
export async function mayReconcile(context: ControllerContext, kind: KindName, resource: Reconciled): Promise<boolean> {
  const { installationId } = context.identity;
  const holder = context.status.holder(kind, resource);
  if (holder === installationId) return true;
  if (holder) return refuse(context, kind, resource, holder);
  if (await namesAnotherDatabase(context, kind, resource)) return refuse(context, kind, resource, 'an installation from before installation ids');
  if (claimedByTarget(kind, resource)) {
    const other = targetClaimedElsewhere(context, resource as IntegrationResource);
    return other ? refuse(context, kind, resource, other) : true;
  }
  await context.status.claim(kind, resource);
  return true;
}

/** Leaves alone a resource another installation claimed (after the guard admitted it): its Event and log line. */
export function leaveAlone(context: ControllerContext, kind: KindName, resource: Reconciled, lost: ClaimedElsewhere): void {
  refuse(context, kind, resource, lost.holder);
}

function refuse(context: ControllerContext, kind: KindName, resource: Reconciled, holder: string): false {
  const { installationId, clusterName } = context.identity;
  const { uid } = resource.metadata;
  const where = formatNamespacedName(resource.metadata);
  const message = `${kind} ${where} is managed by Coffer installation ${holder}; this installation (${installationId}, cluster '${clusterName}') leaves it alone`;
  if (context.conflicts.noteResource(uid ?? `${kind}/${where}`)) context.events.record(resource, 'Warning', 'InstallationConflict', message);
  if (context.conflicts.noteInstallation(holder)) {
    context.logger.warn(
      { otherInstallation: holder, installationId, cluster: clusterName, kind, resource: where },
      `resources in this cluster are managed by Coffer installation ${holder}; this installation leaves them alone and writes nothing to them`,
    );
  }
  return false;
}

/** A status written before installation ids, naming something this database does not hold. */
async function namesAnotherDatabase(context: ControllerContext, kind: KindName, resource: Reconciled): Promise<boolean> {
  const { port } = context;
  const named = (field: 'projectId' | 'integrationId' | 'secretImportId') => {
    const id = resource.status?.[field];
    return typeof id === 'string' && id !== '' ? id : undefined;
  };
  const missing = (lookup: Promise<unknown>) =>
    lookup.then(
      () => false,
      (error: unknown) => {
        if (isCofferNotFound(error)) return true;
        throw error;
      },
    );
  const projectId = named('projectId');
  const integrationId = named('integrationId');
  const secretImportId = named('secretImportId');
  if (kind === 'SecretsProject' && projectId) return missing(port.projects.get(projectId));
  if (kind === 'Integration' && integrationId) return missing(port.integrations.get(integrationId));
  if (kind === 'SecretImport' && secretImportId) return missing(port.imports.get(secretImportId));
  return false;
}
