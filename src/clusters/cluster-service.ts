import type { Actor } from '../actor/actor.ts';
import type { Cluster } from '../db/schema.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { findOrgIdentity } from '../identities/identity-store.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { type ClusterResponse, toClusterResponse } from './cluster-schema.ts';
import { deleteBinding, deleteCluster, findBindingOfIdentity, findCluster, insertBinding, insertCluster, listBoundIdentities, listClusters } from './cluster-store.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/**
 * Registered clusters: an organization admin names each Kubernetes cluster
 * that syncs from Coffer and binds the machine identities that act for it.
 * An identity acts for at most one cluster; whatever a remote operator does
 * (claims, grant matches, integration records, sync results) is done for the
 * cluster its credential is bound to (the actor's `cluster`), never for a
 * name in a request. The in-process operator's cluster is not registrable:
 * its name is reserved, so no credential can act for it over HTTP.
 */
export class ClusterService {
  readonly #deps: ServiceDeps;
  /** The in-process operator's cluster name (COFFER_CLUSTER_NAME). */
  readonly #ownCluster: string;

  constructor(deps: ServiceDeps, ownCluster: string) {
    this.#deps = deps;
    this.#ownCluster = ownCluster;
  }

  async register(actor: Actor, input: { name: string; description?: string }): Promise<ClusterResponse> {
    const exists = () => new ConflictError(`A cluster named '${input.name}' is already registered in this organization`, 'ClusterExists');
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        await tx.authorizeOrg({ action: 'create', subject: 'settings' });
        if (input.name === this.#ownCluster) {
          throw new ConflictError(`'${input.name}' is this server's own cluster (its in-process operator's); no credential may act for it`, 'ClusterNameReserved');
        }
        const cluster = await insertCluster(tx.db, { orgId: actor.orgId, name: input.name, description: input.description ?? '' });
        tx.audit({ orgId: actor.orgId, type: 'create-cluster', metadata: { clusterId: cluster.id, cluster: cluster.name } });
        return toClusterResponse(cluster, []);
      },
      { conflicts: { clusters_org_name_key: exists } },
    );
  }

  async list(actor: Actor): Promise<ClusterResponse[]> {
    await this.#deps.permissions.assertOrg({ actor, orgId: actor.orgId, action: 'read', subject: 'settings' });
    const clusters = await listClusters(this.#deps.db, actor.orgId);
    const bound = await listBoundIdentities(
      this.#deps.db,
      clusters.map((cluster) => cluster.id),
    );
    return clusters.map((cluster) =>
      toClusterResponse(
        cluster,
        bound.filter((binding) => binding.clusterId === cluster.id).map(({ identityId, name, authMethod }) => ({ id: identityId, name, authMethod })),
      ),
    );
  }

  async get(actor: Actor, clusterId: string): Promise<ClusterResponse> {
    await this.#deps.permissions.assertOrg({ actor, orgId: actor.orgId, action: 'read', subject: 'settings' });
    return this.#response(this.#deps.db, await this.#require(this.#deps.db, actor, clusterId));
  }

  /** Unregisters a cluster: its identities act for no cluster any more (its operator's next call is refused). */
  async delete(actor: Actor, clusterId: string): Promise<ClusterResponse> {
    return this.#write(actor, 'delete', clusterId, async (tx, cluster) => {
      const response = await this.#response(tx.db, cluster);
      await deleteCluster(tx.db, cluster.id);
      tx.audit({ orgId: actor.orgId, type: 'delete-cluster', metadata: { clusterId: cluster.id, cluster: cluster.name } });
      return response;
    });
  }

  /** Binds an identity of the organization to the cluster: its tokens act for it (409 when it acts for a cluster already). */
  async bindIdentity(actor: Actor, clusterId: string, identityId: string): Promise<ClusterResponse> {
    const bound = () => new ConflictError(`Identity '${identityId}' already acts for a cluster; an identity acts for one cluster only`, 'IdentityBound');
    return this.#write(
      actor,
      'edit',
      clusterId,
      async (tx, cluster) => {
        const identity = await findOrgIdentity(tx.db, actor.orgId, identityId);
        if (!identity) throw new NotFoundError(`Failed to find identity with ID '${identityId}'`);
        if (await findBindingOfIdentity(tx.db, identity.id)) throw bound();
        await insertBinding(tx.db, { identityId: identity.id, clusterId: cluster.id });
        tx.audit({ orgId: actor.orgId, type: 'bind-cluster-identity', metadata: { clusterId: cluster.id, cluster: cluster.name, identityId: identity.id } });
        return this.#response(tx.db, cluster);
      },
      { cluster_identities_pkey: bound },
    );
  }

  async unbindIdentity(actor: Actor, clusterId: string, identityId: string): Promise<ClusterResponse> {
    return this.#write(actor, 'edit', clusterId, async (tx, cluster) => {
      if (!(await deleteBinding(tx.db, cluster.id, identityId))) {
        throw new NotFoundError(`Identity '${identityId}' does not act for cluster '${cluster.name}'`);
      }
      tx.audit({ orgId: actor.orgId, type: 'unbind-cluster-identity', metadata: { clusterId: cluster.id, cluster: cluster.name, identityId } });
      return this.#response(tx.db, cluster);
    });
  }

  #write(
    actor: Actor,
    action: 'edit' | 'delete',
    clusterId: string,
    change: (tx: WriteContext, cluster: Cluster) => Promise<ClusterResponse>,
    conflicts: Record<string, () => ConflictError> = {},
  ): Promise<ClusterResponse> {
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        await tx.authorizeOrg({ action, subject: 'settings' });
        return change(tx, await this.#require(tx.db, actor, clusterId));
      },
      { conflicts },
    );
  }

  async #require(db: ReadOnlyDb, actor: Actor, clusterId: string): Promise<Cluster> {
    const cluster = await findCluster(db, actor.orgId, clusterId);
    if (!cluster) throw new NotFoundError(`Cluster with ID '${clusterId}' not found`);
    return cluster;
  }

  async #response(db: ReadOnlyDb, cluster: Cluster): Promise<ClusterResponse> {
    const bound = await listBoundIdentities(db, [cluster.id]);
    return toClusterResponse(
      cluster,
      bound.map(({ identityId, name, authMethod }) => ({ id: identityId, name, authMethod })),
    );
  }
}
