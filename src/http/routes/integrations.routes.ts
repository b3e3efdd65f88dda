import { z } from 'zod';
import { integrationAuthSchema, integrationMetadataSchema, integrationSchema } from '../../integrations/integration-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { flag, id, optional, PATH_MAX, path, required, text } from '../../validation/input.ts';

const tags = ['Integrations'];
const authParams = z.object({ integrationAuthId: id() });
const integrationParams = z.object({ integrationId: id() });
const workspaceParams = z.object({ workspaceId: id() });
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
          workspaceId: id(),
          integration: required(64).describe('an integration slug, e.g. "github", "aws-secret-manager" or "kubernetes"'),
          accessId: optional(text(4096)),
          accessToken: optional(text(8192)),
          awsAssumeIamRoleArn: optional(text(2048).pipe(z.url())),
          url: optional(text(2048).pipe(z.url())),
          namespace: optional(text()),
          refreshToken: optional(text(8192)),
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
        querystring: z.object({ integration: required(64), projectId: id() }),
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
          integrationAuthId: id(),
          sourceEnvironment: required(),
          secretPath: path(),
          isActive: z.boolean().default(true),
          app: optional(text()),
          appId: optional(text()),
          targetEnvironment: optional(text()),
          targetEnvironmentId: optional(text()),
          targetService: optional(text()),
          targetServiceId: optional(text()),
          owner: optional(text()),
          url: optional(text(2048).pipe(z.url())),
          path: optional(text()),
          region: optional(text()),
          scope: optional(text()),
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
          app: optional(text()),
          appId: optional(text()),
          targetEnvironment: optional(text()),
          owner: optional(text()),
          environment: optional(required()).describe('slug of the environment to sync from'),
          secretPath: optional(text(PATH_MAX)).describe('path to sync from; the stored path when omitted'),
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
          shouldDeleteIntegrationSecrets: flag(false),
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
