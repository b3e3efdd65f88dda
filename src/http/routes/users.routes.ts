import { z } from 'zod';
import { orgRoleSchema } from '../../identities/identity-schema.ts';
import type { Services } from '../../app/container.ts';
import { orgMembershipSchema } from '../../users/user-schema.ts';
import type { ZodApp } from '../zod-app.ts';
import { email, id } from '../../validation/input.ts';
import { changes, describeRoute, orgPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Users'];

export function userRoutes(app: ZodApp, { invites, orgMemberships }: Services): void {
  app.post(
    '/api/v1/invite-org/signup',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Invite users',
          description:
            "Invites up to 100 emails into an organization with an organization role (at most the caller's own). Coffer sends no email: the answer carries each invite token, once; hand it to the user, who accepts with `POST /api/v1/invite-org/accept`.",
          permission: orgPermission('create', 'member'),
          effects: changes('Creates the invited memberships.', 'invite-org-members'),
        }),
        body: z.object({
          inviteeEmails: z.array(email()).min(1).max(100).describe('The emails to invite, 1 to 100.'),
          organizationId: id().describe("The organization's id (the caller's)."),
          organizationRoleSlug: orgRoleSchema.default('member').describe('Their organization role: `admin`, `member` (default) or `no-access`.'),
        }),
        response: {
          200: z.object({
            message: z.string().describe('What was done.'),
            invites: z.array(
              z.object({
                email: z.string().describe('The invited email.'),
                membershipId: z.string().describe('The membership waiting for the user.'),
                inviteToken: z.string().describe('The one-time invite token: shown only here.'),
                expiresAt: z.string().describe('When the invite expires.'),
              }),
            ),
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
        ...describeRoute({
          summary: 'List organization users',
          description: 'The users of an organization, invited and accepted, with their roles.',
          permission: orgPermission('read', 'member'),
          effects: reads(),
        }),
        params: z.object({ organizationId: id().describe("The organization's id.") }),
        response: { 200: z.object({ users: z.array(orgMembershipSchema) }) },
      },
    },
    async (request) => ({ users: await orgMemberships.listUsers(request.actor, request.params.organizationId) }),
  );
}
