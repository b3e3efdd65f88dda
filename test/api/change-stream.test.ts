import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HELD_REQUEST_LIMITS } from '../../src/actor/caller-quota.ts';
const MAX_CHANGE_STREAMS_PER_CALLER = HELD_REQUEST_LIMITS.changeStreams.perCaller;
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { openEventStream, type OpenStream, waitUntil } from '../support/event-stream.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * GET /api/v1/changes/stream over a real socket: the change-feed revisions a caller may
 * read, in order and once each, resumed after a disconnect by Last-Event-ID or `since`,
 * with heartbeats; every stream served from the process's one change subscription.
 */

const app: TestApp = await startTestApp();
let fx: AccessFixture;
let base: string;
/** A second project the fixture's viewers are not members of. */
let otherProjectId: string;

const stream = (token: string, query = '', headers: Record<string, string> = {}) => openEventStream(`${base}/api/v1/changes/stream${query}`, { token, headers });

const write = (name: string, options: { projectId?: string; path?: string; environment?: string } = {}) =>
  fx.call('POST', `/api/v3/secrets/raw/${name}`, {
    workspaceId: options.projectId ?? fx.projectId,
    environment: options.environment ?? 'dev',
    secretPath: options.path ?? '/',
    secretValue: 'value',
  });

const latest = () => app.services.changes.latestRevision(app.database.db);
const revisions = (open: OpenStream) => open.changes().map((event) => event.data.revision as number);

beforeAll(async () => {
  fx = await accessFixture(app, 'change-stream');
  await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/', name: 'app' });
  await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/', name: 'ops' });
  const other = await fx.call('POST', '/api/v2/workspace', { projectName: 'Other', slug: 'change-stream-other' });
  otherProjectId = other.project.id;
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => app?.close());

describe('the event format', () => {
  test('ready with the current revision, then each change as an event whose id is its revision, and pings', async () => {
    const before = await latest();
    const open = await stream(fx.token);
    try {
      expect(open.response.status).toBe(200);
      expect(open.response.headers.get('content-type')).toBe('text/event-stream');
      const [ready] = await waitUntil('the ready event', () => open.events.length > 0 && open.events);
      expect(ready).toEqual({ id: String(before), event: 'ready', data: { revision: before } });
      await write('FORMAT', { path: '/app' });
      const [change] = await waitUntil('the change', () => open.changes().length > 0 && open.changes());
      const environment = (await fx.call('GET', `/api/v1/workspace/${fx.projectId}`)).workspace.environments.find((env: { slug: string }) => env.slug === 'dev');
      expect(change).toEqual({
        id: String(before + 1),
        event: 'change',
        data: {
          revision: before + 1,
          kind: 'secret',
          projectId: fx.projectId,
          environmentId: environment.id,
          environment: 'dev',
          secretPath: '/app',
          time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      });
      const ping = await waitUntil('a ping after the change', () => open.events.slice(2).find((event) => event.event === 'ping'));
      expect(ping).toEqual({ id: String(before + 1), event: 'ping', data: { revision: before + 1 } });
    } finally {
      open.close();
    }
  });

  // A rotation's phase is an event type of its own: a client listening only for `change` (an operator of an
  // earlier release, whose parser knows no kind `rotation`) is never handed one, and still gets the next change.
  test('a rotation phase comes as a rotation event, between changes, never as a change', async () => {
    const before = await latest();
    const open = await stream(fx.token);
    try {
      await waitUntil('the ready event', () => open.events.length > 0);
      const dev = (await fx.call('GET', `/api/v1/workspace/${fx.projectId}`)).workspace.environments.find((env: { slug: string }) => env.slug === 'dev');
      await app.database.db.transaction().execute((trx) =>
        app.services.changes.record(trx, [
          {
            projectId: fx.projectId,
            environmentId: dev.id,
            environmentSlug: 'dev',
            secretPath: '/app',
            kind: 'rotation',
            rotation: { rotation: 'nightly', phase: 'rotated' },
          },
        ]),
      );
      app.services.changes.committed();
      await write('AFTER_ROTATION', { path: '/app' });
      const [after] = await waitUntil('the change after the rotation', () => open.changes().length > 0 && open.changes());
      expect(after!.data).toMatchObject({ revision: before + 2, kind: 'secret' });
      const rotation = open.events.find((event) => event.event === 'rotation');
      expect(rotation).toEqual({
        id: String(before + 1),
        event: 'rotation',
        data: expect.objectContaining({ revision: before + 1, kind: 'rotation', secretPath: '/app', rotation: { rotation: 'nightly', phase: 'rotated' } }),
      });
      expect(open.changes().every((event) => event.data.kind !== 'rotation')).toBe(true);
    } finally {
      open.close();
    }
  });

  test('no token is 401; a bad since or Last-Event-ID is 422; an unknown project 404, nothing opened', async () => {
    const anonymous = await fetch(`${base}/api/v1/changes/stream`);
    expect(anonymous.status).toBe(401);
    for (const [query, headers] of [
      ['?since=-1', {}],
      ['?since=abc', {}],
      ['', { 'last-event-id': 'x1' }],
      ['?since=99999999999999999999', {}],
    ] as const) {
      const refused = await stream(fx.token, query, headers);
      expect(refused.response.status, `${query} ${JSON.stringify(headers)}`).toBe(422);
      expect(await refused.response.json()).toMatchObject({ statusCode: 422, error: 'ValidationFailure', reqId: expect.any(String) });
    }
    const unknown = await stream(fx.token, '?projectId=6a4f1c2e-2b7d-4c1a-9f3e-5d8b7a6c4e21');
    expect(unknown.response.status).toBe(404);
    expect(app.services.changeFanout.size).toBe(0);
  });
});

// Found by full runs (the console's "Where it goes"): an operator of another cluster recording an Integration over
// HTTP was recorded quietly, as the in-process operator's own records are, so followers heard of it only at the
// fan-out's 30 s poll (past this wait's bound). It arrives now like any write.
describe("another cluster's operator", () => {
  test('an Integration it records over HTTP reaches an open stream at once', async () => {
    const operator = await fx.identity('stream-remote-operator', 'member', 'member');
    await fx.bindToCluster(operator.id, 'cluster-stream');
    const open = await stream(fx.token, `?projectId=${fx.projectId}`);
    try {
      await waitUntil('the ready event', () => open.events.length > 0);
      const recorded = await app.request('PUT', '/api/v1/operator/integrations', {
        token: operator.token,
        body: {
          cluster: 'cluster-stream',
          managedBy: 'shop/remote',
          projectId: fx.projectId,
          environment: 'dev',
          secretPath: '/',
          app: 'remote',
          owner: 'shop',
          targetEnvironment: 'shop',
        },
      });
      expect(recorded.status, JSON.stringify(recorded.body)).toBe(200);
      const [change] = await waitUntil('the integration change', () => open.changes().length > 0 && open.changes());
      expect(change!.data).toMatchObject({ kind: 'integration' });
    } finally {
      open.close();
    }
  });
  test("a changed report of its target's keys reaches an open stream at once, naming the place only; an unchanged one writes no change", async () => {
    const operator = await fx.identity('stream-reporting-operator', 'member', 'member');
    await fx.bindToCluster(operator.id, 'cluster-report');
    const recorded = await app.request('PUT', '/api/v1/operator/integrations', {
      token: operator.token,
      body: {
        cluster: 'cluster-report',
        managedBy: 'shop/reporting',
        projectId: fx.projectId,
        environment: 'dev',
        secretPath: '/app',
        app: 'reporting',
        owner: 'shop',
        targetEnvironment: 'shop',
      },
    });
    expect(recorded.status, JSON.stringify(recorded.body)).toBe(200);
    const names = { key: 'REPORTED_KEY_3e9a', workload: 'reader-6d1c' };
    const reportOf = (readers: unknown[]) => ({
      isSynced: true,
      syncMessage: null,
      targetKeys: {
        carried: [{ environment: 'dev', path: '/app', keys: [{ key: names.key }] }],
        templated: 0,
        carriedTruncated: false,
        readers,
        readersTruncated: false,
      },
    });
    const reading = reportOf([{ kind: 'Deployment', namespace: 'shop', name: names.workload, keys: [names.key] }]);
    const report = (body: unknown) => app.request('POST', `/api/v1/operator/integrations/${recorded.body.integration.id}/sync-result`, { token: operator.token, body });
    const open = await stream(fx.token, `?projectId=${fx.projectId}`);
    try {
      await waitUntil('the ready event', () => open.events.length > 0);
      const first = await report(reading);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      const revision = Number(first.headers['coffer-revision']);
      const change = await waitUntil('the report change', () => open.changes().find((event) => event.data.revision === revision));
      expect(change.data).toEqual({
        revision,
        kind: 'integration',
        projectId: fx.projectId,
        environmentId: expect.any(String),
        environment: 'dev',
        secretPath: '/app',
        time: expect.any(String),
      });
      expect(JSON.stringify(open.events)).not.toMatch(new RegExp(`${names.key}|${names.workload}`));

      // the same report again: stored already, so no change row and no revision
      const again = await report(reading);
      expect(again.status).toBe(200);
      expect(again.headers['coffer-revision']).toBeUndefined();
      expect(await latest()).toBe(revision);
      // the next event is a later write's, not the unchanged report's
      await write('AFTER_REPORT', { path: '/app' });
      const later = await waitUntil('the later write', () => open.changes().find((event) => event.data.revision > revision));
      expect(later.data).toMatchObject({ kind: 'secret', secretPath: '/app' });
      expect(open.changes().filter((event) => event.data.revision > revision)).toHaveLength(1);

      // the workload stops reading: a changed report, one more change
      const gone = await report(reportOf([]));
      const goneRevision = Number(gone.headers['coffer-revision']);
      expect(goneRevision).toBeGreaterThan(later.data.revision);
      await waitUntil('the second report change', () => open.changes().find((event) => event.data.revision === goneRevision));
    } finally {
      open.close();
    }
  });
});

describe('what the caller may read', () => {
  test('a viewer of one project hears that project only; a role limited to /app/** hears /app only; an org admin hears both projects', async () => {
    await fx.call('POST', `/api/v1/workspace/${fx.projectId}/roles`, {
      slug: 'stream-app',
      name: 'Stream app',
      permissions: [{ subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } }],
    });
    const viewer = await fx.identity('stream-viewer', 'member', 'viewer');
    const limited = await fx.identity('stream-limited', 'member', 'stream-app');
    const streams = { viewer: await stream(viewer.token), limited: await stream(limited.token), admin: await stream(fx.token) };
    try {
      await waitUntil('every stream to be ready', () => Object.values(streams).every((open) => open.events.length > 0));
      await write('OTHER', { projectId: otherProjectId });
      await write('OPS', { path: '/ops' });
      await write('APP', { path: '/app' });
      await waitUntil('the admin to hear all three', () => streams.admin.changes().length === 3);
      await waitUntil('the viewer to hear two', () => streams.viewer.changes().length === 2);
      await waitUntil('the limited one to hear one', () => streams.limited.changes().length === 1);
      const places = (open: OpenStream) => open.changes().map((event) => `${event.data.projectId === fx.projectId ? 'main' : 'other'}:${event.data.secretPath}`);
      expect(places(streams.admin)).toEqual(['other:/', 'main:/ops', 'main:/app']);
      expect(places(streams.viewer)).toEqual(['main:/ops', 'main:/app']);
      expect(places(streams.limited)).toEqual(['main:/app']);
    } finally {
      for (const open of Object.values(streams)) open.close();
    }
  });

  test('projectId narrows the stream to one project; a project the caller is not in is 404, as an unknown one', async () => {
    const viewer = await fx.identity('stream-narrow', 'member', 'viewer');
    const refused = await stream(viewer.token, `?projectId=${otherProjectId}`);
    expect(refused.response.status).toBe(404);
    expect(await refused.response.json()).toMatchObject({ statusCode: 404, code: 'ProjectNotFound', reqId: expect.any(String) });
    const narrowed = await stream(fx.token, `?projectId=${otherProjectId}`);
    try {
      await waitUntil('ready', () => narrowed.events.length > 0);
      await write('MAIN_ONLY');
      await write('OTHER_ONLY', { projectId: otherProjectId });
      await waitUntil('the other project change', () => narrowed.changes().length > 0);
      await write('MAIN_AGAIN');
      await write('OTHER_AGAIN', { projectId: otherProjectId });
      await waitUntil('the second change', () => narrowed.changes().length > 1);
      expect(narrowed.changes().every((event) => event.data.projectId === otherProjectId)).toBe(true);
    } finally {
      narrowed.close();
    }
  });

  test('access given and taken away while a stream is open applies to the next change', async () => {
    const { identity } = await fx.call('POST', '/api/v1/identities', { name: 'stream-joiner', organizationId: fx.orgId, role: 'member' });
    const token = await fx.issueToken(identity.id);
    const markerProjectId = (await fx.call('POST', '/api/v2/workspace', { projectName: 'Marker', slug: 'change-stream-marker' })).project.id;
    await fx.call('POST', `/api/v2/workspace/${markerProjectId}/identity-memberships/${identity.id}`, { roles: [{ role: 'viewer' }] });
    const open = await stream(token);
    try {
      await waitUntil('ready', () => open.events.length > 0);
      await write('BEFORE_JOINING', { projectId: otherProjectId });
      await fx.call('POST', `/api/v2/workspace/${otherProjectId}/identity-memberships/${identity.id}`, { roles: [{ role: 'viewer' }] });
      await write('AFTER_JOINING', { projectId: otherProjectId });
      const joined = await latest();
      await waitUntil('the change after joining', () => open.changes().length > 0);
      await fx.call('DELETE', `/api/v2/workspace/${otherProjectId}/identity-memberships/${identity.id}`);
      await write('AFTER_LEAVING', { projectId: otherProjectId });
      // the positive event after: a change in a project it still reads (pings never pass what it may not read)
      await write('MARKER', { projectId: markerProjectId });
      const marker = await latest();
      await waitUntil('the marker', () => revisions(open).includes(marker));
      expect(revisions(open)).toEqual([joined, marker]);
    } finally {
      open.close();
    }
  });

  test('a revoked token ends the stream with an error event', async () => {
    const member = await fx.identity('stream-revoked', 'member', 'viewer');
    const open = await stream(member.token);
    await waitUntil('ready', () => open.events.length > 0);
    await fx.call('POST', '/api/v1/auth/token/revoke', { accessToken: member.token });
    await waitUntil('the stream to end', () => open.ended());
    expect(open.events.at(-1)).toMatchObject({ event: 'error', data: { message: expect.any(String) } });
    await waitUntil('the subscription to close', () => app.services.changeFanout.size === 0);
  });
});

describe('resuming', () => {
  test('after a disconnect with writes in between, Last-Event-ID (or since) resumes with nothing missed and nothing repeated', async () => {
    const viewer = await fx.identity('stream-resumer', 'member', 'viewer');
    const first = await stream(viewer.token);
    await waitUntil('ready', () => first.events.length > 0);
    for (let index = 0; index < 3; index++) await write(`BEFORE_${index}`);
    await waitUntil('three changes', () => first.changes().length === 3);
    const resumeAfter = first.lastEventId()!;
    first.close();
    await waitUntil('the first stream to close', () => app.services.changeFanout.size === 0);

    // while disconnected: visible changes, and changes the viewer may not see
    const missed: number[] = [];
    for (let index = 0; index < 4; index++) {
      await write(`WHILE_AWAY_${index}`, { projectId: otherProjectId });
      await write(`WHILE_AWAY_${index}`);
      missed.push(await latest());
    }
    const byHeader = await stream(viewer.token, '?since=1', { 'last-event-id': resumeAfter });
    const bySince = await stream(viewer.token, `?since=${resumeAfter}`);
    try {
      for (const open of [byHeader, bySince]) {
        await waitUntil('the missed changes', () => open.changes().length >= 4);
        expect(open.events[0]).toMatchObject({ event: 'ready', id: resumeAfter });
      }
      await write('AFTER_RESUMING');
      const live = await latest();
      for (const open of [byHeader, bySince]) {
        await waitUntil('the live change', () => open.changes().length >= 5);
        expect(revisions(open)).toEqual([...missed, live]);
      }
    } finally {
      byHeader.close();
      bySince.close();
    }
  });

  test('a quiet stream resumes from its last ping, which never moves past changes the caller does not see (that would count others’ writes)', async () => {
    const viewer = await fx.identity('stream-quiet', 'member', 'viewer');
    const open = await stream(viewer.token);
    const [ready] = await waitUntil('ready', () => open.events.length > 0 && open.events);
    const unseen: string[] = [];
    for (let index = 0; index < 3; index++) {
      await write(`UNSEEN_${index}`, { projectId: otherProjectId });
      unseen.push(String(await latest()));
    }
    await waitUntil('two pings after the unseen changes', () => open.events.filter((event) => event.event === 'ping').length >= 2);
    expect(open.lastEventId()).toBe(ready!.id);
    expect(open.events.some((event) => unseen.includes(String(event.data.revision)))).toBe(false);
    expect(open.changes()).toEqual([]);
    open.close();
    // resuming after it reads the unseen changes again and hands out none; a change it may read comes next
    const resumed = await stream(viewer.token, `?since=${ready!.id}`);
    try {
      await write('SEEN_AFTER_RESUMING');
      const seen = await latest();
      await waitUntil('the change it may read', () => resumed.changes().length > 0);
      expect(revisions(resumed)).toEqual([seen]);
    } finally {
      resumed.close();
    }
  });

  test('a revision beyond the change log (another or a restored database) starts with a reset event, then follows from the current revision', async () => {
    const current = await latest();
    const open = await stream(fx.token, `?since=${current + 1000}`);
    try {
      const [reset] = await waitUntil('the reset event', () => open.events.length > 0 && open.events);
      expect(reset).toEqual({
        id: String(current),
        event: 'reset',
        data: { revision: current, reason: 'unknown-revision', message: expect.stringContaining('list again') },
      });
      await write('AFTER_RESET');
      await waitUntil('the next change', () => open.changes().length > 0);
      expect(revisions(open)).toEqual([current + 1]);
    } finally {
      open.close();
    }
  });
});

describe('one database subscription for every stream', () => {
  test('40 open streams cost no more queries per change than one, changes a second apart; PostgreSQL holds one listening connection per channel', async () => {
    // an app of its own whose streams do not re-check their tokens while it counts
    const quiet = await startTestApp({ eventStreams: { recheckMs: 600_000 } });
    try {
      const qx = await accessFixture(quiet, 'change-stream-quiet');
      await quiet.app.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(quiet.app.server.address() as AddressInfo).port}/api/v1/changes/stream`;
      const viewers = await Promise.all([1, 2, 3, 4].map((n) => qx.identity(`stream-fan-${n}`, 'member', 'viewer')));
      const fanout = quiet.services.changeFanout;

      /** Queries the database ran while `writes` changes were made and every stream received them. */
      async function queriesFor(streams: OpenStream[], writes: number, name: string): Promise<number> {
        const put = (key: string) => qx.call('POST', `/api/v3/secrets/raw/${key}`, { workspaceId: qx.projectId, environment: 'dev', secretValue: 'value' });
        await put(`${name}_WARM_UP`); // each stream reads its caller's permissions once, on the first change
        await waitUntil('the warm-up', () => streams.every((open) => open.changes().length >= 1));
        const before = quiet.database.queryCount();
        for (let index = 0; index < writes; index++) {
          await put(`${name}_${index}`);
        }
        await waitUntil('every stream to hear every change', () => streams.every((open) => open.changes().length === writes + 1));
        return quiet.database.queryCount() - before;
      }

      const one = [await openEventStream(url, { token: viewers[0]!.token })];
      await waitUntil('ready', () => one[0]!.events.length > 0);
      const withOne = await queriesFor(one, 4, 'ONE');
      one[0]!.close();
      await waitUntil('it to close', () => fanout.size === 0);

      const many = await Promise.all(Array.from({ length: 40 }, (_, index) => openEventStream(url, { token: viewers[index % 4]!.token })));
      try {
        await waitUntil('all ready', () => many.every((open) => open.events.length > 0));
        expect(fanout.size).toBe(40);
        const withMany = await queriesFor(many, 4, 'MANY');
        // one query per stream per change would be 156 more
        expect(withMany - withOne).toBeLessThan(4);
        if (quiet.backend === 'postgres') {
          const listening = await sql<{ count: number }>`
            SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'coffer-listen'`.execute(quiet.database.db);
          // the change feed's and the access watch's (caches/access-watch.ts), whatever the number of streams
          expect(listening.rows[0]!.count).toBe(2);
        }
      } finally {
        for (const open of many) open.close();
      }
      await waitUntil('every subscription to close', () => fanout.size === 0);
    } finally {
      await quiet.close();
    }
  });
});

describe('limits', () => {
  test(`a caller may hold ${MAX_CHANGE_STREAMS_PER_CALLER} streams; one more is 429 until one closes`, async () => {
    const caller = await fx.identity('stream-greedy', 'member', 'viewer');
    const open = await Promise.all(Array.from({ length: MAX_CHANGE_STREAMS_PER_CALLER }, () => stream(caller.token)));
    try {
      expect(open.every((each) => each.response.status === 200)).toBe(true);
      const extra = await stream(caller.token);
      expect(extra.response.status).toBe(429);
      expect(await extra.response.json()).toMatchObject({ statusCode: 429, error: 'RateLimitExceeded' });
      // another caller is not held back
      const other = await stream(fx.token);
      expect(other.response.status).toBe(200);
      other.close();
    } finally {
      for (const each of open) each.close();
    }
    await waitUntil('every subscription to close', () => app.services.changeFanout.size === 0);
    const again = await stream(caller.token);
    expect(again.response.status).toBe(200);
    again.close();
  });

  test('a reader that stops reading holds up nobody: the others hear every change, once and in order', async () => {
    // a raw connection that sends the request and never reads the answer (sse.test.ts shows it is dropped)
    const stalled = connect((app.app.server.address() as AddressInfo).port, '127.0.0.1');
    stalled.on('error', () => {});
    stalled.write(`GET /api/v1/changes/stream HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${fx.token}\r\n\r\n`);
    stalled.pause();
    const live = await stream(fx.token);
    try {
      await waitUntil('both streams', () => app.services.changeFanout.size === 2 && live.events.length > 0);
      const from = await latest();
      for (let index = 0; index < 60; index++) await write(`STALL_${index}`, { path: index % 2 ? '/app' : '/ops' });
      const to = await latest();
      await waitUntil('the live reader to hear every change', () => live.changes().length === to - from);
      expect(revisions(live)).toEqual(Array.from({ length: to - from }, (_, index) => from + 1 + index));
    } finally {
      live.close();
      stalled.destroy();
    }
    await waitUntil('every subscription to close', () => app.services.changeFanout.size === 0);
  });
});

describe('caps per organization', () => {
  test('an organization past its cap is refused with 429 though the caller holds none; another organization is not held back', async () => {
    const small = await startTestApp({ heldRequestLimits: { changeStreams: { perCaller: 2, perOrganization: 3 } } });
    const open: OpenStream[] = [];
    try {
      const sx = await accessFixture(small, 'change-stream-capped');
      await small.app.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(small.app.server.address() as AddressInfo).port}/api/v1/changes/stream`;
      const take = async (token: string) => {
        const each = await openEventStream(url, { token });
        open.push(each);
        return each;
      };
      const [first, second] = await Promise.all([sx.identity('capped-first', 'member', 'viewer'), sx.identity('capped-second', 'member', 'viewer')]);
      for (const token of [first.token, first.token, second.token]) expect((await take(token)).response.status).toBe(200);
      const mine = await take(first.token);
      expect(mine.response.status).toBe(429);
      expect(await mine.response.json()).toMatchObject({ statusCode: 429, error: 'RateLimitExceeded', message: expect.stringContaining('per caller') });
      const ours = await take(second.token);
      expect(ours.response.status).toBe(429);
      expect(await ours.response.json()).toEqual({
        statusCode: 429,
        error: 'RateLimitExceeded',
        code: 'RateLimitExceeded',
        message: 'At most 3 change streams may be under way per organization; try again once some have ended.',
        reqId: expect.any(String),
      });
      const stranger = await take(await sx.foreignAdmin('change-stream-stranger'));
      expect(stranger.response.status).toBe(200);
      // a client that goes away gives its place back
      open[0]!.close();
      await waitUntil('the place to be free', () => small.services.changeFanout.size === 3);
      expect((await take(second.token)).response.status).toBe(200);
    } finally {
      for (const each of open) each.close();
      await small.close();
    }
  });
});
