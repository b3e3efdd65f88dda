import { z } from 'zod';
import { environmentNameSchema, environmentSchema, environmentSlugSchema } from '../../environments/environment-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { id } from '../../validation/input.ts';

const tags = ['Environments'];
const environmentParams = z.object({ workspaceId: id(), id: id() });
const position = z.number().int().min(1).max(1_000_000);
const changeResponse = z.object({ message: z.string(), workspace: z.string(), environment: environmentSchema });

export function environmentRoutes(app: ZodApp, { environments }: Services): void {
  app.post(
    '/api/v1/workspace/:workspaceId/environments',
    {
      schema: {
        tags,
        summary: 'Create an environment',
        params: z.object({ workspaceId: id() }),
        body: z.object({ name: environmentNameSchema, slug: environmentSlugSchema, position: position.optional() }),
        response: { 200: changeResponse },
      },
    },
    async (request) => {
      const { workspaceId } = request.params;
      const environment = await environments.create(request.actor, workspaceId, request.body);
      return { message: 'Successfully created new environment', workspace: workspaceId, environment };
    },
  );

  app.patch(
    '/api/v1/workspace/:workspaceId/environments/:id',
    {
      schema: {
        tags,
        summary: 'Update an environment (slug, name, position)',
        params: environmentParams,
        body: z.object({
          slug: environmentSlugSchema.optional(),
          name: environmentNameSchema.optional(),
          position: position.optional(),
        }),
        response: { 200: changeResponse },
      },
    },
    async (request) => {
      const { workspaceId, id } = request.params;
      const environment = await environments.update(request.actor, workspaceId, id, request.body);
      return { message: 'Successfully updated environment', workspace: workspaceId, environment };
    },
  );

  app.delete(
    '/api/v1/workspace/:workspaceId/environments/:id',
    { schema: { tags, summary: 'Delete an environment with its folders and secrets', params: environmentParams, response: { 200: changeResponse } } },
    async (request) => {
      const { workspaceId, id } = request.params;
      const environment = await environments.delete(request.actor, workspaceId, id);
      return { message: 'Successfully deleted environment', workspace: workspaceId, environment };
    },
  );

  app.get(
    '/api/v1/workspace/:workspaceId/environments/:id',
    { schema: { tags, summary: 'Get an environment', params: environmentParams, response: { 200: z.object({ environment: environmentSchema }) } } },
    async (request) => ({ environment: await environments.get(request.actor, request.params.id, request.params.workspaceId) }),
  );

  app.get(
    '/api/v1/workspace/environments/:envId',
    {
      schema: {
        tags,
        summary: 'Get an environment by id',
        params: z.object({ envId: id() }),
        response: { 200: z.object({ environment: environmentSchema }) },
      },
    },
    async (request) => ({ environment: await environments.get(request.actor, request.params.envId) }),
  );
}
