import { z } from 'zod';
import {
  identityMembershipSchema,
  membershipRoleSchema,
  roleAssignmentSchema,
  roleAssignmentsSchema,
  userMembershipSchema,
} from '../../memberships/membership-schema.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { email, id, optional, required } from '../../validation/input.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Memberships'];
const projectId = id().describe("The project's id.");
const userMembershipParams = z.object({ workspaceId: projectId, membershipId: id().describe("The user's project membership id.") });
const identityParams = z.object({ projectId, identityId: id().describe("The identity's id.") });
const escalation = 'Nobody grants roles beyond their own permissions, or changes a member who holds more than they do (403 `PrivilegeEscalation`).';
const rolesResponse = { 200: z.object({ roles: z.array(membershipRoleSchema) }) };
const memberUser = z.object({
  id: z.string(),
  email: z.string(),
  username: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  publicKey: z.string().nullable(),
});
const identityMembershipDetails = identityMembershipSchema.extend({
  identity: z.object({ id: z.string(), name: z.string(), authMethod: z.string().nullable() }),
  roles: z.array(membershipRoleSchema),
});

export function membershipRoutes(app: ZodApp, services: Services): void {
  userMembershipRoutes(app, services);
  identityMembershipRoutes(app, services);
}

function userMembershipRoutes(app: ZodApp, { userMemberships }: Services): void {
  app.post(
    '/api/v2/workspace/:projectId/memberships',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Add users to a project',
          description: `Makes users of the organization members of a project, by email or username, with the role \`member\` unless \`roleSlugs\` say otherwise. ${escalation}`,
          permission: projectPermission('create', 'member'),
          effects: changes('Creates the memberships.', 'add-workspace-members'),
          errors: [400],
        }),
        params: z.object({ projectId }),
        body: z.object({
          emails: z.array(email()).default([]).describe('Emails of organization users to add.'),
          usernames: z.array(required()).default([]).describe('Usernames of organization users to add.'),
          roleSlugs: z.array(required().toLowerCase()).min(1).optional().describe('Their roles (default `member`).'),
        }),
        response: { 200: z.object({ memberships: z.array(userMembershipSchema) }) },
      },
    },
    async (request) => ({ memberships: await userMemberships.add(request.actor, request.params.projectId, request.body) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId/memberships',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List project users',
          description: 'The users of a project with their roles.',
          permission: projectPermission('read', 'member'),
          effects: reads(),
        }),
        params: z.object({ workspaceId: projectId }),
        response: { 200: z.object({ memberships: z.array(userMembershipSchema.extend({ user: memberUser, roles: z.array(membershipRoleSchema) })) }) },
      },
    },
    async (request) => ({ memberships: await userMemberships.list(request.actor, request.params.workspaceId) }),
  );

  app.patch(
    '/api/v1/workspace/:workspaceId/memberships/:membershipId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Change a user's project roles",
          description: `Replaces a user's roles in a project, permanent and temporary. ${escalation}`,
          permission: projectPermission('edit', 'member'),
          effects: changes('Replaces the roles.', 'update-user-workspace-role'),
        }),
        params: userMembershipParams,
        body: z.object({ roles: roleAssignmentsSchema }),
        response: rolesResponse,
      },
    },
    async (request) => {
      const { workspaceId, membershipId } = request.params;
      return { roles: await userMemberships.updateRoles(request.actor, workspaceId, membershipId, request.body.roles) };
    },
  );

  app.delete(
    '/api/v1/workspace/:workspaceId/memberships/:membershipId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Remove a user from a project',
          description: `Ends a user's membership of a project with its roles and personal overrides. ${escalation}`,
          permission: projectPermission('delete', 'member'),
          effects: changes('Deletes the membership.', 'remove-workspace-member'),
        }),
        params: userMembershipParams,
        response: { 200: z.object({ membership: userMembershipSchema }) },
      },
    },
    async (request) => ({ membership: await userMemberships.remove(request.actor, request.params.workspaceId, request.params.membershipId) }),
  );
}

function identityMembershipRoutes(app: ZodApp, { identityMemberships }: Services): void {
  const path = '/api/v2/workspace/:projectId/identity-memberships/:identityId';
  app.post(
    path,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Add an identity to a project',
          description: `Makes a machine identity of the organization a member of a project, with \`role\` or \`roles\` (\`no-access\` when neither is given). ${escalation}`,
          permission: projectPermission('create', 'identity'),
          effects: changes('Creates the membership.', 'create-identity-project-membership'),
          errors: [400],
        }),
        params: identityParams,
        body: z
          .object({
            role: optional(required().toLowerCase()).describe('One permanent role (the older form of `roles`).'),
            roles: z.array(roleAssignmentSchema).min(1).optional().describe('Its roles, permanent and temporary; at least one permanent.'),
          })
          .refine((body) => !body.roles || body.roles.some((role) => !role.isTemporary), { message: 'At least one long lived role is required', path: ['roles'] }),
        response: { 200: z.object({ identityMembership: identityMembershipSchema }) },
      },
    },
    async (request) => {
      const roles = request.body.roles ?? [{ role: request.body.role ?? 'no-access', isTemporary: false as const }];
      return { identityMembership: await identityMemberships.add(request.actor, request.params.projectId, request.params.identityId, roles) };
    },
  );

  app.patch(
    path,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Change an identity's project roles",
          description: `Replaces a machine identity's roles in a project, permanent and temporary. ${escalation}`,
          permission: projectPermission('edit', 'identity'),
          effects: changes('Replaces the roles.', 'update-identity-project-membership'),
        }),
        params: identityParams,
        body: z.object({ roles: roleAssignmentsSchema }),
        response: rolesResponse,
      },
    },
    async (request) => ({
      roles: await identityMemberships.updateRoles(request.actor, request.params.projectId, request.params.identityId, request.body.roles),
    }),
  );

  app.delete(
    path,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Remove an identity from a project',
          description: `Ends a machine identity's membership of a project with its roles and additional privileges there. ${escalation}`,
          permission: projectPermission('delete', 'identity'),
          effects: changes('Deletes the membership.', 'delete-identity-project-membership'),
        }),
        params: identityParams,
        response: { 200: z.object({ identityMembership: identityMembershipSchema }) },
      },
    },
    async (request) => ({ identityMembership: await identityMemberships.remove(request.actor, request.params.projectId, request.params.identityId) }),
  );

  app.get(
    path,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Get an identity's project membership",
          description: "A machine identity's membership of a project, with its roles.",
          permission: projectPermission('read', 'identity'),
          effects: reads(),
        }),
        params: identityParams,
        response: { 200: z.object({ identityMembership: identityMembershipDetails }) },
      },
    },
    async (request) => ({ identityMembership: await identityMemberships.get(request.actor, request.params.projectId, request.params.identityId) }),
  );

  app.get(
    '/api/v2/workspace/:projectId/identity-memberships',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List project identities',
          description: 'The machine identities of a project with their roles.',
          permission: projectPermission('read', 'identity'),
          effects: reads(),
        }),
        params: z.object({ projectId }),
        response: { 200: z.object({ identityMemberships: z.array(identityMembershipDetails) }) },
      },
    },
    async (request) => ({ identityMemberships: await identityMemberships.list(request.actor, request.params.projectId) }),
  );
}
