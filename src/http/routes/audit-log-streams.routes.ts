import { z } from 'zod';
import type { Services } from '../../app/container.ts';
import { auditLogStreamSchema } from '../../audit-streams/audit-stream-schema.ts';
import { MAX_STREAM_HEADERS } from '../../audit-streams/audit-stream-service.ts';
import { changes, describeRoute, orgPermission, reads } from '../docs/operation-doc.ts';
import type { ZodApp } from '../zod-app.ts';
import { id, optional, required, text, url } from '../../validation/input.ts';

const tags = ['Audit log streams'];
const base = '/api/v1/audit-log-streams';
const streamParams = z.object({ id: id().describe("The stream's id.") });
const streamResponse = { 200: z.object({ auditLogStream: auditLogStreamSchema }) };
const headers = z
  .array(z.object({ key: required(64).describe('A header name (an HTTP token).'), value: text(4096).describe('Its value: stored sealed, never answered.') }))
  .max(MAX_STREAM_HEADERS)
  .describe(`Headers sent with every delivery (at most ${MAX_STREAM_HEADERS}), e.g. the receiver's own authorization.`);

/** Audit log streams, after Infisical's `/api/v1/audit-log-streams`: organization admins only. */
export function auditLogStreamRoutes(app: ZodApp, services: Services): void {
  auditLogStreamWriteRoutes(app, services);
  auditLogStreamReadRoutes(app, services);
}

function auditLogStreamWriteRoutes(app: ZodApp, { auditLogStreams }: Services): void {
  app.post(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create an audit log stream',
          description:
            "Delivers every audit entry of the caller's organization committed from now on to `url`, as signed JSON lines (`x-coffer-signature`, see the README), at least once and in order, resuming after restarts and receiver outages. The signing key is answered once, here.",
          permission: orgPermission('create', 'audit-log-streams'),
          effects: changes('Creates the stream.', 'create-audit-log-stream'),
          errors: [400],
        }),
        body: z.object({
          url: url().describe('Where deliveries are POSTed (http or https, no credentials in it).'),
          headers: optional(headers),
          signingKey: optional(required(256)).describe('The HMAC key deliveries are signed with; generated (32 random bytes, hex) when absent.'),
        }),
        response: { 200: z.object({ auditLogStream: auditLogStreamSchema, signingKey: z.string() }) },
      },
    },
    async (request) => auditLogStreams.create(request.actor, request.body),
  );

  app.patch(
    `${base}/:id`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Update an audit log stream',
          description:
            'Changes the receiver URL or replaces the headers; delivery resumes at once from where the stream stopped. A new `url` of a stream that has headers needs `headers` in the same request (`[]` for none), or it is 400 `HeadersRequiredForNewUrl`: the stored header values are credentials for the old receiver and are never sent to a new one unasked.',
          permission: orgPermission('edit', 'audit-log-streams'),
          effects: changes('Updates the stream.', 'update-audit-log-stream'),
          errors: [400],
        }),
        params: streamParams,
        body: z.object({ url: optional(url()).describe('The new receiver URL.'), headers: optional(headers).describe('The new headers (replacing all of them).') }),
        response: streamResponse,
      },
    },
    async (request) => ({ auditLogStream: await auditLogStreams.update(request.actor, request.params.id, request.body) }),
  );

  app.delete(
    `${base}/:id`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete an audit log stream',
          description: 'Stops the stream; what it had not delivered is not delivered.',
          permission: orgPermission('delete', 'audit-log-streams'),
          effects: changes('Deletes the stream.', 'delete-audit-log-stream'),
        }),
        params: streamParams,
        response: streamResponse,
      },
    },
    async (request) => ({ auditLogStream: await auditLogStreams.delete(request.actor, request.params.id) }),
  );
}

function auditLogStreamReadRoutes(app: ZodApp, { auditLogStreams }: Services): void {
  app.get(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List audit log streams',
          description: "The organization's streams with their delivery status (never their signing keys or header values).",
          permission: orgPermission('read', 'audit-log-streams'),
          effects: reads(),
        }),
        response: { 200: z.object({ auditLogStreams: z.array(auditLogStreamSchema) }) },
      },
    },
    async (request) => ({ auditLogStreams: await auditLogStreams.list(request.actor) }),
  );

  app.get(
    `${base}/:id`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get an audit log stream',
          description: 'One stream and its delivery status: the newest entry acknowledged, consecutive failures and the last error.',
          permission: orgPermission('read', 'audit-log-streams'),
          effects: reads(),
        }),
        params: streamParams,
        response: streamResponse,
      },
    },
    async (request) => ({ auditLogStream: await auditLogStreams.get(request.actor, request.params.id) }),
  );
}
