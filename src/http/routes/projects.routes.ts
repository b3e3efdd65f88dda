import { z } from 'zod';
import { projectNameSchema, projectSchema, projectSlugSchema, projectWithEnvironmentsSchema } from '../../projects/project-schema.ts';
import { effectivePermissionsSchema } from '../../permissions/permission-schema.ts';
import { OPERATOR_ROLE_SLUG } from '../../permissions/permission-rules.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { id, optional, text } from '../../validation/input.ts';
import { changes, describeRoute, orgPermission, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Projects'];
const workspaceParams = z.object({ workspaceId: id().describe("The project's id.") });
const slugParams = z.object({ slug: id().describe("The project's slug.") });
/** The look-ups by slug the operators and SDKs call; each answers the bare project, as the reference does. */
const SLUG_LOOKUPS = ['/api/v2/workspace/:slug', '/api/v1/projects/slug/:slug', '/api/v1/workspace/slug/:slug'];

export function projectRoutes(app: ZodApp, { projects }: Services): void {
  app.post(
    '/api/v2/workspace',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create a project',
          description:
            "Creates a project in the caller's organization with the environments `dev`, `staging` and `prod`, its own data key (wrapped by the root key), and the caller as its admin. Without `slug`, one is derived from the name with a random suffix.",
          permission: orgPermission('create', 'workspace'),
          effects: changes("Creates the project, its environments and the caller's admin membership.", 'create-project'),
          errors: [400],
        }),
        body: z.object({
          projectName: projectNameSchema.describe("The project's name, 1 to 64 characters."),
          slug: optional(projectSlugSchema).describe(
            'A slug of 5 to 36 lowercase letters, digits and hyphens, unique in the organization (400 `DuplicateSlug` otherwise).',
          ),
          kmsKeyId: optional(text(256)).describe('Accepted for compatibility and ignored: Coffer keeps its own keys.'),
        }),
        response: { 200: z.object({ project: projectWithEnvironmentsSchema }) },
      },
    },
    async (request) => ({ project: await projects.create(request.actor, request.body) }),
  );

  app.get(
    '/api/v1/workspace',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List projects',
          description:
            "The projects of the caller's organization with their environments: all of them for organization admins, the projects the caller is a member of for everyone else.",
          permission: 'any member of the organization (the list is what the caller may see).',
          effects: reads(),
        }),
        response: { 200: z.object({ workspaces: z.array(projectWithEnvironmentsSchema) }) },
      },
    },
    async (request) => ({ workspaces: await projects.list(request.actor) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a project',
          description: 'A project with its environments.',
          permission: projectPermission('read', 'workspace'),
          effects: reads(),
        }),
        params: workspaceParams,
        response: { 200: z.object({ workspace: projectWithEnvironmentsSchema }) },
      },
    },
    async (request) => ({ workspace: await projects.get(request.actor, request.params.workspaceId) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId/effective-permissions',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'What the caller may do in a project',
          description: `The caller's own permissions in the project: each subject with the actions its roles and additional privileges allow now, and the rules they come from. \`coffer operator\` asks it at start to say which permissions its identity lacks (the built-in role \`${OPERATOR_ROLE_SLUG}\` has exactly those it needs). It answers only for the caller: nobody learns another member's permissions here.`,
          permission:
            'Any member of the project (any role, `no-access` included: it then lists nothing); 404 for a project of which the caller is no member, as for a missing one.',
          effects: reads(),
        }),
        params: workspaceParams,
        response: { 200: effectivePermissionsSchema },
      },
    },
    async (request) => projects.effectivePermissions(request.actor, request.params.workspaceId),
  );

  for (const url of SLUG_LOOKUPS) {
    app.get(
      url,
      {
        schema: {
          tags,
          ...describeRoute({
            summary: 'Get a project by its slug',
            description: `A project of the caller's organization with its environments, found by slug; the bare project object, as the reference answers (${SLUG_LOOKUPS.join(', ')} are the same operation under the paths different clients call).`,
            permission: projectPermission('read', 'workspace'),
            effects: reads(),
          }),
          params: slugParams,
          response: { 200: projectWithEnvironmentsSchema },
        },
      },
      async (request) => projects.getBySlug(request.actor, request.params.slug),
    );
  }

  app.patch(
    '/api/v1/workspace/:workspaceId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Update a project',
          description: 'Renames a project or turns its auto-capitalization of secret names on or off. Fields left out keep their value; an empty body changes nothing.',
          permission: projectPermission('edit', 'settings'),
          effects: changes('Updates the project.', 'update-project'),
        }),
        params: workspaceParams,
        body: z.object({
          name: projectNameSchema.optional().describe('The new name, 1 to 64 characters.'),
          autoCapitalization: z.boolean().optional().describe('Whether new secret names are upper-cased.'),
        }),
        response: { 200: z.object({ workspace: projectSchema }) },
      },
    },
    async (request) => ({ workspace: await projects.update(request.actor, request.params.workspaceId, request.body) }),
  );

  app.delete(
    '/api/v1/workspace/:workspaceId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete a project',
          description:
            'Deletes a project with everything in it: environments, folders, secrets and their versions, imports, tags, integrations, memberships and roles. Integrations that synced from it stop. Answers the deleted project.',
          permission: projectPermission('delete', 'workspace'),
          effects: changes('Deletes the project and all it holds (its audit entries are kept until they expire).', 'delete-project'),
        }),
        params: workspaceParams,
        response: { 200: z.object({ workspace: projectSchema }) },
      },
    },
    async (request) => ({ workspace: await projects.delete(request.actor, request.params.workspaceId) }),
  );
}
