import { z } from 'zod';
import { orgRoleSchema } from '../../identities/identity-schema.ts';
import type { Services } from '../../services/container.ts';
import { orgMembershipSchema } from '../../users/user-schema.ts';
import type { ZodApp } from '../app.ts';
import { id } from '../../validation/input.ts';

const tags = ['Users'];

export function userRoutes(app: ZodApp, { invites, orgMemberships }: Services): void {
  app.post(
    '/api/v1/invite-org/signup',
    {
      schema: {
        tags,
        summary: 'Invite users to an organization; each invite token is returned once',
        body: z.object({
          inviteeEmails: z.array(z.email()).min(1).max(100),
          organizationId: id(),
          organizationRoleSlug: orgRoleSchema.default('member'),
        }),
        response: {
          200: z.object({
            message: z.string(),
            invites: z.array(z.object({ email: z.string(), membershipId: z.string(), inviteToken: z.string(), expiresAt: z.string() })),
          }),
        },
      },
    },
    async (request) => {
      const { organizationId, inviteeEmails, organizationRoleSlug } = request.body;
      const invited = await invites.invite(request.actor, { organizationId, emails: inviteeEmails, role: organizationRoleSlug });
      return { message: 'Users invited; send each of them their invite token', invites: invited };
    },
  );

  app.get(
    '/api/v2/organizations/:organizationId/memberships',
    {
      schema: {
        tags,
        summary: 'List the users of an organization (invited and accepted)',
        params: z.object({ organizationId: id() }),
        response: { 200: z.object({ users: z.array(orgMembershipSchema) }) },
      },
    },
    async (request) => ({ users: await orgMemberships.listUsers(request.actor, request.params.organizationId) }),
  );
}
