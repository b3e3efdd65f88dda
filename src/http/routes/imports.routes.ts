import { z } from 'zod';
import { secretImportSchema } from '../../imports/import-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { hasProjectId, id, optional, PATH_MAX, path, projectIdFields, projectIdOf, projectIdRequired, required, text } from '../../validation/input.ts';

const tags = ['Secret imports'];
const location = {
  ...projectIdFields,
  environment: required().describe('slug of the environment holding the imports'),
  path: path().describe('path of the folder holding the imports'),
};
const importParams = z.object({ secretImportId: id() });
const changeResponse = z.object({ message: z.string(), secretImport: secretImportSchema });

export function importRoutes(app: ZodApp, { imports }: Services): void {
  app.post(
    '/api/v1/secret-imports',
    {
      schema: {
        tags,
        summary: 'Import the secrets of another environment and path into a folder',
        body: z
          .object({
            ...location,
            import: z.object({ environment: required(), path: text(PATH_MAX) }).describe('the source'),
            isReplication: z.boolean().optional().describe('replication is not supported; only false is accepted'),
          })
          .refine(hasProjectId, projectIdRequired),
        response: { 200: changeResponse },
      },
    },
    async (request) => {
      const { environment, path, import: source, isReplication } = request.body;
      const secretImport = await imports.create(request.actor, { projectId: projectIdOf(request.body), environment, path, source, isReplication });
      return { message: 'Successfully created secret import', secretImport };
    },
  );

  app.patch(
    '/api/v1/secret-imports/:secretImportId',
    {
      schema: {
        tags,
        summary: 'Change the source or the position (1-based) of a secret import',
        params: importParams,
        body: z
          .object({
            ...location,
            import: z.object({
              environment: optional(required()),
              path: optional(text(PATH_MAX)),
              position: z.number().int().min(1).max(1_000_000).optional(),
            }),
          })
          .refine(hasProjectId, projectIdRequired),
        response: { 200: changeResponse },
      },
    },
    async (request) => {
      const { environment, path, import: changes } = request.body;
      const secretImport = await imports.update(request.actor, request.params.secretImportId, {
        projectId: projectIdOf(request.body),
        environment,
        path,
        changes,
      });
      return { message: 'Successfully updated secret import', secretImport };
    },
  );

  app.get(
    '/api/v1/secret-imports',
    {
      schema: {
        tags,
        summary: 'List the imports of a folder in position order',
        querystring: z.object(location).refine(hasProjectId, projectIdRequired),
        response: { 200: z.object({ message: z.string(), secretImports: z.array(secretImportSchema) }) },
      },
    },
    async (request) => {
      const { environment, path } = request.query;
      const secretImports = await imports.list(request.actor, { projectId: projectIdOf(request.query), environment, path });
      return { message: 'Successfully fetched secret imports', secretImports };
    },
  );

  app.get(
    '/api/v1/secret-imports/:secretImportId',
    {
      schema: { tags, summary: 'Get a secret import', params: importParams, response: { 200: z.object({ secretImport: secretImportSchema }) } },
    },
    async (request) => ({ secretImport: await imports.get(request.actor, request.params.secretImportId) }),
  );

  app.delete(
    '/api/v1/secret-imports/:secretImportId',
    {
      schema: {
        tags,
        summary: 'Delete a secret import',
        params: importParams,
        body: z.object(location).refine(hasProjectId, projectIdRequired),
        response: { 200: changeResponse },
      },
    },
    async (request) => {
      const { environment, path } = request.body;
      const secretImport = await imports.delete(request.actor, request.params.secretImportId, { projectId: projectIdOf(request.body), environment, path });
      return { message: 'Successfully deleted secret import', secretImport };
    },
  );
}
