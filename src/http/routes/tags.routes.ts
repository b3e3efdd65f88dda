import { z } from 'zod';
import type { Services } from '../../app/container.ts';
import { tagColorSchema, tagSchema, tagSlugSchema } from '../../tags/tag-schema.ts';
import type { ZodApp } from '../zod-app.ts';
import { id, optional, text } from '../../validation/input.ts';
import { changes, describeRoute, type OperationDoc, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Tags'];
const projectParams = z.object({ projectId: id().describe("The project's id.") });
const tagParams = projectParams.extend({ tagId: id().describe("The tag's id.") });
const slugParams = projectParams.extend({ tagSlug: id().describe("The tag's slug.") });
const slug = tagSlugSchema.describe("The tag's slug, unique in the project (it is also its name).").meta({ examples: ['backend'] });
const color = tagColorSchema.describe('A color to show the tag in, such as `#2e8b57` (at most 32 characters).');
const createDoc = {
  summary: 'Create a tag',
  description: 'Adds a tag to a project; secrets can then carry it (`tagIds`) and listings filter by it (`tagSlugs`).',
  permission: projectPermission('create', 'tags'),
  effects: changes('Creates the tag.', 'create-tag'),
  errors: [400],
} satisfies OperationDoc;
const bySlugDoc = {
  summary: 'Get a tag by slug',
  description: "One of the project's tags, by slug.",
  permission: projectPermission('read', 'tags'),
  effects: reads(),
} satisfies OperationDoc;
const cliTag = z.object({ id: z.string(), slug: z.string(), name: z.string(), color: z.string().nullable() });
const tagResponse = { 200: z.object({ workspaceTag: tagSchema }) };

export function tagRoutes(app: ZodApp, services: Services): void {
  const tagService = services.tags;

  app.post(
    '/api/v1/workspace/:projectId/tags',
    {
      schema: {
        tags,
        ...describeRoute(createDoc),
        params: projectParams,
        body: z.object({
          slug,
          color,
          name: optional(text(256)).describe("Ignored: a tag's name is its slug."),
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
        ...describeRoute({ summary: 'List tags', description: "The project's tags in slug order.", permission: projectPermission('read', 'tags'), effects: reads() }),
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
        ...describeRoute(bySlugDoc),
        params: slugParams,
        response: tagResponse,
      },
    },
    async (request) => ({ workspaceTag: await tagService.getBySlug(request.actor, request.params.projectId, request.params.tagSlug) }),
  );

  projectTagRoutes(app, services);

  app.get(
    '/api/v1/workspace/:projectId/tags/:tagId',
    {
      schema: {
        tags,
        ...describeRoute({ summary: 'Get a tag', description: "One of the project's tags, by id.", permission: projectPermission('read', 'tags'), effects: reads() }),
        params: tagParams,
        response: tagResponse,
      },
    },
    async (request) => ({ workspaceTag: await tagService.getById(request.actor, request.params.projectId, request.params.tagId) }),
  );

  app.patch(
    '/api/v1/workspace/:projectId/tags/:tagId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Update a tag',
          description: "Changes a tag's slug or color; fields left out keep their value. Secrets keep the tag.",
          permission: projectPermission('edit', 'tags'),
          effects: changes('Updates the tag.', 'update-tag'),
          errors: [400],
        }),
        params: tagParams,
        body: z.object({ slug: slug.optional(), color: color.optional() }),
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
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete a tag',
          description: 'Deletes a tag; the secrets that carried it lose it.',
          permission: projectPermission('delete', 'tags'),
          effects: changes('Deletes the tag and its links to secrets.', 'delete-tag'),
        }),
        params: tagParams,
        response: tagResponse,
      },
    },
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
        ...describeRoute({ ...createDoc, description: `${createDoc.description} The path the Infisical CLI calls (\`secrets set --tags\`); answers \`{tag}\`.` }),
        params: projectParams,
        body: z.object({ slug, color }),
        response: { 200: z.object({ tag: cliTag }) },
      },
    },
    async (request) => ({ tag: toTag(await tagService.create(request.actor, request.params.projectId, request.body)) }),
  );

  app.get(
    '/api/v1/projects/:projectId/tags/slug/:tagSlug',
    {
      schema: {
        tags,
        ...describeRoute({ ...bySlugDoc, description: `${bySlugDoc.description} The path the Infisical CLI calls; answers \`{tag}\`.` }),
        params: slugParams,
        response: { 200: z.object({ tag: cliTag }) },
      },
    },
    async (request) => ({ tag: toTag(await tagService.getBySlug(request.actor, request.params.projectId, request.params.tagSlug)) }),
  );
}
