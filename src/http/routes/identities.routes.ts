import { z } from 'zod';
import { identityNameSchema, identitySchema, orgIdentitySchema, orgRoleSchema } from '../../identities/identity-schema.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { id, optional } from '../../validation/input.ts';
import { changes, describeRoute, orgPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Identities'];
const identityParams = z.object({ identityId: id().describe("The identity's id.") });
const name = identityNameSchema.describe("The identity's name, 1 to 64 characters.").meta({ examples: ['ci-deployer'] });
const role = orgRoleSchema.describe("Its organization role: `admin`, `member` or `no-access` (at most the caller's own).");
const roleRule = 'Nobody gives an identity a higher organization role than their own, or manages an identity whose role is higher (403 `PermissionDenied`).';
const identityResponse = { 200: z.object({ identity: identitySchema }) };

export function identityRoutes(app: ZodApp, { identities }: Services): void {
  app.post(
    '/api/v1/identities',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create an identity',
          description: `Creates a machine identity in an organization, with an organization role (default \`no-access\`). It gets access to projects through project memberships, and credentials through universal auth. ${roleRule}`,
          permission: orgPermission('create', 'identity'),
          effects: changes('Creates the identity.', 'create-identity'),
        }),
        body: z.object({ name, organizationId: id().describe("The organization's id (the caller's)."), role: role.default('no-access') }),
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
        ...describeRoute({
          summary: 'List identities',
          description: 'The machine identities of an organization with their roles.',
          permission: orgPermission('read', 'identity'),
          effects: reads(),
        }),
        querystring: z.object({ orgId: optional(id()).describe("The organization's id; the caller's when absent.") }),
        response: { 200: z.object({ identities: z.array(orgIdentitySchema) }) },
      },
    },
    async (request) => ({ identities: await identities.list(request.actor, request.query.orgId ?? request.actor.orgId) }),
  );

  app.get(
    '/api/v1/identities/:identityId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get an identity',
          description: 'One machine identity with its organization role.',
          permission: orgPermission('read', 'identity'),
          effects: reads(),
        }),
        params: identityParams,
        response: { 200: z.object({ identity: orgIdentitySchema }) },
      },
    },
    async (request) => ({ identity: await identities.get(request.actor, request.params.identityId) }),
  );

  app.patch(
    '/api/v1/identities/:identityId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Update an identity',
          description: `Renames a machine identity or changes its organization role; fields left out keep their value. ${roleRule}`,
          permission: orgPermission('edit', 'identity'),
          effects: changes('Updates the identity.', 'update-identity'),
        }),
        params: identityParams,
        body: z.object({ name: name.optional(), role: role.optional() }),
        response: identityResponse,
      },
    },
    async (request) => ({ identity: await identities.update(request.actor, request.params.identityId, request.body) }),
  );

  app.delete(
    '/api/v1/identities/:identityId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete an identity',
          description: `Deletes a machine identity with its universal auth, client secrets, access tokens, memberships and privileges; its tokens stop working at once. ${roleRule}`,
          permission: orgPermission('delete', 'identity'),
          effects: changes('Deletes the identity and everything that belongs to it.', 'delete-identity'),
        }),
        params: identityParams,
        response: identityResponse,
      },
    },
    async (request) => ({ identity: await identities.delete(request.actor, request.params.identityId) }),
  );
}
