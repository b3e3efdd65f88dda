import { z } from 'zod';
import {
  createPermanentPrivilegeBody,
  createTemporaryPrivilegeBody,
  privilegeSchema,
  privilegeTargetSchema,
  rulesOf,
  updatePrivilegeBody,
} from '../../privileges/privilege-schema.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { id } from '../../validation/input.ts';
import { changes, describeRoute, type OperationDoc, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Additional privileges'];
const base = '/api/v1/additional-privilege/identity';
const privilegeResponse = { 200: z.object({ privilege: privilegeSchema }) };
const target = z.object({
  identityId: id().describe("The identity's id."),
  projectSlug: id().describe("The project's slug."),
});
const escalation = 'Nobody grants rules beyond their own permissions, or changes an identity that holds more than they do (403 `PrivilegeEscalation`).';
const grant = (how: 'permanent' | 'temporary'): OperationDoc => ({
  summary: `Grant a ${how} privilege`,
  description: `Adds rules to what one machine identity may do in one project, on top of its roles${how === 'temporary' ? ', for `temporaryRange` from `temporaryAccessStartTime`' : ''}. ${escalation}`,
  permission: projectPermission('edit', 'identity'),
  effects: changes('Creates the privilege.', 'create-identity-additional-privilege'),
  errors: [400],
});

export function privilegeRoutes(app: ZodApp, { privileges }: Services): void {
  app.post(
    `${base}/permanent`,
    { schema: { tags, ...describeRoute(grant('permanent')), body: createPermanentPrivilegeBody, response: privilegeResponse } },
    async (request) => {
      const { identityId, projectSlug, slug } = request.body;
      return { privilege: await privileges.create(request.actor, { identityId, projectSlug }, { slug, rules: rulesOf(request.body)! }) };
    },
  );

  app.post(
    `${base}/temporary`,
    { schema: { tags, ...describeRoute(grant('temporary')), body: createTemporaryPrivilegeBody, response: privilegeResponse } },
    async (request) => {
      const { identityId, projectSlug, slug, ...temporary } = request.body;
      return { privilege: await privileges.create(request.actor, { identityId, projectSlug }, { ...temporary, slug, isTemporary: true, rules: rulesOf(request.body)! }) };
    },
  );

  app.patch(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Update a privilege',
          description: `Changes an additional privilege's slug, rules or time limits; fields left out keep their value. ${escalation}`,
          permission: projectPermission('edit', 'identity'),
          effects: changes('Updates the privilege.', 'update-identity-additional-privilege'),
          errors: [400],
        }),
        body: updatePrivilegeBody,
        response: privilegeResponse,
      },
    },
    async (request) => {
      const { privilegeDetails, ...target } = request.body;
      const { permissions: _permissions, privilegePermission: _shorthand, ...rest } = privilegeDetails;
      return { privilege: await privileges.update(request.actor, target, { ...rest, rules: rulesOf(privilegeDetails) }) };
    },
  );

  app.delete(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete a privilege',
          description: `Removes an additional privilege from an identity. ${escalation}`,
          permission: projectPermission('edit', 'identity'),
          effects: changes('Deletes the privilege.', 'delete-identity-additional-privilege'),
        }),
        body: privilegeTargetSchema,
        response: privilegeResponse,
      },
    },
    async (request) => ({ privilege: await privileges.delete(request.actor, request.body) }),
  );

  app.get(
    `${base}/:privilegeSlug`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a privilege',
          description: "One of an identity's additional privileges in a project, by slug.",
          permission: projectPermission('edit', 'identity'),
          effects: reads(),
        }),
        params: z.object({ privilegeSlug: id().describe("The privilege's slug.") }),
        querystring: target,
        response: privilegeResponse,
      },
    },
    async (request) => ({ privilege: await privileges.get(request.actor, { ...request.query, privilegeSlug: request.params.privilegeSlug }) }),
  );

  app.get(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List privileges',
          description: "An identity's additional privileges in a project.",
          permission: projectPermission('read', 'identity'),
          effects: reads(),
        }),
        querystring: target,
        response: { 200: z.object({ privileges: z.array(privilegeSchema) }) },
      },
    },
    async (request) => ({ privileges: await privileges.list(request.actor, request.query) }),
  );
}
