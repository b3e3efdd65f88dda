import { z } from 'zod';
import { folderDetailSchema, folderSchema } from '../../folders/folder-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { hasProjectId, id, optional, PATH_MAX, projectIdFields, projectIdOf, projectIdRequired, required, text } from '../../validation/input.ts';

const tags = ['Folders'];
const location = {
  ...projectIdFields,
  environment: required(),
  path: optional(text(PATH_MAX)),
  directory: optional(text(PATH_MAX)).describe('Deprecated: use path'),
};
/** `path`, or the deprecated `directory` the Infisical CLI still sends. */
const pathOf = (fields: { path?: string; directory?: string }) => fields.path ?? fields.directory ?? '/';
const folderResponse = z.object({ folder: folderSchema });

export function folderRoutes(app: ZodApp, { folders }: Services): void {
  app.post(
    '/api/v1/folders',
    {
      schema: {
        tags,
        summary: 'Create a folder (and any missing parents); an existing folder is returned unchanged',
        body: z.object({ ...location, name: required() }).refine(hasProjectId, projectIdRequired),
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
        summary: 'List the folders directly inside a path',
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
      schema: { tags, summary: 'Get a folder with its path', params: z.object({ id: id() }), response: { 200: z.object({ folder: folderDetailSchema }) } },
    },
    async (request) => ({ folder: await folders.get(request.actor, request.params.id) }),
  );

  app.patch(
    '/api/v1/folders/:folderId',
    {
      schema: {
        tags,
        summary: 'Rename a folder',
        params: z.object({ folderId: id() }),
        body: z.object({ ...location, name: required() }).refine(hasProjectId, projectIdRequired),
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
        summary: 'Delete a folder with everything inside it (by id, or by name inside path)',
        params: z.object({ folderIdOrName: id() }),
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
