import { z } from 'zod';
import {
  identityMembershipSchema,
  membershipRoleSchema,
  roleAssignmentSchema,
  roleAssignmentsSchema,
  userMembershipSchema,
} from '../../memberships/membership-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { id, optional, required } from '../../validation/input.ts';

const tags = ['Memberships'];
const userMembershipParams = z.object({ workspaceId: id(), membershipId: id() });
const identityParams = z.object({ projectId: id(), identityId: id() });
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
        summary: 'Add organization members to a project (role "member" unless roleSlugs say otherwise)',
        params: z.object({ projectId: id() }),
        body: z.object({
          emails: z.array(z.email()).default([]),
          usernames: z.array(required()).default([]),
          roleSlugs: z.array(required().toLowerCase()).min(1).optional(),
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
        summary: 'List the users of a project with their roles',
        params: z.object({ workspaceId: id() }),
        response: { 200: z.object({ memberships: z.array(userMembershipSchema.extend({ user: memberUser, roles: z.array(membershipRoleSchema) })) }) },
      },
    },
    async (request) => ({ memberships: await userMemberships.list(request.actor, request.params.workspaceId) }),
  );

  app.patch(
    '/api/v1/workspace/:workspaceId/memberships/:membershipId',
    {
      schema: { tags, summary: "Replace a user's project roles (permanent and temporary)", params: userMembershipParams, body: z.object({ roles: roleAssignmentsSchema }), response: rolesResponse },
    },
    async (request) => {
      const { workspaceId, membershipId } = request.params;
      return { roles: await userMemberships.updateRoles(request.actor, workspaceId, membershipId, request.body.roles) };
    },
  );

  app.delete(
    '/api/v1/workspace/:workspaceId/memberships/:membershipId',
    { schema: { tags, summary: 'Remove a user from a project', params: userMembershipParams, response: { 200: z.object({ membership: userMembershipSchema }) } } },
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
        summary: 'Add a machine identity to a project',
        params: identityParams,
        body: z.object({ role: optional(required().toLowerCase()), roles: z.array(roleAssignmentSchema).min(1).optional() }).refine(
          (body) => !body.roles || body.roles.some((role) => !role.isTemporary),
          { message: 'At least one long lived role is required', path: ['roles'] },
        ),
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
      schema: { tags, summary: "Replace an identity's project roles", params: identityParams, body: z.object({ roles: roleAssignmentsSchema }), response: rolesResponse },
    },
    async (request) => ({
      roles: await identityMemberships.updateRoles(request.actor, request.params.projectId, request.params.identityId, request.body.roles),
    }),
  );

  app.delete(
    path,
    { schema: { tags, summary: 'Remove an identity from a project', params: identityParams, response: { 200: z.object({ identityMembership: identityMembershipSchema }) } } },
    async (request) => ({ identityMembership: await identityMemberships.remove(request.actor, request.params.projectId, request.params.identityId) }),
  );

  app.get(
    path,
    { schema: { tags, summary: "An identity's project membership with its roles", params: identityParams, response: { 200: z.object({ identityMembership: identityMembershipDetails }) } } },
    async (request) => ({ identityMembership: await identityMemberships.get(request.actor, request.params.projectId, request.params.identityId) }),
  );

  app.get(
    '/api/v2/workspace/:projectId/identity-memberships',
    {
      schema: {
        tags,
        summary: 'List the identities of a project with their roles',
        params: z.object({ projectId: id() }),
        response: { 200: z.object({ identityMemberships: z.array(identityMembershipDetails) }) },
      },
    },
    async (request) => ({ identityMemberships: await identityMemberships.list(request.actor, request.params.projectId) }),
  );
}
