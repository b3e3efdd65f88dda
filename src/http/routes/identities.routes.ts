import { z } from 'zod';
import { identityNameSchema, identitySchema, orgIdentitySchema, orgRoleSchema } from '../../identities/identity-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { id, optional } from '../../validation/input.ts';

const tags = ['Identities'];
const identityParams = z.object({ identityId: id() });
const identityResponse = { 200: z.object({ identity: identitySchema }) };

export function identityRoutes(app: ZodApp, { identities }: Services): void {
  app.post(
    '/api/v1/identities',
    {
      schema: {
        tags,
        summary: 'Create a machine identity with an organization role',
        body: z.object({ name: identityNameSchema, organizationId: id(), role: orgRoleSchema.default('no-access') }),
        response: identityResponse,
      },
    },
    async (request) => ({ identity: await identities.create(request.actor, request.body) }),
  );

  app.get(
    '/api/v1/identities',
    {
      schema: {
        tags,
        summary: 'List the machine identities of an organization',
        querystring: z.object({ orgId: optional(id()) }),
        response: { 200: z.object({ identities: z.array(orgIdentitySchema) }) },
      },
    },
    async (request) => ({ identities: await identities.list(request.actor, request.query.orgId ?? request.actor.orgId) }),
  );

  app.get(
    '/api/v1/identities/:identityId',
    { schema: { tags, summary: 'Get a machine identity', params: identityParams, response: { 200: z.object({ identity: orgIdentitySchema }) } } },
    async (request) => ({ identity: await identities.get(request.actor, request.params.identityId) }),
  );

  app.patch(
    '/api/v1/identities/:identityId',
    {
      schema: {
        tags,
        summary: "Rename a machine identity or change its organization role",
        params: identityParams,
        body: z.object({ name: identityNameSchema.optional(), role: orgRoleSchema.optional() }),
        response: identityResponse,
      },
    },
    async (request) => ({ identity: await identities.update(request.actor, request.params.identityId, request.body) }),
  );

  app.delete(
    '/api/v1/identities/:identityId',
    { schema: { tags, summary: 'Delete a machine identity and its credentials', params: identityParams, response: identityResponse } },
    async (request) => ({ identity: await identities.delete(request.actor, request.params.identityId) }),
  );
}
