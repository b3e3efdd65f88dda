import type { IntegrationResource, KindName } from '../resources.ts';
import { claimedElsewhere, policyOf, targetKindOf } from './integration/managed-target.ts';
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
 * - an Owner or Orphan Integration by its target (claimedByTarget): the
 *   target is created only if absent and carries the installation, and the
 *   first status write, conditional on the resourceVersion, names it.
 * Another installation then leaves the resource alone (no write to it, its
 * target or its database), reports the conflict with one Warning Event per
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

/**
 * Whether the resource is claimed by its target rather than by a write of its own (and so carries no finalizer): an
 * Integration that owns its Secret or ConfigMap as a whole (Owner, Orphan). Its deletion needs no finalizer: an
 * Owner target carries the Integration's ownerReference (the garbage collector deletes it), an Orphan target stays,
 * and the record goes when the operator sees the deletion or, if none ran then, at the next start (record-sweep.ts).
 * Merge takes its keys out of an object that stays, which only a finalizer can guarantee.
 */
export function claimedByTarget(kind: KindName, resource: Reconciled): boolean {
  return kind === 'Integration' && policyOf(resource as IntegrationResource) !== 'Merge';
}

/** The other installation whose target (as cached) claims this Integration (claimedElsewhere). */
function targetClaimedElsewhere(context: ControllerContext, resource: IntegrationResource): string | undefined {
  const { namespace } = resource.metadata;
  const { name } = resource.spec.target;
  const { managedSecrets, managedConfigMaps } = context.informers;
  const kind = targetKindOf(resource);
  const target = kind === 'Secret' ? managedSecrets.get(name, namespace) : managedConfigMaps.get(name, namespace);
  return target && claimedElsewhere({ ...target, kind }, resource, context.identity.installationId);
}

/**
 * This installation lost the claim of an Integration to another installation that created its target first (the
 * target's 409 on create, read live): the resource is left alone as the guard leaves it, its status unwritten.
 */
export class ClaimedElsewhere extends Error {
  readonly holder: string;

  constructor(holder: string) {
    super(`claimed by Coffer installation ${holder}`);
    this.holder = holder;
  }
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
