import { z } from 'zod';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { required } from '../../validation/input.ts';
import { VERSION } from '../../version.ts';

const bootstrapBody = z.object({
  email: z.email(),
  password: z.string().min(8, 'must be at least 8 characters').max(1024),
  organization: required(64),
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
  version: z.string(),
  docs: z.string(),
  openapi: z.string(),
  status: z.string(),
  bootstrap: z.string(),
});

/** Routes that need no access token. */
export function systemRoutes(app: ZodApp, services: Services): void {
  app.get(
    '/',
    {
      schema: {
        tags: ['System'],
        summary: 'Where to start: links to the API reference',
        response: { 200: entryPoints },
      },
    },
    async (request, reply) => {
      // a browser opening the server's address lands on the API reference
      if (request.headers.accept?.includes('text/html')) return reply.redirect('/api/docs', 302);
      return { name: 'coffer' as const, version: VERSION, docs: '/api/docs', openapi: '/api/docs/openapi.json', status: '/api/status', bootstrap: '/api/v1/admin/bootstrap' };
    },
  );

  app.get(
    '/api/status',
    { schema: { tags: ['System'], summary: 'Service status', response: { 200: z.object({ message: z.string() }) } } },
    async () => ({ message: 'Ok' }),
  );

  app.post(
    '/api/v1/admin/bootstrap',
    {
      schema: {
        tags: ['System'],
        summary: 'Set up an empty instance: admin user, organization and an admin machine identity token (works once)',
        body: bootstrapBody,
        response: { 200: bootstrapResponse },
      },
    },
    async (request) => services.bootstrap.bootstrap(request.body),
  );
}
