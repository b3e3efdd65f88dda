import type { IntegrationResource } from '../../resources.ts';
import type { CachedInformer } from '../../runtime/informers.ts';
import type { ControllerContext } from '../context.ts';

/**
 * Drops the records of Integration resources deleted while no operator ran. An Integration claimed by its target
 * has no finalizer (installation-guard.ts, claimedByTarget): the operator that sees it go deletes its record, and
 * this sweep, run when an operator starts leading (its informers synced), deletes the records of the ones nobody saw
 * go. A record is dropped when its resource is not in the cluster, or is held by another installation (a first sync
 * both raced for). Only records of this cluster, and of the watched namespace when one is. Answers how many it
 * dropped and how many it could not (e.g. the operator may no longer delete a project's integrations); each deletion
 * is audited as any other (delete-integration). A failed listing throws.
 */
export async function sweepRecords(
  context: ControllerContext,
  integrations: CachedInformer<IntegrationResource>,
  namespace?: string,
): Promise<{ dropped: number; failed: number }> {
  const { port, identity, status } = context;
  let dropped = 0;
  let failed = 0;
  let after: string | undefined;
  do {
    const page = await port.integrations.listManaged({ namespace, after });
    for (const managedBy of page.managedBy) {
      const resource = resourceOf(integrations, managedBy);
      const holder = resource && status.holder('Integration', resource);
      if (resource && (holder === undefined || holder === identity.installationId)) continue;
      try {
        await port.integrations.delete(identity.clusterName, managedBy);
        dropped++;
      } catch {
        failed++;
      }
    }
    after = page.next ?? undefined;
  } while (after !== undefined);
  return { dropped, failed };
}

/** The cached Integration a record's `<namespace>/<name>` names. */
function resourceOf(integrations: CachedInformer<IntegrationResource>, managedBy: string): IntegrationResource | undefined {
  const slash = managedBy.indexOf('/');
  return slash < 0 ? undefined : integrations.get(managedBy.slice(slash + 1), managedBy.slice(0, slash));
}
