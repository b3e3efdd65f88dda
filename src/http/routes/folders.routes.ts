import { z } from 'zod';
import { folderDetailSchema, folderSchema } from '../../folders/folder-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';

const tags = ['Folders'];
const location = {
  workspaceId: z.string().trim().min(1),
  environment: z.string().trim().min(1),
  path: z.string().default('/'),
};
const folderResponse = z.object({ folder: folderSchema });

export function folderRoutes(app: ZodApp, { folders }: Services): void {
  app.post(
    '/api/v1/folders',
    {
      schema: {
        tags,
        summary: 'Create a folder (and any missing parents); an existing folder is returned unchanged',
        body: z.object({
          ...location,
          path: z.string().optional(),
          name: z.string().trim().min(1),
          directory: z.string().optional().describe('Deprecated: use path'),
        }),
        response: { 200: folderResponse },
      },
    },
    async (request) => {
      const { workspaceId, environment, name, path, directory } = request.body;
      const folder = await folders.create(request.actor, { projectId: workspaceId, environment, name, path: path ?? directory ?? '/' });
      return { folder };
    },
  );

  app.get(
    '/api/v1/folders',
    {
      schema: {
        tags,
        summary: 'List the folders directly inside a path',
        querystring: z.object({ ...location, path: z.string().optional(), directory: z.string().optional() }),
        response: { 200: z.object({ folders: z.array(folderSchema) }) },
      },
    },
    async (request) => {
      const { workspaceId, environment, path, directory } = request.query;
      return { folders: await folders.list(request.actor, { projectId: workspaceId, environment, path: path ?? directory ?? '/' }) };
    },
  );

  app.get(
    '/api/v1/folders/:id',
    {
      schema: { tags, summary: 'Get a folder with its path', params: z.object({ id: z.string().trim() }), response: { 200: z.object({ folder: folderDetailSchema }) } },
    },
    async (request) => ({ folder: await folders.get(request.actor, request.params.id) }),
  );

  app.patch(
    '/api/v1/folders/:folderId',
    {
      schema: {
        tags,
        summary: 'Rename a folder',
        params: z.object({ folderId: z.string().trim() }),
        body: z.object({ ...location, name: z.string().trim().min(1) }),
        response: { 200: folderResponse },
      },
    },
    async (request) => {
      const { workspaceId, environment, name, path } = request.body;
      return { folder: await folders.rename(request.actor, request.params.folderId, { projectId: workspaceId, environment, name, path }) };
    },
  );

  app.delete(
    '/api/v1/folders/:folderIdOrName',
    {
      schema: {
        tags,
        summary: 'Delete a folder with everything inside it (by id, or by name inside path)',
        params: z.object({ folderIdOrName: z.string().trim() }),
        body: z.object(location),
        response: { 200: folderResponse },
      },
    },
    async (request) => {
      const { workspaceId, environment, path } = request.body;
      return { folder: await folders.delete(request.actor, request.params.folderIdOrName, { projectId: workspaceId, environment, path }) };
    },
  );
}
