import { z } from 'zod';
import { appConnectionSchema, createPostgresConnectionSchema, updatePostgresConnectionSchema } from '../../app-connections/app-connection-schema.ts';
import type { Services } from '../../app/container.ts';
import { id } from '../../validation/input.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';
import type { ZodApp } from '../zod-app.ts';

const tags = ['App Connections'];
const base = '/api/v1/app-connections/postgres';
const connectionParams = z.object({
  connectionId: id()
    .meta({ examples: ['5e7a9c1e-3b5d-4f7a-9c1e-3b5d7f9a1c2e'] })
    .describe("The connection's id."),
});
const projectQuery = z.object({ projectId: id().describe('The project whose connections to list.') });
const one = { 200: z.object({ appConnection: appConnectionSchema }) };
const secretNote = 'The connection password is stored encrypted with the project key and never answered.';

export function appConnectionRoutes(app: ZodApp, services: Services): void {
  const connections = services.appConnections;

  app.get(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List PostgreSQL connections',
          description: `The project's PostgreSQL connections by name. ${secretNote}`,
          permission: projectPermission('read', 'app-connections'),
          effects: reads(),
        }),
        querystring: projectQuery,
        response: { 200: z.object({ appConnections: z.array(appConnectionSchema) }) },
      },
    },
    async (request) => ({ appConnections: await connections.list(request.actor, request.query.projectId) }),
  );

  app.get(
    `${base}/:connectionId`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a PostgreSQL connection',
          description: `One connection by id. ${secretNote}`,
          permission: projectPermission('read', 'app-connections'),
          effects: reads(),
        }),
        params: connectionParams,
        response: one,
      },
    },
    async (request) => ({ appConnection: await connections.get(request.actor, request.params.connectionId) }),
  );

  app.get(
    `${base}/connection-name/:connectionName`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a PostgreSQL connection by name',
          description: `One connection of the project by name. ${secretNote}`,
          permission: projectPermission('read', 'app-connections'),
          effects: reads(),
        }),
        params: z.object({
          connectionName: id()
            .meta({ examples: ['orders-db'] })
            .describe("The connection's name."),
        }),
        querystring: projectQuery,
        response: one,
      },
    },
    async (request) => ({ appConnection: await connections.getByName(request.actor, request.query.projectId, request.params.connectionName) }),
  );

  app.post(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create a PostgreSQL connection',
          description: `A connection secret rotations set passwords through. Coffer signs in with the credentials first and refuses them (400, a fixed sentence) when it cannot. ${secretNote}`,
          permission: projectPermission('create', 'app-connections'),
          effects: changes('Creates the connection.', 'create-app-connection'),
          errors: [400],
        }),
        body: createPostgresConnectionSchema,
        response: one,
      },
    },
    async (request) => ({ appConnection: await connections.create(request.actor, request.body) }),
  );

  app.patch(
    `${base}/:connectionId`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Update a PostgreSQL connection',
          description: `Renames the connection or replaces its credentials (checked by signing in first). ${secretNote}`,
          permission: projectPermission('edit', 'app-connections'),
          effects: changes('Updates the connection.', 'update-app-connection'),
          errors: [400],
        }),
        params: connectionParams,
        body: updatePostgresConnectionSchema,
        response: one,
      },
    },
    async (request) => ({ appConnection: await connections.update(request.actor, request.params.connectionId, request.body) }),
  );

  app.delete(
    `${base}/:connectionId`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete a PostgreSQL connection',
          description: 'Deletes the connection; refused (400) while a secret rotation uses it.',
          permission: projectPermission('delete', 'app-connections'),
          effects: changes('Deletes the connection.', 'delete-app-connection'),
          errors: [400],
        }),
        params: connectionParams,
        response: one,
      },
    },
    async (request) => ({ appConnection: await connections.delete(request.actor, request.params.connectionId) }),
  );
}
