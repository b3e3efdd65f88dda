import { z } from 'zod';
import {
  createPermanentPrivilegeBody,
  createTemporaryPrivilegeBody,
  privilegeSchema,
  privilegeTargetSchema,
  rulesOf,
  updatePrivilegeBody,
} from '../../privileges/privilege-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { id } from '../../validation/input.ts';

const tags = ['Additional privileges'];
const base = '/api/v1/additional-privilege/identity';
const privilegeResponse = { 200: z.object({ privilege: privilegeSchema }) };

export function privilegeRoutes(app: ZodApp, { privileges }: Services): void {
  app.post(
    `${base}/permanent`,
    { schema: { tags, summary: 'Grant an identity a permanent additional privilege', body: createPermanentPrivilegeBody, response: privilegeResponse } },
    async (request) => {
      const { identityId, projectSlug, slug } = request.body;
      return { privilege: await privileges.create(request.actor, { identityId, projectSlug }, { slug, rules: rulesOf(request.body)! }) };
    },
  );

  app.post(
    `${base}/temporary`,
    { schema: { tags, summary: 'Grant an identity a temporary additional privilege', body: createTemporaryPrivilegeBody, response: privilegeResponse } },
    async (request) => {
      const { identityId, projectSlug, slug, ...temporary } = request.body;
      return { privilege: await privileges.create(request.actor, { identityId, projectSlug }, { ...temporary, slug, isTemporary: true, rules: rulesOf(request.body)! }) };
    },
  );

  app.patch(
    base,
    { schema: { tags, summary: 'Update an additional privilege', body: updatePrivilegeBody, response: privilegeResponse } },
    async (request) => {
      const { privilegeDetails, ...target } = request.body;
      const { permissions: _permissions, privilegePermission: _shorthand, ...rest } = privilegeDetails;
      return { privilege: await privileges.update(request.actor, target, { ...rest, rules: rulesOf(privilegeDetails) }) };
    },
  );

  app.delete(
    base,
    { schema: { tags, summary: 'Delete an additional privilege', body: privilegeTargetSchema, response: privilegeResponse } },
    async (request) => ({ privilege: await privileges.delete(request.actor, request.body) }),
  );

  app.get(
    `${base}/:privilegeSlug`,
    {
      schema: {
        tags,
        summary: "Get an identity's additional privilege by slug",
        params: z.object({ privilegeSlug: id() }),
        querystring: z.object({ identityId: id(), projectSlug: id() }),
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
        summary: "List an identity's additional privileges in a project",
        querystring: z.object({ identityId: id(), projectSlug: id() }),
        response: { 200: z.object({ privileges: z.array(privilegeSchema) }) },
      },
    },
    async (request) => ({ privileges: await privileges.list(request.actor, request.query) }),
  );
}
