import { z } from 'zod';
import {
  projectNameSchema,
  projectSchema,
  projectSlugSchema,
  projectWithEnvironmentsSchema,
} from '../../projects/project-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { id, optional, text } from '../../validation/input.ts';

const tags = ['Projects'];
const workspaceParams = z.object({ workspaceId: id() });
const slugParams = z.object({ slug: id() });
/** The look-ups by slug the operators and SDKs call; each answers the bare project, as the reference does. */
const SLUG_LOOKUPS = ['/api/v2/workspace/:slug', '/api/v1/projects/slug/:slug', '/api/v1/workspace/slug/:slug'];

export function projectRoutes(app: ZodApp, { projects }: Services): void {
  app.post(
    '/api/v2/workspace',
    {
      schema: {
        tags,
        summary: 'Create a project with the dev, staging and prod environments',
        body: z.object({ projectName: projectNameSchema, slug: optional(projectSlugSchema), kmsKeyId: optional(text(256)) }),
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

  for (const url of SLUG_LOOKUPS) {
    app.get(
      url,
      { schema: { tags, summary: 'Get a project by its slug', params: slugParams, response: { 200: projectWithEnvironmentsSchema } } },
      async (request) => projects.getBySlug(request.actor, request.params.slug),
    );
  }

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
