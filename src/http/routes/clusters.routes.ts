import { z } from 'zod';
import { clusterSchema } from '../../clusters/cluster-schema.ts';
import { clusterNameSchema } from '../../grants/grant-schema.ts';
import type { Services } from '../../app/container.ts';
import { id, optional, text } from '../../validation/input.ts';
import type { ZodApp } from '../zod-app.ts';
import { changes, describeRoute, orgPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Clusters'];
const base = '/api/v1/clusters';
const CLUSTER_ID = '3b9d1f7a-6c2e-4a8b-9d1f-7a6c2e4a8b9d';
const IDENTITY_ID = '8a4c2e6f-1b3d-4f5a-8c7e-9d1b3f5a7c9e';
const clusterParams = z.object({
  clusterId: id()
    .describe("The cluster's id.")
    .meta({ examples: [CLUSTER_ID] }),
});
const clusterResponse = { 200: z.object({ cluster: clusterSchema }) };

const about =
  'A registered cluster is a Kubernetes cluster whose operator (`coffer operator --server`) syncs from this organization. ' +
  'The identities bound to it act for it: every claim, namespace-grant match, integration record and sync result of its operator ' +
  'is keyed by this cluster, whatever a request names. An identity acts for one cluster at most. ' +
  "The server's own cluster (its in-process operator's, `COFFER_CLUSTER_NAME`) is never registered, so no credential acts for it over HTTP.";

const EXAMPLE = {
  id: CLUSTER_ID,
  name: 'cluster-b',
  description: 'Staging, eu-west',
  identities: [{ id: IDENTITY_ID, name: 'cluster-b-operator', authMethod: 'kubernetes-auth' }],
  createdAt: '2026-01-05T10:00:00.000Z',
};

export function clusterRoutes(app: ZodApp, { clusters }: Services): void {
  app.post(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Register a cluster',
          description: `${about} 409 \`ClusterExists\` when the organization has a cluster of that name, 409 \`ClusterNameReserved\` for the server's own cluster's name.`,
          permission: orgPermission('create', 'settings'),
          effects: changes('Registers the cluster (with no identity yet).', 'create-cluster'),
          errors: [409],
        }),
        body: z
          .object({
            name: clusterNameSchema
              .describe('The name, unique in the organization: the one its operator is configured with (`COFFER_CLUSTER_NAME`).')
              .meta({ examples: ['cluster-b'] }),
            description: optional(text(500))
              .describe('What the cluster is, for people.')
              .meta({ examples: ['Staging, eu-west'] }),
          })
          .meta({ examples: [{ name: 'cluster-b', description: 'Staging, eu-west' }] }),
        response: { 200: z.object({ cluster: clusterSchema }).meta({ examples: [{ cluster: { ...EXAMPLE, identities: [] } }] }) },
      },
    },
    async (request) => ({ cluster: await clusters.register(request.actor, request.body) }),
  );

  app.get(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List registered clusters',
          description: `The organization's registered clusters and the identities that act for each. ${about}`,
          permission: orgPermission('read', 'settings'),
          effects: reads(),
        }),
        response: { 200: z.object({ clusters: z.array(clusterSchema) }).meta({ examples: [{ clusters: [EXAMPLE] }] }) },
      },
    },
    async (request) => ({ clusters: await clusters.list(request.actor) }),
  );

  app.get(
    `${base}/:clusterId`,
    {
      schema: {
        tags,
        ...describeRoute({ summary: 'Get a registered cluster', description: about, permission: orgPermission('read', 'settings'), effects: reads() }),
        params: clusterParams,
        response: clusterResponse,
      },
    },
    async (request) => ({ cluster: await clusters.get(request.actor, request.params.clusterId) }),
  );

  app.delete(
    `${base}/:clusterId`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Unregister a cluster',
          description: `Its identities act for no cluster any more: its operator's next claim, record or sync result is refused (403 \`ClusterNotBound\`). Grants, claims and records that name the cluster stay (registering the name again brings them back to its new operator). ${about}`,
          permission: orgPermission('delete', 'settings'),
          effects: changes('Deletes the cluster and its identity bindings.', 'delete-cluster'),
        }),
        params: clusterParams,
        response: clusterResponse,
      },
    },
    async (request) => ({ cluster: await clusters.delete(request.actor, request.params.clusterId) }),
  );

  app.post(
    `${base}/:clusterId/identities`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Bind an identity to a cluster',
          description: `The identity (a machine identity of the organization that logs in with Kubernetes Auth, JWT Auth or universal auth) acts for this cluster from its next request on. 409 \`IdentityBound\` when it acts for a cluster already. ${about}`,
          permission: orgPermission('edit', 'settings'),
          effects: changes('Binds the identity.', 'bind-cluster-identity'),
          errors: [409],
        }),
        params: clusterParams,
        body: z
          .object({
            identityId: id()
              .describe("The identity's id.")
              .meta({ examples: [IDENTITY_ID] }),
          })
          .meta({ examples: [{ identityId: IDENTITY_ID }] }),
        response: clusterResponse,
      },
    },
    async (request) => ({ cluster: await clusters.bindIdentity(request.actor, request.params.clusterId, request.body.identityId) }),
  );

  app.delete(
    `${base}/:clusterId/identities/:identityId`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Unbind an identity from a cluster',
          description: `The identity acts for no cluster from its next request on. ${about}`,
          permission: orgPermission('edit', 'settings'),
          effects: changes('Removes the binding.', 'unbind-cluster-identity'),
        }),
        params: clusterParams.extend({
          identityId: id()
            .describe("The identity's id.")
            .meta({ examples: [IDENTITY_ID] }),
        }),
        response: clusterResponse,
      },
    },
    async (request) => ({ cluster: await clusters.unbindIdentity(request.actor, request.params.clusterId, request.params.identityId) }),
  );
}
