import { z } from 'zod';
import { permissionRulesInputSchema } from '../../permissions/permission-schema.ts';
import { roleSchema, roleSlugSchema } from '../../roles/role-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { id, required, text } from '../../validation/input.ts';

const tags = ['Roles'];
const projectParams = z.object({ workspaceId: id().describe('project id or slug') });
const roleParams = projectParams.extend({ roleId: id() });
const roleResponse = { 200: z.object({ role: roleSchema }) };
const name = required(64);
const description = text(500).nullable().optional();

export function roleRoutes(app: ZodApp, { roles }: Services): void {
  app.post(
    '/api/v1/workspace/:workspaceId/roles',
    {
      schema: {
        tags,
        summary: 'Create a custom project role',
        params: projectParams,
        body: z.object({ slug: roleSlugSchema, name, description, permissions: permissionRulesInputSchema }),
        response: roleResponse,
      },
    },
    async (request) => ({ role: await roles.create(request.actor, request.params.workspaceId, request.body) }),
  );

  app.patch(
    '/api/v1/workspace/:workspaceId/roles/:roleId',
    {
      schema: {
        tags,
        summary: 'Update a custom project role',
        params: roleParams,
        body: z.object({ slug: roleSlugSchema.optional(), name: name.optional(), description, permissions: permissionRulesInputSchema.optional() }),
        response: roleResponse,
      },
    },
    async (request) => ({ role: await roles.update(request.actor, request.params.workspaceId, request.params.roleId, request.body) }),
  );

  app.delete(
    '/api/v1/workspace/:workspaceId/roles/:roleId',
    { schema: { tags, summary: 'Delete a custom project role that nobody holds', params: roleParams, response: roleResponse } },
    async (request) => ({ role: await roles.delete(request.actor, request.params.workspaceId, request.params.roleId) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId/roles',
    {
      schema: { tags, summary: 'List the built-in and custom roles of a project', params: projectParams, response: { 200: z.object({ roles: z.array(roleSchema) }) } },
    },
    async (request) => ({ roles: await roles.list(request.actor, request.params.workspaceId) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId/roles/slug/:roleSlug',
    {
      schema: { tags, summary: 'Get a project role by slug', params: projectParams.extend({ roleSlug: id() }), response: roleResponse },
    },
    async (request) => ({ role: await roles.getBySlug(request.actor, request.params.workspaceId, request.params.roleSlug) }),
  );
}
