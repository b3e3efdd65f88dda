import { z } from 'zod';
import { environmentNameSchema, environmentSchema, environmentSlugSchema } from '../../environments/environment-schema.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { id, position } from '../../validation/input.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Environments'];
const workspaceId = id().describe("The project's id.");
const environmentParams = z.object({ workspaceId, id: id().describe("The environment's id.") });
const listedAt = position().describe('Where the environment is listed, from 1; the others move to make room.');
const name = environmentNameSchema.describe("The environment's name, 1 to 64 characters.").meta({ examples: ['Preview'] });
const slug = environmentSlugSchema
  .describe('Lowercase letters, digits and hyphens, unique in the project; clients and Integrations name the environment by it.')
  .meta({ examples: ['preview'] });
const changeResponse = z.object({
  message: z.string().describe('What was done.'),
  workspace: z.string().describe("The project's id."),
  environment: environmentSchema,
});

export function environmentRoutes(app: ZodApp, { environments }: Services): void {
  app.post(
    '/api/v1/workspace/:workspaceId/environments',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create an environment',
          description: 'Adds an environment (with its empty root folder) to a project, last unless `position` says otherwise.',
          permission: projectPermission('create', 'environments'),
          effects: changes('Creates the environment and its root folder.', 'create-environment'),
          errors: [400],
        }),
        params: z.object({ workspaceId }),
        body: z.object({ name, slug, position: listedAt.optional() }),
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
        ...describeRoute({
          summary: 'Update an environment',
          description: 'Renames an environment, changes its slug, or moves it. Fields left out keep their value. Integrations that name the old slug stop finding it.',
          permission: projectPermission('edit', 'environments'),
          effects: changes('Updates the environment (and the positions of the others when it moves).', 'update-environment'),
          errors: [400],
        }),
        params: environmentParams,
        body: z.object({ slug: slug.optional(), name: name.optional(), position: listedAt.optional() }),
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
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete an environment',
          description: 'Deletes an environment with all its folders, secrets and imports. Integrations reading it report it missing.',
          permission: projectPermission('delete', 'environments'),
          effects: changes('Deletes the environment and everything in it.', 'delete-environment'),
        }),
        params: environmentParams,
        response: { 200: changeResponse },
      },
    },
    async (request) => {
      const { workspaceId, id } = request.params;
      const environment = await environments.delete(request.actor, workspaceId, id);
      return { message: 'Successfully deleted environment', workspace: workspaceId, environment };
    },
  );

  app.get(
    '/api/v1/workspace/:workspaceId/environments/:id',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get an environment',
          description: 'One environment of a project.',
          permission: projectPermission('read', 'environments'),
          effects: reads(),
        }),
        params: environmentParams,
        response: { 200: z.object({ environment: environmentSchema }) },
      },
    },
    async (request) => ({ environment: await environments.get(request.actor, request.params.id, request.params.workspaceId) }),
  );

  app.get(
    '/api/v1/workspace/environments/:envId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get an environment by id',
          description: 'One environment, found by its id alone.',
          permission: projectPermission('read', 'environments'),
          effects: reads(),
        }),
        params: z.object({ envId: id().describe("The environment's id.") }),
        response: { 200: z.object({ environment: environmentSchema }) },
      },
    },
    async (request) => ({ environment: await environments.get(request.actor, request.params.envId) }),
  );
}
