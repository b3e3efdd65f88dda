import { z } from 'zod';
import { clusterSchema } from '../../clusters/cluster-schema.ts';
import { clusterNameSchema, namespaceNameSchema } from '../../grants/grant-schema.ts';
import type { Services } from '../../app/container.ts';
import { id, optional, required, text } from '../../validation/input.ts';
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

export function clusterRoutes(app: ZodApp, { clusters, projectClaims }: Services): void {
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

  app.delete(
    '/api/v1/project-claims',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Drop an orphaned project claim',
          description:
            'Ends the claim of a SecretsProject that cannot end it itself: its cluster is gone (unregistered), or the resource was deleted without its finalizer releasing the claim, so a new SecretsProject of that name is refused (`ProjectClaimed`, held under another uid) or the project cannot be declared in that cluster. ' +
            "The server cannot see a remote cluster's objects: the caller's word is the evidence, `uid` (when given) must be the one the claim holds, and the audit entry names who dropped which claim. " +
            "The project, its namespace grants and integration records stay. A SecretsProject that still exists declares its project again at its next reconcile, as an existing project (it then needs its namespace's grant, and no longer counts as the project's creator). " +
            '404 `ClaimNotFound` when the organization has no such claim (or it holds another uid).',
          permission: orgPermission('delete', 'settings'),
          effects: changes('Deletes the claim.', 'delete-project-claim'),
        }),
        querystring: z.object({
          cluster: clusterNameSchema.describe('The cluster the SecretsProject was in, registered or not.').meta({ examples: ['cluster-b'] }),
          namespace: namespaceNameSchema.describe('Its namespace.').meta({ examples: ['shop'] }),
          name: required(253)
            .describe("The SecretsProject's name.")
            .meta({ examples: ['web-shop'] }),
          uid: optional(required(128).meta({ examples: ['0f3c9a7e-2d4b-4c1a-8e6f-5a7b9c1d3e24'] })).describe(
            "The uid the claim must hold (the deleted resource's `metadata.uid`); any uid when absent.",
          ),
        }),
        response: {
          200: z
            .object({
              claim: z.object({
                cluster: z.string().describe('The cluster.'),
                namespace: z.string().describe('The namespace.'),
                name: z.string().describe("The SecretsProject's name."),
                uid: z.string().describe('The uid the claim held.'),
                projectId: z.string().describe('The project it declared (it stays).'),
                createdProject: z.boolean().describe('Whether that SecretsProject had created the project.'),
                clusterRegistered: z.boolean().describe("Whether the cluster is still registered (or is the server's own)."),
              }),
            })
            .meta({
              examples: [
                {
                  claim: {
                    cluster: 'cluster-b',
                    namespace: 'shop',
                    name: 'web-shop',
                    uid: '0f3c9a7e-2d4b-4c1a-8e6f-5a7b9c1d3e24',
                    projectId: '6f1c2a9e-4b7d-4e21-9a3c-1d5e8f0b7c42',
                    createdProject: true,
                    clusterRegistered: false,
                  },
                },
              ],
            }),
        },
      },
    },
    async (request) => ({ claim: await projectClaims.dropOrphan(request.actor, request.query) }),
  );
}
