import { z } from 'zod';
import { integrationAuthSchema, integrationMetadataSchema, integrationSchema } from '../../integrations/integration-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';

const tags = ['Integrations'];
const text = () => z.string().trim();
const authParams = z.object({ integrationAuthId: text() });
const integrationParams = z.object({ integrationId: text() });
const workspaceParams = z.object({ workspaceId: text() });
const authResponse = { 200: z.object({ integrationAuth: integrationAuthSchema }) };
const integrationResponse = { 200: z.object({ integration: integrationSchema }) };

export function integrationRoutes(app: ZodApp, { integrationAuths, integrations }: Services): void {
  app.post(
    '/api/v1/integration-auth/access-token',
    {
      schema: {
        tags,
        summary: "Store an integration provider's access token for a project (sealed; never returned)",
        body: z.object({
          workspaceId: text().min(1),
          integration: text().describe('an integration slug, e.g. "github", "aws-secret-manager" or "kubernetes"'),
          accessId: z.string().optional(),
          accessToken: z.string().optional(),
          awsAssumeIamRoleArn: text().url().optional(),
          url: text().url().optional(),
          namespace: text().optional(),
          refreshToken: z.string().optional(),
        }),
        response: authResponse,
      },
    },
    async (request) => {
      const { workspaceId, ...input } = request.body;
      return { integrationAuth: await integrationAuths.createWithAccessToken(request.actor, { projectId: workspaceId, ...input }) };
    },
  );

  app.get(
    '/api/v1/integration-auth/:integrationAuthId',
    { schema: { tags, summary: 'Get an integration auth', params: authParams, response: authResponse } },
    async (request) => ({ integrationAuth: await integrationAuths.getById(request.actor, request.params.integrationAuthId) }),
  );

  app.delete(
    '/api/v1/integration-auth/:integrationAuthId',
    { schema: { tags, summary: 'Delete an integration auth and its integrations', params: authParams, response: authResponse } },
    async (request) => ({ integrationAuth: await integrationAuths.delete(request.actor, request.params.integrationAuthId) }),
  );

  app.delete(
    '/api/v1/integration-auth',
    {
      schema: {
        tags,
        summary: 'Delete every integration auth of one integration type in a project, and their integrations',
        querystring: z.object({ integration: text().min(1), projectId: text().min(1) }),
        response: { 200: z.object({ integrationAuth: z.array(integrationAuthSchema) }) },
      },
    },
    async (request) => ({ integrationAuth: await integrationAuths.deleteByType(request.actor, request.query) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId/authorizations',
    {
      schema: {
        tags,
        summary: "List a project's integration auths",
        params: workspaceParams,
        response: { 200: z.object({ authorizations: z.array(integrationAuthSchema) }) },
      },
    },
    async (request) => ({ authorizations: await integrationAuths.listOfProject(request.actor, request.params.workspaceId) }),
  );

  app.post(
    '/api/v1/integration',
    {
      schema: {
        tags,
        summary: 'Create an integration that syncs the secrets of an environment and path',
        body: z.object({
          integrationAuthId: text(),
          sourceEnvironment: text().min(1),
          secretPath: text().default('/'),
          isActive: z.boolean().default(true),
          app: text().optional(),
          appId: text().optional(),
          targetEnvironment: text().optional(),
          targetEnvironmentId: text().optional(),
          targetService: text().optional(),
          targetServiceId: text().optional(),
          owner: text().optional(),
          url: text().url().optional(),
          path: text().optional(),
          region: text().optional(),
          scope: text().optional(),
          metadata: integrationMetadataSchema.default({}),
        }),
        response: integrationResponse,
      },
    },
    async (request) => ({ integration: await integrations.create(request.actor, request.body) }),
  );

  app.get(
    '/api/v1/integration/:integrationId',
    { schema: { tags, summary: 'Get an integration', params: integrationParams, response: integrationResponse } },
    async (request) => ({ integration: await integrations.getById(request.actor, request.params.integrationId) }),
  );

  app.patch(
    '/api/v1/integration/:integrationId',
    {
      schema: {
        tags,
        summary: 'Activate or pause an integration, change its target or move its source; omitted fields keep their values',
        params: integrationParams,
        body: z.object({
          isActive: z.boolean(),
          app: text().optional(),
          appId: text().optional(),
          targetEnvironment: text().optional(),
          owner: text().optional(),
          environment: text().min(1).optional().describe('slug of the environment to sync from'),
          secretPath: text().optional().describe('path to sync from; the stored path when omitted'),
          metadata: integrationMetadataSchema.optional().describe('merged into the stored metadata, key by key'),
        }),
        response: integrationResponse,
      },
    },
    async (request) => ({ integration: await integrations.update(request.actor, request.params.integrationId, request.body) }),
  );

  app.delete(
    '/api/v1/integration/:integrationId',
    {
      schema: {
        tags,
        summary: 'Delete an integration',
        params: integrationParams,
        querystring: z.object({
          shouldDeleteIntegrationSecrets: z
            .enum(['true', 'false'])
            .optional()
            .transform((value) => value === 'true'),
        }),
        response: integrationResponse,
      },
    },
    async (request) => ({
      integration: await integrations.delete(request.actor, request.params.integrationId, {
        shouldDeleteIntegrationSecrets: request.query.shouldDeleteIntegrationSecrets,
      }),
    }),
  );

  app.post(
    '/api/v1/integration/:integrationId/sync',
    { schema: { tags, summary: 'Sync an integration now', params: integrationParams, response: integrationResponse } },
    async (request) => ({ integration: await integrations.sync(request.actor, request.params.integrationId) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId/integrations',
    {
      schema: {
        tags,
        summary: "List a project's integrations",
        params: workspaceParams,
        response: { 200: z.object({ integrations: z.array(integrationSchema) }) },
      },
    },
    async (request) => ({ integrations: await integrations.listOfProject(request.actor, request.params.workspaceId) }),
  );
}
