import { z } from 'zod';
import {
  approvalPolicySchema,
  approvalRequestSchema,
  detailedApprovalRequestSchema,
  ENFORCEMENT_LEVELS,
  listedApprovalRequestSchema,
} from '../../approvals/approval-schema.ts';
import type { Services } from '../../app/container.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';
import type { ZodApp } from '../zod-app.ts';
import { environmentSlug, id, integer, name, optional, optionalInteger, path, text } from '../../validation/input.ts';

const tags = ['Change control'];
const approver = z.object({
  type: z.literal('user').default('user').describe('Approvers are users.'),
  id: id().describe("The approver's user id (a member of the project)."),
});
const policyBody = {
  name: name().describe('A name for the policy, unique in the project.'),
  secretPath: path().describe('The secret-path glob the policy protects (`/`, `/app/**`).'),
  approvers: z.array(approver).min(1).max(100).describe('The users who may approve its requests.'),
  approvals: integer(1, 100).describe('How many approvals a request needs (at most the number of approvers).'),
  enforcementLevel: z.enum(ENFORCEMENT_LEVELS).describe('`hard` (default) or `soft`.'),
};
const policyParams = z.object({ policyId: id().describe("The policy's id.") });
const requestParams = z.object({ requestId: id().describe("The request's id.") });
const policyResponse = { 200: z.object({ approval: approvalPolicySchema }) };
const requestResponse = { 200: z.object({ approval: approvalRequestSchema }) };
const participant = 'a user who is the committer of the request or an approver of its policy, with `secret-approval: read` in the project';

export function approvalRoutes(app: ZodApp, services: Services): void {
  policyRoutes(app, services);
  requestRoutes(app, services);
  requestWriteRoutes(app, services);
}

function policyRoutes(app: ZodApp, { approvalPolicies }: Services): void {
  app.post(
    '/api/v1/secret-approvals',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create an approval policy',
          description:
            "Protects the places of an environment that match `secretPath`: a user's write there becomes a change request that `approvals` of the `approvers` must approve before it is merged.",
          permission: projectPermission('create', 'secret-approval'),
          effects: changes('Creates the policy.', 'create-secret-approval-policy'),
          errors: [400],
        }),
        body: z.object({
          workspaceId: id().describe("The project's id."),
          environment: environmentSlug(),
          ...policyBody,
          enforcementLevel: policyBody.enforcementLevel.default('hard'),
        }),
        response: policyResponse,
      },
    },
    async (request) => {
      const { workspaceId, ...input } = request.body;
      return { approval: await approvalPolicies.create(request.actor, workspaceId, input) };
    },
  );

  app.get(
    '/api/v1/secret-approvals',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List approval policies',
          description: "The project's approval policies, oldest first.",
          permission: projectPermission('read', 'secret-approval'),
          effects: reads(),
        }),
        querystring: z.object({ workspaceId: id().describe("The project's id.") }),
        response: { 200: z.object({ approvals: z.array(approvalPolicySchema) }) },
      },
    },
    async (request) => ({ approvals: await approvalPolicies.list(request.actor, request.query.workspaceId) }),
  );

  app.patch(
    '/api/v1/secret-approvals/:policyId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Update an approval policy',
          description: 'Changes a policy; fields left out keep their value. Open requests are judged by the policy as it is when they are merged.',
          permission: projectPermission('edit', 'secret-approval'),
          effects: changes('Updates the policy.', 'update-secret-approval-policy'),
          errors: [400],
        }),
        params: policyParams,
        body: z.object({
          name: policyBody.name.optional(),
          secretPath: policyBody.secretPath.optional(),
          approvers: policyBody.approvers.optional(),
          approvals: policyBody.approvals.optional(),
          enforcementLevel: policyBody.enforcementLevel.optional(),
        }),
        response: policyResponse,
      },
    },
    async (request) => ({ approval: await approvalPolicies.update(request.actor, request.params.policyId, request.body) }),
  );

  app.delete(
    '/api/v1/secret-approvals/:policyId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete an approval policy',
          description: 'Deletes a policy and its requests, merged or not (what was merged stays).',
          permission: projectPermission('delete', 'secret-approval'),
          effects: changes('Deletes the policy and its requests.', 'delete-secret-approval-policy'),
        }),
        params: policyParams,
        response: policyResponse,
      },
    },
    async (request) => ({ approval: await approvalPolicies.delete(request.actor, request.params.policyId) }),
  );
}

function requestRoutes(app: ZodApp, { approvalRequests }: Services): void {
  app.get(
    '/api/v1/secret-approval-requests',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List change requests',
          description: "The project's change requests, newest first: what each changes (keys, never values), its policy and its reviews.",
          permission: projectPermission('read', 'secret-approval'),
          effects: reads(),
        }),
        querystring: z.object({
          workspaceId: id().describe("The project's id."),
          environment: optional(environmentSlug()).describe('Only requests in this environment.'),
          status: z.enum(['open', 'close']).optional().describe('Only open or closed requests.'),
          committer: optional(id()).describe('Only requests made by this user.'),
          limit: optionalInteger(1, 100).describe('At most this many (default 20).'),
          offset: optionalInteger(0, 1_000_000).describe('Skip this many (default 0).'),
        }),
        response: { 200: z.object({ approvals: z.array(listedApprovalRequestSchema) }) },
      },
    },
    async (request) => {
      const { workspaceId, status, limit, offset, ...filter } = request.query;
      const approvals = await approvalRequests.list(request.actor, workspaceId, {
        ...filter,
        status: status === undefined ? undefined : status === 'open' ? 'open' : 'closed',
        limit: limit ?? 20,
        offset: offset ?? 0,
      });
      return { approvals };
    },
  );

  app.get(
    '/api/v1/secret-approval-requests/count',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Count change requests',
          description: "How many of the project's requests are open and closed.",
          permission: projectPermission('read', 'secret-approval'),
          effects: reads(),
        }),
        querystring: z.object({ workspaceId: id().describe("The project's id.") }),
        response: { 200: z.object({ approvals: z.object({ open: z.number().int(), closed: z.number().int() }) }) },
      },
    },
    async (request) => ({ approvals: await approvalRequests.count(request.actor, request.query.workspaceId) }),
  );

  app.get(
    '/api/v1/secret-approval-requests/:requestId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a change request with its diff',
          description: 'A request with each proposed change next to the secret as it is now.',
          permission: `${projectPermission('read', 'secret-approval')}, and \`secrets: read\` at the request's environment and path (it shows values)`,
          effects: reads(),
        }),
        params: requestParams,
        response: { 200: z.object({ approval: detailedApprovalRequestSchema }) },
      },
    },
    async (request) => ({ approval: await approvalRequests.get(request.actor, request.params.requestId) }),
  );
}

function requestWriteRoutes(app: ZodApp, { approvalRequests }: Services): void {
  app.post(
    '/api/v1/secret-approval-requests/:requestId/review',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Review a change request',
          description:
            "An approver's approval or rejection of an open request; reviewing again replaces the earlier review. The committer cannot review their own request.",
          permission: 'a user who is an approver of the policy, with `secret-approval: read` in the project',
          effects: changes('Records the review.', 'review-secret-approval-request'),
          errors: [400],
        }),
        params: requestParams,
        body: z.object({ status: z.enum(['approved', 'rejected']).describe('The review.') }),
        response: {
          200: z.object({ review: z.object({ id: z.string(), requestId: z.string(), reviewerUserId: z.string(), status: z.enum(['approved', 'rejected']) }) }),
        },
      },
    },
    async (request) => ({ review: await approvalRequests.review(request.actor, request.params.requestId, request.body.status) }),
  );

  app.post(
    '/api/v1/secret-approval-requests/:requestId/status',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Close or reopen a change request',
          description: 'Closes an open request or reopens a closed one; a merged request stays closed.',
          permission: participant,
          effects: changes('Changes the status.', 'secret-approval-closed` or `secret-approval-reopened'),
          errors: [400],
        }),
        params: requestParams,
        body: z.object({ status: z.enum(['open', 'close']).describe('`close` an open request or `open` a closed one.') }),
        response: requestResponse,
      },
    },
    async (request) => ({ approval: await approvalRequests.setStatus(request.actor, request.params.requestId, request.body.status) }),
  );

  app.post(
    '/api/v1/secret-approval-requests/:requestId/merge',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Merge a change request',
          description:
            'Applies every change of the request in one transaction, as one change-feed entry, once enough approvers approved and none rejected. A secret changed since the request was made is a conflict: 409, nothing written. Under a `soft` policy an approver may merge early with a `bypassReason`, which is audited.',
          permission: `${participant}, and \`secrets: edit\` at the request's place`,
          effects: changes('Writes the secrets (each audited as a secret write) and closes the request.', 'secret-approval-merged'),
          errors: [400, 409],
        }),
        params: requestParams,
        body: z.object({ bypassReason: optional(text(1024)).describe('Why a soft policy is bypassed (approvers only; audited).') }).default({}),
        response: requestResponse,
      },
    },
    async (request) => ({ approval: await approvalRequests.merge(request.actor, request.params.requestId, request.body) }),
  );
}
