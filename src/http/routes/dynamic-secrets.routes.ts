import { z } from 'zod';
import {
  dynamicSecretName,
  dynamicSecretSchema,
  leaseDataSchema,
  leaseSchema,
  providerSchema,
  postgresInputsSchema,
  ttlSchema,
  visibleInputsSchema,
} from '../../dynamic-secrets/dynamic-secret-schema.ts';
import type { Services } from '../../app/container.ts';
import { environmentSlug, id, optional, path } from '../../validation/input.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';
import type { ZodApp } from '../zod-app.ts';

const tags = ['Dynamic secrets'];
const place = {
  projectSlug: id().describe("The project's slug."),
  environmentSlug: environmentSlug(),
  path: path(),
};
const placeQuery = z.object(place);
const nameParams = z.object({ name: dynamicSecretName });
const leaseParams = z.object({
  leaseId: id()
    .describe("The lease's id.")
    .meta({ examples: ['3f9c2a51-7d4e-4b8a-9c61-2e5f0a7b1d93'] }),
});
const isForced = z.boolean().default(false).describe('Forget it even when the database refuses the revocation (its role then stays).');
const dynamicSecretResponse = { 200: z.object({ dynamicSecret: dynamicSecretSchema }) };
const leaseResponse = { 200: z.object({ lease: leaseSchema }) };
const configErrors: [400] = [400];

export function dynamicSecretRoutes(app: ZodApp, services: Services): void {
  const dynamicSecrets = services.dynamicSecrets;

  app.post(
    '/api/v1/dynamic-secrets',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create a dynamic secret',
          description:
            'Stores a PostgreSQL admin connection (encrypted with the project key) and the statements that create, renew and revoke one role per lease. `{{username}}`, `{{password}}` and `{{expiration}}` in the statements are filled with generated values only.',
          permission: projectPermission('create', 'dynamic-secrets'),
          effects: changes('Creates the dynamic secret.', 'create-dynamic-secret'),
          errors: configErrors,
        }),
        body: z.object({
          ...place,
          name: dynamicSecretName,
          provider: providerSchema,
          defaultTTL: ttlSchema,
          maxTTL: ttlSchema.nullable().optional().describe('The longest a lease may last, renewals included; none: no limit.'),
        }),
        response: dynamicSecretResponse,
      },
    },
    async (request) => {
      const { name, provider, defaultTTL, maxTTL, ...at } = request.body;
      return { dynamicSecret: await dynamicSecrets.create(request.actor, at, { name, provider, defaultTTL, maxTTL }) };
    },
  );

  app.patch(
    '/api/v1/dynamic-secrets/:name',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Update a dynamic secret',
          description: 'Changes its TTLs, name or inputs; inputs left out keep their stored value. Leases already given keep their role.',
          permission: projectPermission('edit', 'dynamic-secrets'),
          effects: changes('Updates the dynamic secret.', 'update-dynamic-secret'),
          errors: configErrors,
        }),
        params: nameParams,
        body: z.object({
          ...place,
          data: z
            .object({
              inputs: postgresInputsSchema.partial().optional().describe('Inputs to change; the others keep their stored value.'),
              defaultTTL: ttlSchema.optional(),
              maxTTL: ttlSchema.nullable().optional().describe('The longest a lease may last; null: no limit.'),
              newName: dynamicSecretName.optional(),
            })
            .describe('What to change.'),
        }),
        response: dynamicSecretResponse,
      },
    },
    async (request) => {
      const { data, ...at } = request.body;
      return { dynamicSecret: await dynamicSecrets.update(request.actor, at, request.params.name, data) };
    },
  );

  app.delete(
    '/api/v1/dynamic-secrets/:name',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete a dynamic secret',
          description: 'Revokes each of its leases, then deletes it. A revocation the database refuses stops the deletion (400) unless `isForced`.',
          permission: projectPermission('delete', 'dynamic-secrets'),
          effects: changes('Revokes its leases and deletes the dynamic secret.', 'delete-dynamic-secret'),
          errors: configErrors,
        }),
        params: nameParams,
        body: z.object({ ...place, isForced }),
        response: dynamicSecretResponse,
      },
    },
    async (request) => {
      const { isForced: forced, ...at } = request.body;
      return { dynamicSecret: await dynamicSecrets.delete(request.actor, at, request.params.name, forced) };
    },
  );

  app.get(
    '/api/v1/dynamic-secrets/:name',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a dynamic secret',
          description: 'The dynamic secret with its inputs, less the admin password and the CA certificate (never returned).',
          permission: projectPermission('read', 'dynamic-secrets'),
          effects: reads(),
        }),
        params: nameParams,
        querystring: placeQuery,
        response: { 200: z.object({ dynamicSecret: dynamicSecretSchema.extend({ inputs: visibleInputsSchema }) }) },
      },
    },
    async (request) => ({ dynamicSecret: await dynamicSecrets.get(request.actor, request.query, request.params.name) }),
  );

  app.get(
    '/api/v1/dynamic-secrets',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List dynamic secrets',
          description: 'The dynamic secrets of a folder, by name.',
          permission: projectPermission('read', 'dynamic-secrets'),
          effects: reads(),
        }),
        querystring: placeQuery,
        response: { 200: z.object({ dynamicSecrets: z.array(dynamicSecretSchema) }) },
      },
    },
    async (request) => ({ dynamicSecrets: await dynamicSecrets.list(request.actor, request.query) }),
  );

  leaseRoutes(app, services);
}

function leaseRoutes(app: ZodApp, services: Services): void {
  const leases = services.dynamicSecretLeases;

  app.get(
    '/api/v1/dynamic-secrets/:name/leases',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List leases',
          description: "A dynamic secret's leases still held.",
          permission: projectPermission('read', 'dynamic-secret-leases'),
          effects: reads(),
        }),
        params: nameParams,
        querystring: placeQuery,
        response: { 200: z.object({ leases: z.array(leaseSchema) }) },
      },
    },
    async (request) => ({ leases: await leases.list(request.actor, request.query, request.params.name) }),
  );

  app.post(
    '/api/v1/dynamic-secrets/leases',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create a lease',
          description:
            "Creates a PostgreSQL role from the dynamic secret's creation statement, valid for `ttl` (its default TTL when absent, never more than its max TTL), and answers its credentials in `data` once. Leases held at once are capped per project and per caller (429).",
          permission: projectPermission('create', 'dynamic-secret-leases'),
          effects: changes('Creates the role and the lease.', 'create-dynamic-secret-lease'),
          errors: [400, 429],
        }),
        body: z.object({ ...place, dynamicSecretName, ttl: optional(ttlSchema) }),
        response: { 200: z.object({ lease: leaseSchema, dynamicSecret: dynamicSecretSchema, data: leaseDataSchema }) },
      },
    },
    async (request) => {
      const { dynamicSecretName: name, ttl, ...at } = request.body;
      return leases.create(request.actor, at, { dynamicSecretName: name, ttl });
    },
  );

  app.delete(
    '/api/v1/dynamic-secrets/leases/:leaseId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Revoke a lease',
          description:
            'Runs the revocation statement now (the role can no longer log in) and forgets the lease. A refusal is a 400 and the lease stays, marked, unless `isForced`.',
          permission: projectPermission('delete', 'dynamic-secret-leases'),
          effects: changes('Revokes the role and deletes the lease.', 'revoke-dynamic-secret-lease'),
          errors: [400],
        }),
        params: leaseParams,
        body: z.object({ ...place, isForced }),
        response: leaseResponse,
      },
    },
    async (request) => {
      const { isForced: forced, ...at } = request.body;
      return { lease: await leases.revoke(request.actor, at, request.params.leaseId, forced) };
    },
  );

  app.post(
    '/api/v1/dynamic-secrets/leases/:leaseId/renew',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Renew a lease',
          description: "Moves the lease's expiry on by `ttl` (the default TTL when absent) and runs the renew statement; past its start plus the max TTL is a 400.",
          permission: projectPermission('edit', 'dynamic-secret-leases'),
          effects: changes('Extends the lease.', 'renew-dynamic-secret-lease'),
          errors: [400],
        }),
        params: leaseParams,
        body: z.object({ ...place, ttl: optional(ttlSchema) }),
        response: leaseResponse,
      },
    },
    async (request) => {
      const { ttl, ...at } = request.body;
      return { lease: await leases.renew(request.actor, at, request.params.leaseId, { ttl }) };
    },
  );

  app.get(
    '/api/v1/dynamic-secrets/leases/:leaseId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a lease',
          description: 'One lease with its dynamic secret (never its credentials).',
          permission: projectPermission('read', 'dynamic-secret-leases'),
          effects: reads(),
        }),
        params: leaseParams,
        querystring: placeQuery,
        response: { 200: z.object({ lease: leaseSchema.extend({ dynamicSecret: dynamicSecretSchema }) }) },
      },
    },
    async (request) => ({ lease: await leases.get(request.actor, request.query, request.params.leaseId) }),
  );
}
