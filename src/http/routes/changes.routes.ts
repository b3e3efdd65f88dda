import { z } from 'zod';
import { MAX_CHANGE_STREAMS_PER_CALLER } from '../../events/change-stream.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { requestOrigin } from '../authenticate.ts';
import { id, optional, optionalInteger } from '../../validation/input.ts';
import { streamEvents } from '../sse.ts';
import { describeRoute, reads } from '../docs/operation-doc.ts';
import type { EventStreamSettings } from './events.routes.ts';

const tags = ['Events'];
const MAX_REVISION = Number.MAX_SAFE_INTEGER;

const exampleStream = [
  'id: 41\nevent: ready\ndata: {"revision":41}\n',
  'id: 42\nevent: change\ndata: {"revision":42,"kind":"secret","projectId":"6a4f1c2e-2b7d-4c1a-9f3e-5d8b7a6c4e21","environmentId":"0c9e8d7f-1a2b-4c3d-8e5f-6a7b8c9d0e1f","environment":"dev","secretPath":"/app","time":"2026-03-02T09:30:00.000Z"}\n',
  'id: 57\nevent: ping\ndata: {"revision":57}\n\n',
].join('\n');

const description = `A stream of server-sent events (\`text/event-stream\`): every change-feed revision the caller may read, in
revision order, each once. A change is a write that can alter what a place resolves to (a secret, folder, import,
environment, tag, integration, namespace grant or project deletion); the event names the place, never a key or a value.

Events (each \`id\` is a revision; a client resumes after the last one it received):
- \`ready\` first, \`data: {"revision": R}\`: the stream delivers every change after R.
- \`change\`, \`data: {revision, kind, projectId, environmentId, environment, secretPath, time}\`; \`environment\`,
  \`environmentId\` and \`secretPath\` are null for a change of the whole project (\`project-deleted\`, \`access\`, \`tags\`).
- \`ping\` every few seconds, \`data: {"revision": R}\`: nothing the caller may read happened up to R.
- \`reset\` instead of \`ready\` when the revision to resume after is not in this server's change log (a database
  restored from a backup, another installation): \`data: {revision, reason: "unknown-revision", message}\`; list again,
  then follow from R.
- \`error\`, \`data: {message}\`, then the end: the caller's token or access ended.

To resume after a disconnect, send the last \`id\` received as the \`Last-Event-ID\` header (browsers' EventSource
does) or as \`since\`; \`Last-Event-ID\` wins when both are given. Nothing is missed and nothing repeated. Which
projects the caller sees follows its project permissions (environment and secret path too); a change in access made
through another replica shows within a minute. A client that stops reading is dropped after a minute. For example:

    curl -N -H "Authorization: Bearer $TOKEN" "$API/api/v1/changes/stream?since=41"`;

export function changeRoutes(app: ZodApp, { changeStreams, auth }: Services, settings: EventStreamSettings): void {
  app.get(
    '/api/v1/changes/stream',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Follow the changes (server-sent events)',
          description,
          permission: `Any authenticated user or machine identity. It receives the changes of the projects where it may \`read\` \`secrets\` (at the change's environment and secret path), and may hold ${MAX_CHANGE_STREAMS_PER_CALLER} streams at once (429 beyond).`,
          effects: reads(),
          errors: [429],
        }),
        produces: ['text/event-stream'],
        querystring: z.object({
          since: optionalInteger(0, MAX_REVISION).describe('Deliver the changes after this revision (the last event id the client had); absent: from now on.'),
          projectId: optional(id()).describe("Only this project's changes (403 when the caller may read nothing in it)."),
        }),
        headers: z.object({
          'last-event-id': optionalInteger(0, MAX_REVISION).describe('The last event id the client received: the stream resumes after it (wins over `since`).'),
        }),
        response: {
          200: z
            .string()
            .describe('The event stream (text/event-stream).')
            .meta({ examples: [exampleStream] }),
        },
      },
    },
    async (request, reply) => {
      const since = request.headers['last-event-id'] ?? request.query.since;
      const stream = await changeStreams.open(request.actor, { since, projectId: request.query.projectId });
      await streamEvents(request, reply, stream, {
        heartbeatMs: settings.heartbeatMs,
        stallTimeoutMs: settings.stallTimeoutMs,
        recheck: {
          everyMs: settings.recheckMs,
          run: async () => stream.refresh(await auth.authenticate(request.headers.authorization, requestOrigin(request))),
        },
      });
    },
  );
}
