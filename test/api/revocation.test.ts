import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { type OpenStream, openEventStream, type ReceivedEvent } from '../support/event-stream.ts';
import { type ApiResponse, startReplica, startSibling, startTestApp, type TestApp } from '../support/test-app.ts';

// Revocation ends access at once (docs/threat-model.md, "Revocation"): a revoking call answered by one server ends the
// caller's event streams and revision waits held by another server on the same database (a replica on PostgreSQL, a
// sibling on PGlite), and its next request there is refused. The streams' periodic recheck is set to ten minutes here,
// so only the wake-up that the revoking write sends can end them within the test.

const ONLY_WOKEN = { recheckMs: 600_000 };

let app: TestApp;
/** The server holding the streams and waits. */
let other: TestApp;
let base: string;
let fx: AccessFixture;
/** Revocation latency per case: from the revoking call's answer to the stream's end (or the wait's answer). */
const latencies: string[] = [];

beforeAll(async () => {
  app = await startTestApp({ eventStreams: ONLY_WOKEN });
  fx = await accessFixture(app, 'revocation');
  // one wait per caller: a second one refused (429) shows the first is held
  const options = { eventStreams: ONLY_WOKEN, heldRequestLimits: { revisionWaits: { perCaller: 1, perOrganization: 100 } } };
  other = app.backend === 'postgres' ? await startReplica(app, options) : await startSibling(app, app.keys, options);
  await other.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(other.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  // a measurement, printed for bench/RESULTS.md; nothing asserts it
  if (latencies.length > 0) console.log(`revocation latency (${app.backend}, revoked on one server, held on another): ${latencies.join('; ')}`);
  await other?.close();
  await app?.close();
});

/** Resolves with what `check` answers once it answers something, polling every few milliseconds (a generous bound). */
async function eventually<T>(what: string, check: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const changeStream = (token: string, projectId?: string) => openEventStream(`${base}/api/v1/changes/stream${projectId ? `?projectId=${projectId}` : ''}`, { token });

const projectEvents = (token: string) =>
  openEventStream(`${base}/api/v1/events/subscribe/project-events`, {
    token,
    method: 'POST',
    body: { projectId: fx.projectId, register: [{ event: 'secret:update', conditions: { environmentSlug: 'dev', secretPath: '/**' } }] },
  });

/** Opens `streams`, revokes with `revoke` on the first server, and answers each stream's closing `error` event; records the latency. */
let written = 0;
async function streamsEndedBy(what: string, streams: OpenStream[], revoke: () => Promise<{ status: number }>): Promise<ReceivedEvent[]> {
  for (const stream of streams) expect(stream.response.status).toBe(200);
  // every stream is live: a write reaches each
  const key = `LIVE_${++written}`;
  expect(
    (await app.request('POST', `/api/v3/secrets/raw/${key}`, { token: fx.token, body: { workspaceId: fx.projectId, environment: 'dev', secretValue: 'v' } })).status,
  ).toBe(200);
  for (const stream of streams) {
    await eventually(`${what}: a change reached the stream`, () => stream.events.some((event) => event.event === 'change' || event.event === 'secret-manager'));
  }
  const revoked = await revoke();
  expect(revoked.status).toBe(200);
  const answered = performance.now();
  const closing = await Promise.all(
    streams.map(async (stream) => {
      const error = await eventually(`${what}: the stream's error event`, () => stream.events.find((event) => event.event === 'error'));
      const elapsed = performance.now() - answered;
      await eventually(`${what}: the stream ended`, () => stream.ended());
      return { error, elapsed };
    }),
  );
  latencies.push(`${what} ${Math.max(...closing.map((close) => close.elapsed)).toFixed(0)} ms`);
  return closing.map((close) => close.error);
}

const readProject = (token: string) => other.request('GET', `/api/v1/workspace/${fx.projectId}`, { token });

describe('revoking ends open streams on another server, and the next request there fails', () => {
  test('an access token revoked', async () => {
    const { token } = await fx.identity('revoked-token', 'member', 'viewer');
    const streams = [await changeStream(token), await projectEvents(token)];
    const [changes, events] = await streamsEndedBy('token revoked', streams, () =>
      app.request('POST', '/api/v1/auth/token/revoke', { token: fx.token, body: { accessToken: token } }),
    );
    expect(changes!.data).toMatchObject({ statusCode: 401, error: 'UnauthorizedError' });
    expect(events!.data).toMatchObject({ statusCode: 401 });
    expect((await readProject(token)).status).toBe(401);
  });

  test('a universal-auth client secret revoked: the tokens it logged in go with it', async () => {
    const identity = await fx.identity('revoked-secret', 'member', 'viewer');
    const ua = await fx.universalAuth(identity.id);
    const login = await fx.login(ua.clientId, ua.clientSecret);
    expect(login.status).toBe(200);
    const token: string = login.body.accessToken;
    const streams = [await changeStream(token), await projectEvents(token)];
    const [changes] = await streamsEndedBy('client secret revoked', streams, () =>
      app.request('POST', `/api/v1/auth/universal-auth/identities/${identity.id}/client-secrets/${ua.clientSecretId}/revoke`, { token: fx.token }),
    );
    expect(changes!.data).toMatchObject({ statusCode: 401 });
    expect((await readProject(token)).status).toBe(401);
    expect((await fx.login(ua.clientId, ua.clientSecret)).status).toBe(401);
  });

  test('an identity deleted', async () => {
    const { id, token } = await fx.identity('deleted-identity', 'member', 'viewer');
    const streams = [await changeStream(token, fx.projectId), await projectEvents(token)];
    const [changes] = await streamsEndedBy('identity deleted', streams, () => app.request('DELETE', `/api/v1/identities/${id}`, { token: fx.token }));
    expect(changes!.data).toMatchObject({ statusCode: 401 });
    expect((await readProject(token)).status).toBe(401);
  });

  test("a project membership removed: the project's streams end; the caller's token still works elsewhere", async () => {
    const { id, token } = await fx.identity('removed-member', 'member', 'viewer');
    const streams = [await changeStream(token, fx.projectId), await projectEvents(token)];
    const [changes, events] = await streamsEndedBy('project membership removed', streams, () =>
      app.request('DELETE', `/api/v2/workspace/${fx.projectId}/identity-memberships/${id}`, { token: fx.token }),
    );
    expect(changes!.data).toMatchObject({ statusCode: 404 });
    expect(events!.data).toMatchObject({ statusCode: 404 });
    expect((await readProject(token)).status).toBe(404);
    expect((await other.request('GET', '/api/v1/workspace', { token })).status).toBe(200);
  });

  test("a user's session signed out", async () => {
    const { accessToken } = await app.services.auth.issueUserToken(app.database.db, fx.userId, fx.orgId, {
      authMethod: 'email',
      origin: { ip: '127.0.0.1', userAgent: 'revocation-test', userAgentType: 'other' },
    });
    const streams = [await changeStream(accessToken), await projectEvents(accessToken)];
    const [changes] = await streamsEndedBy('session signed out', streams, () => app.request('POST', '/api/v1/auth/logout', { token: accessToken }));
    expect(changes!.data).toMatchObject({ statusCode: 401 });
    expect((await readProject(accessToken)).status).toBe(401);
  });
});

describe('revoking ends a revision wait on another server', () => {
  test('a wait held by a token that is revoked answers 401', async () => {
    const operator = await fx.identity('wait-operator', 'member', 'member');
    await fx.bindToCluster(operator.id, 'cluster-w');
    const recorded = await app.request('PUT', '/api/v1/operator/integrations', {
      token: operator.token,
      body: {
        cluster: 'cluster-w',
        managedBy: 'shop/app',
        projectId: fx.projectId,
        environment: 'dev',
        secretPath: '/',
        app: 'app',
        owner: 'shop',
        targetEnvironment: 'shop',
      },
    });
    expect(recorded.status, JSON.stringify(recorded.body)).toBe(200);
    const written = await app.request('POST', '/api/v3/secrets/raw/WAITED_FOR', {
      token: fx.token,
      body: { workspaceId: fx.projectId, environment: 'dev', secretValue: 'v' },
    });
    expect(written.status).toBe(200);
    const revision = String(written.headers['coffer-revision']);

    const waiter = await fx.identity('revoked-waiter', 'member', 'viewer');
    const wait = (timeout: string) => other.request('GET', '/api/v1/changes/wait', { token: waiter.token, query: { revision, timeout } });
    let held!: Promise<ApiResponse>;
    let answer: ApiResponse | undefined;
    let answeredAt = 0;
    const hold = () => {
      answer = undefined;
      held = wait('5m').then((response) => {
        answeredAt = performance.now();
        return (answer = response);
      });
    };
    hold();
    // the wait is held (the integration has not synced the revision) once a second one is refused: one place per caller
    for (let probe = await wait('1'); probe.status !== 429; probe = await wait('1')) {
      expect(probe.body).toMatchObject({ reached: false });
      if (answer?.status === 429) hold(); // the probe took the place first
    }
    const revoked = await app.request('POST', '/api/v1/auth/token/revoke', { token: fx.token, body: { accessToken: waiter.token } });
    expect(revoked.status).toBe(200);
    const revokedAt = performance.now();
    const ended = await held;
    expect(ended.status).toBe(401);
    expect(ended.body).toMatchObject({ statusCode: 401, error: 'UnauthorizedError' });
    latencies.push(`revision wait, token revoked ${Math.max(0, answeredAt - revokedAt).toFixed(0)} ms`);
  });
});
