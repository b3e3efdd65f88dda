import { z } from 'zod';
import { clusterNameSchema, namespaceGrantSchema, namespaceNameSchema } from '../../grants/grant-schema.ts';
import type { Services } from '../../services/container.ts';
import { id, optional } from '../../validation/input.ts';
import type { ZodApp } from '../app.ts';

const tags = ['Namespace grants'];
const base = '/api/v1/workspace/:workspaceId/namespace-grants';
const projectParams = z.object({ workspaceId: id().describe('the project id or slug') });
const grantResponse = { 200: z.object({ grant: namespaceGrantSchema }) };

const about =
  'A namespace grant lets one namespace of one Kubernetes cluster use this project: its SecretsProject may claim the project ' +
  '(a project it did not create), and its Integrations and SecretImports may read it. Without one, Kubernetes RBAC on a ' +
  'namespace never reaches a project. Giving and revoking are audited (create-namespace-grant, delete-namespace-grant); ' +
  'a revoked grant stops every sync into that namespace.';

export function namespaceGrantRoutes(app: ZodApp, { namespaceGrants }: Services): void {
  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Let a cluster namespace use this project (project admins)',
        description: `${about} 409 GrantExists when that namespace already has one.`,
        params: projectParams,
        body: z.object({
          namespace: namespaceNameSchema.describe('the Kubernetes namespace'),
          cluster: optional(clusterNameSchema).describe("the cluster as its operator names itself (COFFER_CLUSTER_NAME); default: this server's own operator's cluster"),
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
        summary: "The namespaces that may use this project, and who granted each",
        description: about,
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
        summary: 'Revoke a namespace grant (project admins); syncs into that namespace stop',
        description: about,
        params: projectParams.extend({ grantId: id() }),
        response: grantResponse,
      },
    },
    async (request) => ({ grant: await namespaceGrants.revoke(request.actor, request.params.workspaceId, request.params.grantId) }),
  );
}
