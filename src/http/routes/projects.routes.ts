import { z } from 'zod';
import {
  projectNameSchema,
  projectSchema,
  projectSlugSchema,
  projectWithEnvironmentsSchema,
} from '../../projects/project-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';

const tags = ['Projects'];
const workspaceParams = z.object({ workspaceId: z.string().trim() });

export function projectRoutes(app: ZodApp, { projects }: Services): void {
  app.post(
    '/api/v2/workspace',
    {
      schema: {
        tags,
        summary: 'Create a project with the dev, staging and prod environments',
        body: z.object({ projectName: projectNameSchema, slug: projectSlugSchema.optional(), kmsKeyId: z.string().optional() }),
        response: { 200: z.object({ project: projectWithEnvironmentsSchema }) },
      },
    },
    async (request) => ({ project: await projects.create(request.actor, request.body) }),
  );

  app.get(
    '/api/v1/workspace',
    {
      schema: { tags, summary: 'List the projects of your organization', response: { 200: z.object({ workspaces: z.array(projectWithEnvironmentsSchema) }) } },
    },
    async (request) => ({ workspaces: await projects.list(request.actor) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId',
    {
      schema: { tags, summary: 'Get a project', params: workspaceParams, response: { 200: z.object({ workspace: projectWithEnvironmentsSchema }) } },
    },
    async (request) => ({ workspace: await projects.get(request.actor, request.params.workspaceId) }),
  );

  app.patch(
    '/api/v1/workspace/:workspaceId',
    {
      schema: {
        tags,
        summary: 'Update a project',
        params: workspaceParams,
        body: z.object({ name: projectNameSchema.optional(), autoCapitalization: z.boolean().optional() }),
        response: { 200: z.object({ workspace: projectSchema }) },
      },
    },
    async (request) => ({ workspace: await projects.update(request.actor, request.params.workspaceId, request.body) }),
  );

  app.delete(
    '/api/v1/workspace/:workspaceId',
    { schema: { tags, summary: 'Delete a project and everything in it', params: workspaceParams, response: { 200: z.object({ workspace: projectSchema }) } } },
    async (request) => ({ workspace: await projects.delete(request.actor, request.params.workspaceId) }),
  );
}
