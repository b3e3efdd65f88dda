import { z } from 'zod';
import { permissionRulesInputSchema } from '../../permissions/permission-schema.ts';
import { roleSchema, roleSlugSchema } from '../../roles/role-schema.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { id, required, text } from '../../validation/input.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Roles'];
const projectParams = z.object({ workspaceId: id().describe("The project's id or slug.") });
const roleParams = projectParams.extend({ roleId: id().describe("The custom role's id.") });
const roleResponse = { 200: z.object({ role: roleSchema }) };
const slug = roleSlugSchema
  .describe("The role's slug, unique in the project; not a built-in one (`admin`, `member`, `viewer`, `no-access`).")
  .meta({ examples: ['secret-reader'] });
const name = required(64)
  .describe("The role's name.")
  .meta({ examples: ['Secret reader'] });
const description = text(500).nullable().optional().describe('What the role is for.');
const escalation = 'Nobody defines a role with rules beyond their own permissions (403 `PrivilegeEscalation`).';

export function roleRoutes(app: ZodApp, { roles }: Services): void {
  app.post(
    '/api/v1/workspace/:workspaceId/roles',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create a custom role',
          description: `Creates a project role made of CASL rules; rules on secrets, folders and imports may name environments and secret paths (\`{"$glob": "/app/**"}\`). ${escalation}`,
          permission: projectPermission('create', 'role'),
          effects: changes('Creates the role.', 'create-project-role'),
          errors: [400],
        }),
        params: projectParams,
        body: z.object({ slug, name, description, permissions: permissionRulesInputSchema }),
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
        ...describeRoute({
          summary: 'Update a custom role',
          description: `Changes a custom role's slug, name, description or rules (replaced as a whole); fields left out keep their value. Members holding it get the new rules at once. ${escalation}`,
          permission: projectPermission('edit', 'role'),
          effects: changes('Updates the role.', 'update-project-role'),
          errors: [400],
        }),
        params: roleParams,
        body: z.object({ slug: slug.optional(), name: name.optional(), description, permissions: permissionRulesInputSchema.optional() }),
        response: roleResponse,
      },
    },
    async (request) => ({ role: await roles.update(request.actor, request.params.workspaceId, request.params.roleId, request.body) }),
  );

  app.delete(
    '/api/v1/workspace/:workspaceId/roles/:roleId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete a custom role',
          description: 'Deletes a custom role that no member holds (400 `RoleInUse` otherwise).',
          permission: projectPermission('delete', 'role'),
          effects: changes('Deletes the role.', 'delete-project-role'),
          errors: [400],
        }),
        params: roleParams,
        response: roleResponse,
      },
    },
    async (request) => ({ role: await roles.delete(request.actor, request.params.workspaceId, request.params.roleId) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId/roles',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List roles',
          description: 'The built-in and custom roles of a project, with their rules.',
          permission: projectPermission('read', 'role'),
          effects: reads(),
        }),
        params: projectParams,
        response: { 200: z.object({ roles: z.array(roleSchema) }) },
      },
    },
    async (request) => ({ roles: await roles.list(request.actor, request.params.workspaceId) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId/roles/slug/:roleSlug',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a role by slug',
          description: 'One role of a project, built-in or custom, with its rules.',
          permission: projectPermission('read', 'role'),
          effects: reads(),
        }),
        params: projectParams.extend({ roleSlug: id().describe("The role's slug.") }),
        response: roleResponse,
      },
    },
    async (request) => ({ role: await roles.getBySlug(request.actor, request.params.workspaceId, request.params.roleSlug) }),
  );
}
