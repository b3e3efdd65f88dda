import { z } from 'zod';
import type { Services } from '../../services/container.ts';
import { tagColorSchema, tagSchema, tagSlugSchema } from '../../tags/tag-schema.ts';
import type { ZodApp } from '../app.ts';
import { id, optional, text } from '../../validation/input.ts';

const tags = ['Tags'];
const projectParams = z.object({ projectId: id() });
const tagParams = projectParams.extend({ tagId: id() });
const cliTag = z.object({ id: z.string(), slug: z.string(), name: z.string(), color: z.string().nullable() });
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
          name: optional(text(256)).describe('Ignored; the name is the slug'),
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
        params: projectParams.extend({ tagSlug: id() }),
        response: tagResponse,
      },
    },
    async (request) => ({ workspaceTag: await tagService.getBySlug(request.actor, request.params.projectId, request.params.tagSlug) }),
  );

  projectTagRoutes(app, services);

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

/** The newer /api/v1/projects tag routes the Infisical CLI calls (`secrets set --tags`): `{tag}` answers. */
function projectTagRoutes(app: ZodApp, { tags: tagService }: Services): void {
  const toTag = (tag: z.infer<typeof tagSchema>) => ({ id: tag.id, slug: tag.slug, name: tag.slug, color: tag.color });
  app.post(
    '/api/v1/projects/:projectId/tags',
    {
      schema: {
        tags,
        summary: 'Create a project tag',
        params: projectParams,
        body: z.object({ slug: tagSlugSchema, color: tagColorSchema }),
        response: { 200: z.object({ tag: cliTag }) },
      },
    },
    async (request) => ({ tag: toTag(await tagService.create(request.actor, request.params.projectId, request.body)) }),
  );

  app.get(
    '/api/v1/projects/:projectId/tags/slug/:tagSlug',
    { schema: { tags, summary: 'Get a project tag by slug', params: projectParams.extend({ tagSlug: id() }), response: { 200: z.object({ tag: cliTag }) } } },
    async (request) => ({ tag: toTag(await tagService.getBySlug(request.actor, request.params.projectId, request.params.tagSlug)) }),
  );
}
