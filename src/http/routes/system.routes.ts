import { z } from 'zod';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import type { ConsoleFiles } from '../console/console-files.ts';
import { consolePageFor, sendConsolePage } from '../console/console-routes.ts';
import { email, password, required } from '../../validation/input.ts';
import { VERSION } from '../../version.ts';
import { describeRoute, PUBLIC, reads } from '../docs/operation-doc.ts';

const bootstrapBody = z.object({
  email: email().describe("The admin user's email; it logs in with it."),
  password: password(8).describe("The admin user's password, at least 8 characters."),
  organization: required(64).describe("The organization's name; its slug is derived from it."),
});

const bootstrapResponse = z.object({
  message: z.string(),
  user: z.object({
    id: z.string(),
    email: z.string(),
    username: z.string(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  }),
  organization: z.object({ id: z.string(), name: z.string(), slug: z.string(), createdAt: z.string(), updatedAt: z.string() }),
  identity: z.object({ id: z.string(), name: z.string(), credentials: z.object({ token: z.string() }) }),
});

const entryPoints = z.object({
  name: z.literal('coffer'),
  version: z
    .string()
    .describe("The server's release.")
    .meta({ examples: [VERSION] }),
  docs: z.string().describe('The API reference (this document, rendered).'),
  openapi: z.string().describe('The OpenAPI document.'),
  status: z.string().describe('The status route.'),
  bootstrap: z.string().describe('The one-time bootstrap of a new instance.'),
});

/** Routes that need no access token. */
export function systemRoutes(app: ZodApp, services: Services, consoleFiles?: ConsoleFiles): void {
  app.get(
    '/',
    {
      schema: {
        tags: ['System'],
        ...describeRoute({
          summary: 'Where to start',
          description:
            'Links to the API reference, the OpenAPI document, the status route and the bootstrap. A browser (a request that accepts `text/html`) gets the web console instead, or, on a server built without it, is redirected (302) to the reference at `/api/docs`.',
          permission: PUBLIC,
          effects: reads(),
        }),
        response: { 200: entryPoints },
      },
    },
    async (request, reply) => {
      // a browser opening the server's address lands on the console (or, without one, the API reference)
      const page = consolePageFor(consoleFiles, request);
      if (page) return sendConsolePage(reply, page);
      if (request.headers.accept?.includes('text/html')) return reply.redirect('/api/docs', 302);
      return {
        name: 'coffer' as const,
        version: VERSION,
        docs: '/api/docs',
        openapi: '/api/docs/openapi.json',
        status: '/api/status',
        bootstrap: '/api/v1/admin/bootstrap',
      };
    },
  );

  app.get(
    '/api/status',
    {
      schema: {
        tags: ['System'],
        ...describeRoute({
          summary: 'Service status',
          description: 'Answers `{"message": "Ok"}` while the API is serving. (Readiness, which follows the database, is `/readyz` on the probe port.)',
          permission: PUBLIC,
          effects: reads(),
        }),
        response: { 200: z.object({ message: z.string().describe('Always `Ok`.') }) },
      },
    },
    async () => ({ message: 'Ok' }),
  );

  app.post(
    '/api/v1/admin/bootstrap',
    {
      schema: {
        tags: ['System'],
        ...describeRoute({
          summary: 'Bootstrap a new instance',
          description:
            'Sets up an instance that has no organization yet: the admin user, the organization and the machine identity `coffer-admin` (organization admin) with a non-expiring, revocable access token, which the answer carries once. Works exactly once per instance; afterwards it answers 400 `BootstrapError`. `coffer bootstrap` does the same from the command line.',
          permission: PUBLIC,
          effects: 'Creates the user, the organization, the identity and its token. Nothing is audited: there is no organization to audit in before it.',
          errors: [400],
        }),
        body: bootstrapBody,
        response: { 200: bootstrapResponse },
      },
    },
    async (request) => services.bootstrap.bootstrap(request.body),
  );
}
