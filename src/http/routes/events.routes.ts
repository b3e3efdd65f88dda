import { z } from 'zod';
import { HELD_REQUEST_LIMITS } from '../../actor/caller-quota.ts';
import { PROJECT_EVENT_NAMES } from '../../events/project-events.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { requestOrigin } from '../authenticate.ts';
import { id, optional, required, text } from '../../validation/input.ts';
import { asPathGlob, PATH_GLOB_RULES } from '../../patterns/pattern-schema.ts';
import { streamEvents } from '../sse.ts';
import { describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Events'];

export interface EventStreamSettings {
  heartbeatMs: number;
  /** How often an open stream re-checks the caller's token and permissions. */
  recheckMs: number;
  /** How long a client may read nothing of what waits for it before it is dropped. */
  stallTimeoutMs: number;
}

const registration = z
  .object({
    event: z.enum(PROJECT_EVENT_NAMES).describe('The event to receive.'),
    conditions: z
      .object({
        environmentSlug: required().describe('The environment slug.'),
        secretPath: asPathGlob(optional(text(4096))).describe(`A secret-path glob; \`/\` (the root folder only) when absent, \`/**\` for everything. ${PATH_GLOB_RULES}`),
      })
      .optional()
      .describe('Narrows the event to an environment and secret paths.'),
  })
  .describe('One event to receive.');

const exampleStream =
  'id: 42\nevent: secret-manager\ndata: {"type":"secret-manager","projectType":"secret-manager","source":"coffer","time":"2026-03-02T09:30:00.000Z","data":{"event":"secret:update","eventType":"secret:update","payload":[{"environment":"dev","secretPath":"/"}]}}\n\nevent: ping\ndata: \n\n';

const description = `A stream of server-sent events (text/event-stream) for changes in the project that the caller may read.
Each change arrives as \`id: <revision>\`, \`event: secret-manager\` and \`data\` holding
\`{type, projectType: "secret-manager", source, time, data: {event, eventType, payload: [{environment, secretPath}]}}\`;
\`event: ping\` every few seconds. \`conditions\` narrow an event to an environment and a secret-path glob
("/" by default: the root folder only; "/**" for everything). Secret changes arrive as the secret event the
subscriber registered (secret:update when it registered several); folder, import and environment changes as
secret:import-mutation. The stream ends with an \`error\` event when the caller's token or access ends.`;

export function eventRoutes(app: ZodApp, { projectEvents, auth, accessWatch }: Services, settings: EventStreamSettings): void {
  app.post(
    '/api/v1/events/subscribe/project-events',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Subscribe to a project's changes",
          description,
          permission: `${projectPermission('read', 'secrets', 'path')} Each change is sent only where the caller may read; a caller may hold ${HELD_REQUEST_LIMITS.projectEventStreams.perCaller} streams across all projects, its organization ${HELD_REQUEST_LIMITS.projectEventStreams.perOrganization} (429 \`RateLimitExceeded\` beyond, before anything is opened); a stream ends, and frees its place, when its client disconnects.`,
          effects: reads(),
          errors: [429],
        }),
        produces: ['text/event-stream'],
        body: z.object({
          projectId: id().describe("The project's id."),
          register: z.array(registration).min(1).max(10).describe('The events to receive, 1 to 10.'),
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
      const stream = await projectEvents.subscribe(request.actor, request.body.projectId, request.body.register);
      await streamEvents(request, reply, stream, {
        heartbeatMs: settings.heartbeatMs,
        stallTimeoutMs: settings.stallTimeoutMs,
        recheck: {
          everyMs: settings.recheckMs,
          run: async () => stream.refresh(await auth.authenticate(request.headers.authorization, requestOrigin(request))),
          wakeOn: (listener) => accessWatch.subscribe(listener, request.accessSeen),
        },
      });
    },
  );
}
