import { z } from 'zod';
import { clusterNameSchema, namespaceGrantSchema, namespaceNameSchema } from '../../grants/grant-schema.ts';
import type { Services } from '../../app/container.ts';
import { id, optional } from '../../validation/input.ts';
import type { ZodApp } from '../zod-app.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Namespace grants'];
const base = '/api/v1/workspace/:workspaceId/namespace-grants';
const projectParams = z.object({ workspaceId: id().describe("The project's id or slug.") });
const grantResponse = { 200: z.object({ grant: namespaceGrantSchema }) };

const about =
  'A namespace grant lets one namespace of one Kubernetes cluster use this project: its SecretsProject may claim the project ' +
  '(a project it did not create), and its Integrations and SecretImports may read it. Without one, Kubernetes RBAC on a ' +
  'namespace never reaches a project. A revoked grant stops every sync into that namespace.';

export function namespaceGrantRoutes(app: ZodApp, { namespaceGrants }: Services): void {
  app.post(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Grant a namespace',
          description: `Lets one namespace of one cluster use this project. ${about} 409 \`GrantExists\` when that namespace already has one.`,
          permission: projectPermission('create', 'namespace-grants'),
          effects: changes('Creates the grant; the operator decides again for the resources waiting for it.', 'create-namespace-grant'),
          errors: [409],
        }),
        params: projectParams,
        body: z.object({
          namespace: namespaceNameSchema.describe('The Kubernetes namespace.').meta({ examples: ['shop'] }),
          cluster: optional(clusterNameSchema)
            .describe(
              "The cluster: a registered cluster's name (`POST /api/v1/clusters`; only the credentials bound to it use the grant, and it may be given before the cluster is registered), or this server's own (`COFFER_CLUSTER_NAME`), the default.",
            )
            .meta({ examples: ['local'] }),
        }),
        response: grantResponse,
      },
    },
    async (request) => ({ grant: await namespaceGrants.create(request.actor, request.params.workspaceId, request.body) }),
  );

  app.get(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List namespace grants',
          description: `The namespaces that may use this project, and who granted each. ${about}`,
          permission: projectPermission('read', 'namespace-grants'),
          effects: reads(),
        }),
        params: projectParams,
        response: { 200: z.object({ grants: z.array(namespaceGrantSchema) }) },
      },
    },
    async (request) => ({ grants: await namespaceGrants.list(request.actor, request.params.workspaceId) }),
  );

  app.delete(
    `${base}/:grantId`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Revoke a namespace grant',
          description: `Revokes a namespace grant: the syncs into that namespace stop, and the operator deletes the Secrets it wrote there for this project (a Merge Integration's keys are removed from the Secret it merges into), with a Warning Event (\`GrantRevoked\`). ${about}`,
          permission: projectPermission('delete', 'namespace-grants'),
          effects: changes('Deletes the grant; the operator decides again for the resources that used it.', 'delete-namespace-grant'),
        }),
        params: projectParams.extend({ grantId: id().describe("The grant's id.") }),
        response: grantResponse,
      },
    },
    async (request) => ({ grant: await namespaceGrants.revoke(request.actor, request.params.workspaceId, request.params.grantId) }),
  );
}
