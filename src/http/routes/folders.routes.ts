import { z } from 'zod';
import { folderDetailSchema, folderSchema } from '../../folders/folder-schema.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { environmentSlug, hasProjectId, id, optional, PATH_MAX, projectIdFields, projectIdOf, projectIdRequired, required, text } from '../../validation/input.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Folders'];
const location = {
  ...projectIdFields,
  environment: environmentSlug(),
  path: optional(text(PATH_MAX)).describe("The parent folder's path, such as `/app`; `/` when absent."),
  directory: optional(text(PATH_MAX)).describe('Deprecated: the same as `path`, as the Infisical CLI sends it.'),
};
const folderName = required()
  .describe("The folder's name: letters, digits, `_` and `-` (400 `InvalidFolderName` otherwise).")
  .meta({ examples: ['db'] });
/** `path`, or the deprecated `directory` the Infisical CLI still sends. */
const pathOf = (fields: { path?: string; directory?: string }) => fields.path ?? fields.directory ?? '/';
const folderResponse = z.object({ folder: folderSchema });

export function folderRoutes(app: ZodApp, { folders }: Services): void {
  app.post(
    '/api/v1/folders',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create a folder',
          description: 'Creates a folder named `name` inside `path`, and any missing folders on the way. A folder that already exists there is answered unchanged.',
          permission: projectPermission('create', 'secret-folders', 'path'),
          effects: changes('Creates the folder (and missing parents); Integrations reading the path are told at once.', 'create-folder'),
        }),
        body: z.object({ ...location, name: folderName }).refine(hasProjectId, projectIdRequired),
        response: { 200: folderResponse },
      },
    },
    async (request) => {
      const { environment, name } = request.body;
      const folder = await folders.create(request.actor, { projectId: projectIdOf(request.body), environment, name, path: pathOf(request.body) });
      return { folder };
    },
  );

  app.get(
    '/api/v1/folders',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List folders',
          description: 'The folders directly inside a path (not their subfolders).',
          permission: projectPermission('read', 'secret-folders', 'path'),
          effects: reads(),
        }),
        querystring: z.object(location).refine(hasProjectId, projectIdRequired),
        response: { 200: z.object({ folders: z.array(folderSchema) }) },
      },
    },
    async (request) => {
      const { query } = request;
      return { folders: await folders.list(request.actor, { projectId: projectIdOf(query), environment: query.environment, path: pathOf(query) }) };
    },
  );

  app.get(
    '/api/v1/folders/:id',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a folder',
          description: 'One folder by id, with its environment and its full path.',
          permission: projectPermission('read', 'secret-folders', 'path'),
          effects: reads(),
        }),
        params: z.object({ id: id().describe("The folder's id.") }),
        response: { 200: z.object({ folder: folderDetailSchema }) },
      },
    },
    async (request) => ({ folder: await folders.get(request.actor, request.params.id) }),
  );

  app.patch(
    '/api/v1/folders/:folderId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Rename a folder',
          description:
            'Gives the folder with this id, inside `path`, the new `name`. Secrets below it move with it; Integrations that read the old path stop finding it.',
          permission: projectPermission('edit', 'secret-folders', 'path'),
          effects: changes('Renames the folder.', 'update-folder'),
          errors: [400],
        }),
        params: z.object({ folderId: id().describe("The folder's id.") }),
        body: z.object({ ...location, name: folderName.describe('The new name: letters, digits, `_` and `-`.') }).refine(hasProjectId, projectIdRequired),
        response: { 200: folderResponse },
      },
    },
    async (request) => {
      const { body } = request;
      const location = { projectId: projectIdOf(body), environment: body.environment, name: body.name, path: pathOf(body) };
      return { folder: await folders.rename(request.actor, request.params.folderId, location) };
    },
  );

  app.delete(
    '/api/v1/folders/:folderIdOrName',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete a folder',
          description: 'Deletes a folder, named by id or by its name inside `path`, with every folder, secret and import inside it.',
          permission: projectPermission('delete', 'secret-folders', 'path'),
          effects: changes('Deletes the folder and everything below it.', 'delete-folder'),
          errors: [400],
        }),
        params: z.object({ folderIdOrName: id().describe("The folder's id, or its name inside `path`.") }),
        body: z.object(location).refine(hasProjectId, projectIdRequired),
        response: { 200: folderResponse },
      },
    },
    async (request) => {
      const { body } = request;
      const location = { projectId: projectIdOf(body), environment: body.environment, path: pathOf(body) };
      return { folder: await folders.delete(request.actor, request.params.folderIdOrName, location) };
    },
  );
}
