import type { IntegrationResource } from '../../resources.ts';
import type { CachedInformer } from '../../runtime/informers.ts';
import type { CustomResource } from '../../runtime/kube-api.ts';
import { parseNamespacedName } from '../../runtime/object-key.ts';
import { heldElsewhereIn, type StatusResource } from '../../runtime/status.ts';
import type { ControllerContext } from '../context.ts';

/**
 * Drops the records of Integration resources deleted while no operator ran. An Integration claimed by its target
 * has no finalizer (target-claim.ts): the operator that sees it go deletes its record, and this sweep, run when an
 * operator starts leading (its informers synced), deletes the records of the ones nobody saw go. A record is
 * dropped when its resource is not in the cluster, or is held by another installation (a first sync both raced
 * for), as the informer shows it and then as the apiserver answers it (a lagging watch must not cost a record, and
 * the API-set isActive in it). Only records of this cluster, and of the watched namespace when one is; it stops when
 * `going` turns false (leadership lost). Answers how many it dropped and how many it could not (e.g. the operator
 * may no longer delete a project's integrations); each deletion is audited as any other (delete-integration). A
 * failed listing throws.
 */
export async function sweepRecords(
  context: ControllerContext,
  integrations: CachedInformer<IntegrationResource>,
  options: { namespace?: string; going: () => boolean },
): Promise<{ dropped: number; failed: number }> {
  const { port, identity } = context;
  const stale = (resource: CustomResource | StatusResource | undefined) => !resource || heldElsewhereIn(resource, identity.installationId);
  let dropped = 0;
  let failed = 0;
  let after: string | undefined;
  do {
    const page = await port.integrations.listManaged({ namespace: options.namespace, after });
    for (const managedBy of page.managedBy) {
      if (!options.going()) return { dropped, failed };
      const resourceName = parseNamespacedName(managedBy);
      // a name no Integration resource can have is none of the sweep's business
      if (!resourceName) continue;
      const { namespace, name } = resourceName;
      if (!stale(integrations.get(name, namespace))) continue;
      try {
        if (!stale(await context.kube.readResource('Integration', namespace, name))) continue;
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
