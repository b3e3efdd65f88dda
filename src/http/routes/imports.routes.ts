import { z } from 'zod';
import { secretImportSchema } from '../../imports/import-schema.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import {
  environmentSlug,
  hasProjectId,
  id,
  optional,
  PATH_MAX,
  path,
  position,
  projectIdFields,
  projectIdOf,
  projectIdRequired,
  required,
  text,
} from '../../validation/input.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Secret imports'];
const location = {
  ...projectIdFields,
  environment: environmentSlug().describe('The slug of the environment holding the imports.'),
  path: path().describe('The path of the folder holding the imports (`/` when absent).'),
};
const sourceEnvironment = required().describe('The slug of the environment to import from.');
const sourcePath = text(PATH_MAX).describe('The path of the folder to import from, such as `/shared`.');
const importParams = z.object({ secretImportId: id().describe("The secret import's id.") });
const changeResponse = z.object({ message: z.string().describe('What was done.'), secretImport: secretImportSchema });

export function importRoutes(app: ZodApp, { imports }: Services): void {
  app.post(
    '/api/v1/secret-imports',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create a secret import',
          description:
            "Makes the secrets of another environment and path readable in a folder, after the imports already there. Reads with imports (and Integrations) then see them; the folder's own secrets win over imported ones, a later import over an earlier one. A folder cannot import itself, the same source twice, or form a cycle (400).",
          permission: projectPermission('create', 'secrets', 'path'),
          effects: changes('Creates the import; Integrations reading the folder are updated at once.', 'create-secret-import'),
          errors: [400],
        }),
        body: z
          .object({
            ...location,
            import: z.object({ environment: sourceEnvironment, path: sourcePath }).describe('The place to import from.'),
            isReplication: z.boolean().optional().describe('Replication is not supported: only `false` is accepted (400 `ReplicationNotSupported`).'),
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
        ...describeRoute({
          summary: 'Update a secret import',
          description: "Changes where an import reads from, or its position among the folder's imports (from 1; later imports win over earlier ones).",
          permission: projectPermission('edit', 'secrets', 'path'),
          effects: changes('Updates the import (and the positions of the others when it moves).', 'update-secret-import'),
          errors: [400],
        }),
        params: importParams,
        body: z
          .object({
            ...location,
            import: z
              .object({
                environment: optional(sourceEnvironment),
                path: optional(sourcePath),
                position: position().optional().describe("The new position among the folder's imports, from 1."),
              })
              .describe('What to change; fields left out keep their value.'),
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
        ...describeRoute({
          summary: 'List secret imports',
          description: 'The imports of a folder, in position order.',
          permission: projectPermission('read', 'secrets', 'path'),
          effects: reads('get-secret-imports'),
        }),
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
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a secret import',
          description: 'One import by id.',
          permission: projectPermission('read', 'secrets', 'path'),
          effects: reads('get-secret-import'),
        }),
        params: importParams,
        response: { 200: z.object({ secretImport: secretImportSchema }) },
      },
    },
    async (request) => ({ secretImport: await imports.get(request.actor, request.params.secretImportId) }),
  );

  app.delete(
    '/api/v1/secret-imports/:secretImportId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete a secret import',
          description: 'Removes an import from its folder; the imported secrets are no longer seen there.',
          permission: projectPermission('delete', 'secrets', 'path'),
          effects: changes('Deletes the import; Integrations reading the folder are updated at once.', 'delete-secret-import'),
        }),
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
