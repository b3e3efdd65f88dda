import { z } from 'zod';
import type { Services } from '../../services/container.ts';
import { tagColorSchema, tagSchema, tagSlugSchema } from '../../tags/tag-schema.ts';
import type { ZodApp } from '../app.ts';

const tags = ['Tags'];
const projectParams = z.object({ projectId: z.string().trim() });
const tagParams = projectParams.extend({ tagId: z.string().trim() });
const tagResponse = { 200: z.object({ workspaceTag: tagSchema }) };

export function tagRoutes(app: ZodApp, services: Services): void {
  const tagService = services.tags;

  app.post(
    '/api/v1/workspace/:projectId/tags',
    {
      schema: {
        tags,
        summary: 'Create a project tag',
        params: projectParams,
        body: z.object({
          slug: tagSlugSchema,
          color: tagColorSchema,
          name: z.string().optional().describe('Ignored; the name is the slug'),
        }),
        response: tagResponse,
      },
    },
    async (request) => {
      const { slug, color } = request.body;
      return { workspaceTag: await tagService.create(request.actor, request.params.projectId, { slug, color }) };
    },
  );

  app.get(
    '/api/v1/workspace/:projectId/tags',
    {
      schema: {
        tags,
        summary: 'List the project tags in slug order',
        params: projectParams,
        response: { 200: z.object({ workspaceTags: z.array(tagSchema) }) },
      },
    },
    async (request) => ({ workspaceTags: await tagService.list(request.actor, request.params.projectId) }),
  );

  app.get(
    '/api/v1/workspace/:projectId/tags/slug/:tagSlug',
    {
      schema: {
        tags,
        summary: 'Get a project tag by slug',
        params: projectParams.extend({ tagSlug: z.string().trim() }),
        response: tagResponse,
      },
    },
    async (request) => ({ workspaceTag: await tagService.getBySlug(request.actor, request.params.projectId, request.params.tagSlug) }),
  );

  app.get(
    '/api/v1/workspace/:projectId/tags/:tagId',
    { schema: { tags, summary: 'Get a project tag', params: tagParams, response: tagResponse } },
    async (request) => ({ workspaceTag: await tagService.getById(request.actor, request.params.projectId, request.params.tagId) }),
  );

  app.patch(
    '/api/v1/workspace/:projectId/tags/:tagId',
    {
      schema: {
        tags,
        summary: 'Update a project tag (slug, color)',
        params: tagParams,
        body: z.object({ slug: tagSlugSchema.optional(), color: tagColorSchema.optional() }),
        response: tagResponse,
      },
    },
    async (request) => {
      const { projectId, tagId } = request.params;
      return { workspaceTag: await tagService.update(request.actor, projectId, tagId, request.body) };
    },
  );

  app.delete(
    '/api/v1/workspace/:projectId/tags/:tagId',
    { schema: { tags, summary: 'Delete a project tag and its links to secrets', params: tagParams, response: tagResponse } },
    async (request) => ({ workspaceTag: await tagService.delete(request.actor, request.params.projectId, request.params.tagId) }),
  );
}
