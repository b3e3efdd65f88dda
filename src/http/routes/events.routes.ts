import { z } from 'zod';
import { PROJECT_EVENT_NAMES } from '../../events/project-events.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { requestOrigin } from '../authenticate.ts';
import { id, optional, required, text } from '../../validation/input.ts';
import { streamEvents } from '../sse.ts';

const tags = ['Events'];

export interface EventStreamSettings {
  heartbeatMs: number;
  /** How often an open stream re-checks the caller's token and permissions. */
  recheckMs: number;
}

const registration = z.object({
  event: z.enum(PROJECT_EVENT_NAMES),
  conditions: z.object({ environmentSlug: required(), secretPath: optional(text(4096)) }).optional(),
});

const description = `Server-sent events (text/event-stream) for changes in the project that the caller may read.
Each change arrives as \`id: <revision>\`, \`event: secret-manager\` and \`data\` holding
\`{type, projectType: "secret-manager", source, time, data: {event, eventType, payload: [{environment, secretPath}]}}\`;
\`event: ping\` every few seconds. \`conditions\` narrow an event to an environment and a secret-path glob
("/" by default: the root folder only; "/**" for everything). Secret changes arrive as the secret event the
subscriber registered (secret:update when it registered several); folder, import and environment changes as
secret:import-mutation. The stream ends with an \`error\` event when the caller's token or access ends.`;

export function eventRoutes(app: ZodApp, { projectEvents, auth }: Services, settings: EventStreamSettings): void {
  app.post(
    '/api/v1/events/subscribe/project-events',
    {
      schema: {
        tags,
        summary: "Subscribe to a project's changes (server-sent events)",
        description,
        body: z.object({ projectId: id(), register: z.array(registration).min(1).max(10) }),
        response: { 200: z.string().describe('text/event-stream') },
      },
    },
    async (request, reply) => {
      const stream = await projectEvents.subscribe(request.actor, request.body.projectId, request.body.register);
      await streamEvents(request, reply, stream, {
        heartbeatMs: settings.heartbeatMs,
        recheck: {
          everyMs: settings.recheckMs,
          run: async () => stream.refresh(await auth.authenticate(request.headers.authorization, requestOrigin(request))),
        },
      });
    },
  );
}
