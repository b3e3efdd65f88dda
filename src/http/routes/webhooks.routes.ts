import { z } from 'zod';
import type { Services } from '../../app/container.ts';
import { deliverySchema, webhookSchema } from '../../webhooks/webhook-schema.ts';
import { WEBHOOK_TESTS_AT_ONCE } from '../../webhooks/webhook-service.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';
import type { ZodApp } from '../zod-app.ts';
import { bigInteger, environmentSlug, id, optional, optionalInteger, path, required, url } from '../../validation/input.ts';

const tags = ['Webhooks'];
const webhookParams = z.object({ webhookId: id().describe("The webhook's id.") });
const webhookResponse = { 200: z.object({ message: z.string(), webhook: webhookSchema }) };

export function webhookRoutes(app: ZodApp, services: Services): void {
  webhookWriteRoutes(app, services);
  webhookReadRoutes(app, services);
}

function webhookWriteRoutes(app: ZodApp, { webhooks }: Services): void {
  app.post(
    '/api/v1/webhooks',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create a webhook',
          description:
            'Delivers every change committed from now on to places of the environment matching `secretPath` (a glob) to `webhookUrl`, signed (`x-coffer-signature`, see the README). The signing key is answered once, here.',
          permission: projectPermission('create', 'webhooks'),
          effects: changes('Creates the webhook.', 'create-webhook'),
          errors: [400],
        }),
        body: z.object({
          workspaceId: id().describe("The project's id."),
          environment: environmentSlug(),
          webhookUrl: url().describe('Where deliveries are POSTed (http or https, no credentials in it).'),
          webhookSecretKey: optional(required(256)).describe('The HMAC key deliveries are signed with; generated (32 random bytes, hex) when absent.'),
          secretPath: path(),
          type: z.literal('general').optional().describe('Ignored: every webhook is `general`.'),
        }),
        response: { 200: z.object({ message: z.string(), webhook: webhookSchema, webhookSecretKey: z.string() }) },
      },
    },
    async (request) => {
      const { workspaceId, ...input } = request.body;
      const created = await webhooks.create(request.actor, workspaceId, input);
      return { message: 'Successfully created webhook', webhook: created.webhook, webhookSecretKey: created.secretKey };
    },
  );

  app.patch(
    '/api/v1/webhooks/:webhookId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Enable or disable a webhook',
          description: 'A disabled webhook delivers nothing; enabled again, it resumes from the newest revision it delivered, so it misses nothing.',
          permission: projectPermission('edit', 'webhooks'),
          effects: changes('Updates the webhook.', 'update-webhook-status'),
        }),
        params: webhookParams,
        body: z.object({ isDisabled: z.boolean().describe('`true` stops deliveries; `false` resumes them from the cursor.') }),
        response: webhookResponse,
      },
    },
    async (request) => ({
      message: 'Successfully updated webhook',
      webhook: await webhooks.setDisabled(request.actor, request.params.webhookId, request.body.isDisabled),
    }),
  );

  app.post(
    '/api/v1/webhooks/:webhookId/replay',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Replay a webhook from a revision',
          description: 'Delivers again, in order, every matching change committed after `fromRevision` (from the change feed), and enables the webhook.',
          permission: projectPermission('edit', 'webhooks'),
          effects: changes('Moves the webhook back to the revision.', 'update-webhook-status'),
          errors: [400],
        }),
        params: webhookParams,
        body: z.object({ fromRevision: bigInteger(0, Number.MAX_SAFE_INTEGER).describe('Changes after this revision are delivered again.') }),
        response: webhookResponse,
      },
    },
    async (request) => ({
      message: 'Successfully moved webhook',
      webhook: await webhooks.replay(request.actor, request.params.webhookId, request.body.fromRevision),
    }),
  );

  app.post(
    '/api/v1/webhooks/:webhookId/test',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Send a webhook a test delivery',
          description: `POSTs \`{"event":"test","project":{…},"timestamp":…}\` to the receiver now, signed like every delivery, enabled or not, and answers what the receiver said: its status and a short error (never its body). A test moves no cursor, is not in the delivery log and never counts toward disabling the webhook. A caller may have ${WEBHOOK_TESTS_AT_ONCE.perCaller} tests under way at once, its organization ${WEBHOOK_TESTS_AT_ONCE.perOrganization} (429 beyond).`,
          permission: projectPermission('edit', 'webhooks'),
          effects: reads('test-webhook'),
          errors: [429],
        }),
        params: webhookParams,
        response: {
          200: z.object({
            message: z.string(),
            webhook: webhookSchema,
            result: z.object({
              ok: z.boolean().describe('The receiver answered 2xx.'),
              responseStatus: z.number().nullable().describe("The receiver's HTTP status; null when it was not reached."),
              error: z
                .string()
                .nullable()
                .describe('Why it failed: `HTTP <status>`, or a code such as `ECONNREFUSED`, `TIMEOUT` (no status within the 10 s deadline), `PRIVATE_ADDRESS`.'),
              durationMs: z.number().describe('How long the receiver took.'),
            }),
          }),
        },
      },
    },
    async (request) => {
      const { webhook, result } = await webhooks.test(request.actor, request.params.webhookId);
      return { message: result.ok ? 'The receiver accepted the test delivery' : 'The receiver did not accept the test delivery', webhook, result };
    },
  );

  app.delete(
    '/api/v1/webhooks/:webhookId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete a webhook',
          description: 'Deletes the webhook and its delivery log.',
          permission: projectPermission('delete', 'webhooks'),
          effects: changes('Deletes the webhook.', 'delete-webhook'),
        }),
        params: webhookParams,
        response: webhookResponse,
      },
    },
    async (request) => ({ message: 'Successfully deleted webhook', webhook: await webhooks.delete(request.actor, request.params.webhookId) }),
  );
}

function webhookReadRoutes(app: ZodApp, { webhooks }: Services): void {
  app.get(
    '/api/v1/webhooks',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List webhooks',
          description: "The project's webhooks (never their signing keys).",
          permission: projectPermission('read', 'webhooks'),
          effects: reads(),
        }),
        querystring: z.object({ workspaceId: id().describe("The project's id."), environment: optional(environmentSlug()).describe('Only this environment.') }),
        response: { 200: z.object({ webhooks: z.array(webhookSchema) }) },
      },
    },
    async (request) => ({ webhooks: await webhooks.list(request.actor, request.query.workspaceId, { environment: request.query.environment }) }),
  );

  app.get(
    '/api/v1/webhooks/:webhookId/deliveries',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "A webhook's delivery log",
          description: 'Its newest delivery attempts: revision, attempt, outcome, the receiver status and a short error (never the receiver body).',
          permission: projectPermission('read', 'webhooks'),
          effects: reads(),
        }),
        params: webhookParams,
        querystring: z.object({ limit: optionalInteger(1, 500).describe('At most this many (default 100).') }),
        response: { 200: z.object({ deliveries: z.array(deliverySchema) }) },
      },
    },
    async (request) => ({ deliveries: await webhooks.deliveries(request.actor, request.params.webhookId, request.query.limit ?? 100) }),
  );
}
