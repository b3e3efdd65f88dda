import { z } from 'zod';
import { HELD_REQUEST_LIMITS } from '../../actor/caller-quota.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { requestOrigin } from '../authenticate.ts';
import { parseDuration } from '../../validation/duration.ts';
import { digitsInteger, duration, id, optional, optionalInteger } from '../../validation/input.ts';
import { clientGone } from '../client-gone.ts';
import { watchAccess } from '../access-ended.ts';
import { streamEvents } from '../sse.ts';
import { describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';
import { REVISION_HEADER } from '../revision-header.ts';
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
environment, tag, integration, namespace grant or project deletion, or a secret rotation's phase); the event names the place, never a key or a value.

Events (each \`id\` is a revision; a client resumes after the last one it received):
- \`ready\` first, \`data: {"revision": R}\`: the stream delivers every change after R.
- \`change\`, \`data: {revision, kind, projectId, environmentId, environment, secretPath, time}\`; \`environment\`,
  \`environmentId\` and \`secretPath\` are null for a change of the whole project (\`project-deleted\`, \`access\`, \`tags\`).
- \`rotation\`, the same data with \`kind: "rotation"\` and \`rotation: {rotation, phase}\`: a secret rotation at the place
  reached a phase (\`rotated\`, \`waiting\`, \`stopped\`, \`retired\`); it alters no secret. An event type of its own, so
  that a client listening only for \`change\` (an operator of an earlier release) is not handed a kind it does not know.
- \`ping\` every few seconds, \`data: {"revision": R}\`: nothing the caller may read happened up to R.
- \`reset\` instead of \`ready\` when the revision to resume after is not in this server's change log (a database
  restored from a backup, another installation): \`data: {revision, reason: "unknown-revision", message}\`; list again,
  then follow from R.
- \`error\`, \`data: {message, statusCode, error, code}\`, then the end: the caller's token was revoked or expired (401), or,
  for a stream of one project, its access there ended (404).

To resume after a disconnect, send the last \`id\` received as the \`Last-Event-ID\` header (browsers' EventSource
does) or as \`since\`; \`Last-Event-ID\` wins when both are given. Nothing is missed and nothing repeated. Which
projects the caller sees follows its project permissions (environment and secret path too); a revocation made through
any replica applies at once. A client that stops reading is dropped after a minute. For example:

    curl -N -H "Authorization: Bearer $TOKEN" "$API/api/v1/changes/stream?since=41"`;

export function changeRoutes(app: ZodApp, services: Services, settings: EventStreamSettings): void {
  const { changeStreams, auth, syncBarrier, accessWatch } = services;
  app.get(
    '/api/v1/changes/stream',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Follow the changes (server-sent events)',
          description,
          permission: `Any authenticated user or machine identity. It receives the changes of the projects where it may \`read\` \`secrets\` (at the change's environment and secret path), and may hold ${HELD_REQUEST_LIMITS.changeStreams.perCaller} streams at once, its organization ${HELD_REQUEST_LIMITS.changeStreams.perOrganization} (429 \`RateLimitExceeded\` beyond, before anything is opened); a stream ends, and frees its place, when its client disconnects.`,
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
          wakeOn: (listener) => accessWatch.subscribe(listener, request.accessSeen),
        },
      });
    },
  );

  app.get(
    '/api/v1/changes/wait',
    {
      schema: {
        tags: ['Integrations'],
        ...describeRoute({
          summary: 'Wait until a write reached the clusters',
          description: waitDescription,
          permission: `${projectPermission('read', 'integrations')} Without it, or for a revision that does not exist, the answer is 404 alike. A caller may have ${HELD_REQUEST_LIMITS.revisionWaits.perCaller} waits under way at once, its organization ${HELD_REQUEST_LIMITS.revisionWaits.perOrganization} (429 \`RateLimitExceeded\` beyond, with \`Retry-After\`: the seconds until the first of those waits times out); a wait whose client disconnects ends at once and frees its place. A wait whose caller loses access (its token revoked, its identity deleted, its membership removed) ends at once with the answer its next request would get (401, or 404).`,
          effects: reads(),
          errors: [429],
        }),
        querystring: z.object({
          revision: digitsInteger(1, MAX_REVISION).describe(`The revision to wait for: the \`${REVISION_HEADER}\` header of the write.`),
          timeout: optional(duration().refine((value) => parseDuration(value)! <= MAX_WAIT_MS, 'must be at most 5m')).describe(
            'How long to wait at most: a duration such as `10s` or `2m` (a bare number is milliseconds); 30s when absent, 5m at most.',
          ),
        }),
        response: { 200: barrierAnswer },
      },
    },
    async (request, reply) => {
      const timeoutMs = request.query.timeout === undefined ? DEFAULT_WAIT_MS : parseDuration(request.query.timeout)!;
      const access = await watchAccess(request, services, (actor) => syncBarrier.assertMayWait(actor, request.query.revision));
      try {
        const answer = await syncBarrier.wait(request.actor, request.query.revision, timeoutMs, AbortSignal.any([clientGone(request, reply), access.signal]));
        // the caller's access ended while it waited: it is answered as its next request would be
        if (access.signal.aborted) throw access.signal.reason;
        return answer;
      } finally {
        access.stop();
      }
    },
  );
}

const DEFAULT_WAIT_MS = 30_000;
const MAX_WAIT_MS = 5 * 60_000;

const barrierAnswer = z
  .object({
    revision: z.number().describe('The revision waited for.'),
    reached: z.boolean().describe('Whether every Integration that reads what changed reflects it (false: the timeout ran out first).'),
    integrations: z
      .array(
        z.object({
          id: z.string().describe("The integration record's id."),
          cluster: z.string().describe('The cluster of the Integration resource.'),
          namespace: z.string().describe('Its namespace.'),
          name: z.string().describe('Its name.'),
          secretName: z.string().nullable().describe('The Secret (or ConfigMap) it writes.'),
          syncedRevision: z.number().nullable().describe('The revision its target reflects; null before its first sync.'),
          reloadedRevision: z.number().nullable().describe('The revision its workload reload reflects (Integrations with spec.reload).'),
          state: z
            .enum(['reached', 'pending', 'paused'])
            .describe('`reached`: it reflects the revision (or the write does not concern it); `pending`: not yet; `paused`: inactive, not waited for.'),
          isSynced: z
            .boolean()
            .nullable()
            .describe('Whether its last sync succeeded (null before the first): a `pending` one whose last sync failed waits on that failure (its message says why).'),
          message: z.string().nullable().describe('Its last sync message (why it is not synced), never a value.'),
        }),
      )
      .describe("Every Integration resource's record in the project of the change."),
  })
  .meta({
    examples: [
      {
        revision: 42,
        reached: true,
        integrations: [
          {
            id: '3c8e1f4a-7b2d-4e9c-a1f3-5d7b9e0c2a46',
            cluster: 'local',
            namespace: 'shop',
            name: 'app',
            secretName: 'app-secrets',
            syncedRevision: 42,
            reloadedRevision: null,
            state: 'reached',
            isSynced: true,
            message: null,
          },
        ],
      },
    ],
  });

const waitDescription = `Answers once every Integration resource that reads what revision R changed reflects it: its Secret (or
ConfigMap) holds the data of R or later, and, for an Integration that rolls workloads (\`spec.reload\`), the workloads
that consume a changed key were rolled. Every write answers its revision in the \`${REVISION_HEADER}\` header, so a
pipeline can write a secret and deploy only after it reached the cluster:

    R=$(curl -sf -D - -o /dev/null -X PATCH "$API/api/v3/secrets/raw/DB_PASSWORD" … | sed -n 's/^coffer-revision: //Ip' | tr -d '\\r')
    curl -sf -H "Authorization: Bearer $TOKEN" "$API/api/v1/changes/wait?revision=$R&timeout=2m"

The Integrations considered are the records of the change's project, in every cluster. R names the whole write: every
change its transaction committed (a batch, a folder with its secrets). One is \`pending\` while such a change touches
what it reads (its sources, and the folders it reads through imports and references) and the revision it last synced
is older than R; a write that concerns it not (another folder, a tag) never makes it wait, nor does another
Integration that is behind on something else. Paused ones (\`isActive: false\`) are listed and not waited for. The
answer comes when none is pending, or when the timeout runs out (\`reached: false\`, the pending ones named with
their last sync message): a clean answer either way, 200. \`coffer wait\` does the same from the command line.`;
