import type { Actor } from '../actor/actor.ts';
import { ForbiddenError } from '../errors.ts';

/**
 * The cluster `actor` acts for: the registered cluster its identity is bound to (or the in-process
 * operator's own). A cluster a request names is only checked against it: naming another is refused
 * (403 `ClusterMismatch`), and a caller bound to no cluster acts for none (403 `ClusterNotBound`).
 */
export function actingCluster(actor: Actor, named?: string): string {
  if (actor.cluster === undefined) {
    throw new ForbiddenError(
      'This credential acts for no cluster: an organization admin registers the cluster and binds its operator identity (POST /api/v1/clusters, POST /api/v1/clusters/{clusterId}/identities)',
      'ClusterNotBound',
    );
  }
  if (named !== undefined && named !== actor.cluster) {
    throw new ForbiddenError(`This credential acts for cluster '${actor.cluster}', not '${named}'; nothing was read or changed`, 'ClusterMismatch');
  }
  return actor.cluster;
}
