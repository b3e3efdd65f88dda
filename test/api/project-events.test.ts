import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { startReplica, startSibling, startTestApp, type TestApp } from '../support/test-app.ts';
import { ServiceUnavailableError } from '../../src/errors.ts';
import { type EventRegistration, ProjectEventService } from '../../src/events/project-events.ts';
import { SecretReader } from '../../src/secrets/secret-reader.ts';

/**
 * POST /api/v1/events/subscribe/project-events over a real socket: the body Infisical's
 * operator v0.11.5 sends (internal/api/api.go CallSubscribeProjectEventsWithBaseURL) and the
 * one its CLI proxy sends (packages/proxy/sse.go), filtering by registration and by what the
 * caller may read, heartbeats, disconnects and slow readers, all on one shared fan-out.
 */

const app: TestApp = await startTestApp();
let fx: AccessFixture;
let base: string;
const OPERATOR_EVENTS = ['secret:create', 'secret:update', 'secret:delete', 'secret:import-mutation'];

interface ReceivedEvent {
  id?: string;
  event?: string;
  data?: any;
}

/** An open event stream: every event parsed as it arrives. */
async function subscribe(token: string, body: unknown, url = base) {
  const controller = new AbortController();
  const response = await fetch(`${url}/api/v1/events/subscribe/project-events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream', 'user-agent': 'k8-operator/v0.11.5' },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const events: ReceivedEvent[] = [];
  let ended = false;
  if (response.status === 200) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of response.body!) {
          buffer += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event: ReceivedEvent = {};
            for (const line of block.split('\n')) {
              const [field, ...rest] = line.split(': ');
              const value = rest.join(': ');
              if (field === 'id') event.id = value;
              if (field === 'event') event.event = value;
              if (field === 'data') event.data = JSON.parse(value);
            }
            events.push(event);
          }
        }
      } catch {
        // aborted
      }
      ended = true;
    })();
  }
  return {
    response,
    events,
    changes: () => events.filter((event) => event.event === 'secret-manager'),
    ended: () => ended,
    close: () => controller.abort(),
  };
}

async function waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const write = (name: string, secretPath = '/', environment = 'dev', value = 'v') =>
  fx.call('POST', `/api/v3/secrets/raw/${name}`, { workspaceId: fx.projectId, environment, secretPath, secretValue: value });

beforeAll(async () => {
  fx = await accessFixture(app, 'project-events');
  for (const [path, name] of [
    ['/', 'app'],
    ['/app', 'db'],
    ['/', 'ops'],
  ]) {
    await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path, name });
  }
  await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'staging', path: '/', name: 'app' });
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => app?.close());

describe("Infisical's operator v0.11.5 subscription (four events, environmentSlug, secretPath glob)", () => {
  test('answers text/event-stream, pings, and sends the changes under the registered path only', async () => {
    const conditions = { environmentSlug: 'dev', secretPath: '/app/**' };
    const stream = await subscribe(fx.token, { projectId: fx.projectId, register: OPERATOR_EVENTS.map((event) => ({ event, conditions })) });
    try {
      expect(stream.response.status).toBe(200);
      expect(stream.response.headers.get('content-type')).toBe('text/event-stream');
      expect(stream.response.headers.get('cache-control')).toBe('no-cache');
      await waitFor('a ping', () => stream.events.some((event) => event.event === 'ping'));
      await write('OUTSIDE', '/ops');
      await write('OTHER_ENV', '/app', 'staging');
      await write('INSIDE', '/app/db');
      const [event] = await waitFor('the /app/db change', () => stream.changes().length > 0 && stream.changes());
      expect(event!.data).toMatchObject({
        type: 'secret-manager',
        projectType: 'secret-manager',
        data: { event: 'secret:update', eventType: 'secret:update', payload: [{ environment: 'dev', secretPath: '/app/db' }] },
      });
      expect(Number(event!.id)).toBeGreaterThan(0);
      await write('INSIDE_TOO', '/app');
      await waitFor('the /app change', () => stream.changes().length > 1);
      const paths = stream.changes().flatMap((change) => change.data.data.payload.map((item: { secretPath: string }) => item.secretPath));
      expect(paths).toEqual(['/app/db', '/app']);
    } finally {
      stream.close();
    }
  });

  test('a folder or import change arrives as secret:import-mutation; a subscription without conditions hears the whole project', async () => {
    const stream = await subscribe(fx.token, { projectId: fx.projectId, register: OPERATOR_EVENTS.map((event) => ({ event })) });
    try {
      await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'staging', path: '/app', name: 'cache' });
      await write('STAGED', '/', 'staging');
      await waitFor('both changes', () => stream.changes().length >= 2);
      const names = stream.changes().map((change) => change.data.data.event);
      expect(names).toEqual(['secret:import-mutation', 'secret:update']);
    } finally {
      stream.close();
    }
  });

  test('the default secretPath condition is "/" (the root folder only)', async () => {
    const stream = await subscribe(fx.token, { projectId: fx.projectId, register: [{ event: 'secret:update', conditions: { environmentSlug: 'dev' } }] });
    try {
      await write('DEEP', '/app');
      await write('ROOT', '/');
      const [event] = await waitFor('the root change', () => stream.changes().length > 0 && stream.changes());
      expect(event!.data.data.payload).toEqual([{ environment: 'dev', secretPath: '/' }]);
    } finally {
      stream.close();
    }
  });
});

describe('what the caller may read', () => {
  test('a role limited to /app/** hears /app changes only; no-access is refused; no token is 401', async () => {
    await fx.call('POST', `/api/v1/workspace/${fx.projectId}/roles`, {
      slug: 'app-events',
      name: 'App events',
      permissions: [{ subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } }],
    });
    const limited = await fx.identity('events-limited', 'member', 'app-events');
    const stream = await subscribe(limited.token, { projectId: fx.projectId, register: [{ event: 'secret:update' }] });
    try {
      expect(stream.response.status).toBe(200);
      await write('HIDDEN', '/ops');
      await write('VISIBLE', '/app');
      const [event] = await waitFor('the /app change', () => stream.changes().length > 0 && stream.changes());
      expect(event!.data.data.payload).toEqual([{ environment: 'dev', secretPath: '/app' }]);
    } finally {
      stream.close();
    }
    const nobody = await fx.identity('events-nobody', 'member', 'no-access');
    const refused = await subscribe(nobody.token, { projectId: fx.projectId, register: [{ event: 'secret:update' }] });
    expect(refused.response.status).toBe(403);
    expect(await refused.response.json()).toMatchObject({ statusCode: 403, reqId: expect.any(String) });
    const anonymous = await fetch(`${base}/api/v1/events/subscribe/project-events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: fx.projectId, register: [{ event: 'secret:update' }] }),
    });
    expect(anonymous.status).toBe(401);
  });

  test('a revoked token ends its open stream with an error event', async () => {
    const member = await fx.identity('events-revoked', 'member', 'member');
    const stream = await subscribe(member.token, { projectId: fx.projectId, register: [{ event: 'secret:update' }] });
    expect(stream.response.status).toBe(200);
    await fx.call('POST', '/api/v1/auth/token/revoke', { accessToken: member.token });
    await waitFor('the stream to end', () => stream.ended());
    expect(stream.events.at(-1)).toMatchObject({ event: 'error', data: { message: expect.any(String) } });
    expect(app.services.changeFanout.size).toBe(0);
  });
});

describe('one fan-out for many subscribers', () => {
  test('60 streams from several callers each get the change once; disconnects leave no subscriber behind', async () => {
    const callers = await Promise.all([1, 2, 3].map((n) => fx.identity(`events-many-${n}`, 'member', 'viewer')));
    const streams = await Promise.all(
      Array.from({ length: 60 }, (_, index) => subscribe(callers[index % 3]!.token, { projectId: fx.projectId, register: [{ event: 'secret:update' }] })),
    );
    try {
      expect(streams.every((stream) => stream.response.status === 200)).toBe(true);
      expect(app.services.changeFanout.size).toBe(60);
      await write('MANY');
      await waitFor('every stream to hear it', () => streams.every((stream) => stream.changes().length === 1));
    } finally {
      for (const stream of streams) stream.close();
    }
    await waitFor('every subscription to close', () => app.services.changeFanout.size === 0);
  });

  test('a reader that stops reading does not hold up the others; its subscription ends when it goes away', async () => {
    const stalled = await fetch(`${base}/api/v1/events/subscribe/project-events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: fx.projectId, register: [{ event: 'secret:update', conditions: { environmentSlug: 'dev', secretPath: '/**' } }] }),
    });
    expect(stalled.status).toBe(200);
    const live = await subscribe(fx.token, { projectId: fx.projectId, register: [{ event: 'secret:update' }] });
    try {
      // 300 changes, ~1 KiB of event each for the stalled reader, which never reads
      const names = Array.from({ length: 300 }, (_, index) => `SLOW_${index}`);
      for (let index = 0; index < names.length; index += 50) {
        await fx.call('POST', '/api/v3/secrets/batch/raw', {
          workspaceId: fx.projectId,
          environment: 'dev',
          secrets: names.slice(index, index + 50).map((secretKey) => ({ secretKey, secretValue: 'x' })),
        });
      }
      await waitFor('the live reader to hear all six batches', () => live.changes().length >= 6);
    } finally {
      live.close();
      await stalled.body?.cancel().catch(() => undefined);
    }
    await waitFor('every subscription to close', () => app.services.changeFanout.size === 0);
  });
});

/** An app of its own, listening, with its fixture; streams do not re-check their tokens while a test counts. */
async function separateApp(slug: string, options: Parameters<typeof startTestApp>[0] = {}) {
  const own = await startTestApp({ eventStreams: { recheckMs: 600_000 }, ...options });
  const ox = await accessFixture(own, slug);
  await own.app.listen({ port: 0, host: '127.0.0.1' });
  return { own, ox, url: `http://127.0.0.1:${(own.app.server.address() as AddressInfo).port}` };
}

// Found by full runs (Infisical's operator against coffer serve on PostgreSQL): the fan-out, started by the first
// subscriber's request, read through that request's cache versions for good, so a place read again after a new
// reference was read at the project's old revision and missed it. Writes made through another server reach this one
// by NOTIFY alone, so here every read after the first comes from the fan-out.
describe('a new reference, written through another server', () => {
  test('the first subscriber hears a change of what a reference written after it subscribed points to', async () => {
    const { own, ox, url } = await separateApp('events-reference-elsewhere');
    const writer = own.backend === 'postgres' ? await startReplica(own) : await startSibling(own, own.keys);
    try {
      await ox.call('POST', '/api/v1/folders', { workspaceId: ox.projectId, environment: 'dev', path: '/', name: 'referenced' });
      const put = async (method: string, key: string, secretPath: string, secretValue: string) => {
        const response = await writer.request(method, `/api/v3/secrets/raw/${key}`, {
          token: ox.token,
          body: { workspaceId: ox.projectId, environment: 'dev', secretPath, secretValue },
        });
        expect(response.status, JSON.stringify(response.body)).toBe(200);
      };
      await put('POST', 'TARGET', '/referenced', 'one');
      const conditions = { environmentSlug: 'dev', secretPath: '/' };
      const stream = await subscribe(ox.token, { projectId: ox.projectId, register: OPERATOR_EVENTS.map((event) => ({ event, conditions })) }, url);
      try {
        expect(stream.response.status).toBe(200);
        await put('POST', 'POINTER', '/', '${dev.referenced.TARGET}');
        await waitFor('the new secret', () => stream.changes().length === 1);
        await put('PATCH', 'TARGET', '/referenced', 'two');
        await put('POST', 'AFTER', '/', 'x');
        // the direct change after it arrives; the referenced change came before it
        await waitFor('the later direct change', () => stream.changes().length >= 3);
        expect(stream.changes().map((change) => change.data.data.event)).toEqual(['secret:update', 'secret:import-mutation', 'secret:update']);
      } finally {
        stream.close();
      }
    } finally {
      await writer.close();
      await own.close();
    }
  });
});

describe('import-mutation: work per write, not per subscription', () => {
  test('20 subscriptions of a place that imports a folder cost no more statements per write than one', async () => {
    const { own, ox, url } = await separateApp('events-shared-reads');
    try {
      for (const name of ['app', 'shared']) await ox.call('POST', '/api/v1/folders', { workspaceId: ox.projectId, environment: 'dev', path: '/', name });
      await ox.call('POST', '/api/v1/secret-imports', { workspaceId: ox.projectId, environment: 'dev', path: '/app', import: { environment: 'dev', path: '/shared' } });
      const viewers = await Promise.all([1, 2, 3, 4].map((n) => ox.identity(`events-shared-${n}`, 'member', 'viewer')));
      const body = { projectId: ox.projectId, register: [{ event: 'secret:import-mutation', conditions: { environmentSlug: 'dev', secretPath: '/app/**' } }] };
      const put = (key: string) =>
        ox.call('POST', `/api/v3/secrets/raw/${key}`, { workspaceId: ox.projectId, environment: 'dev', secretPath: '/shared', secretValue: 'v' });

      /** Statements run while 3 secrets change in the imported folder and every stream hears each as an import-mutation of /app. */
      async function statementsFor(streams: Awaited<ReturnType<typeof subscribe>>[], name: string): Promise<number> {
        const before = own.database.queryCount();
        for (let index = 0; index < 3; index++) {
          await put(`${name}_${index}`);
          await waitFor('every stream to hear it', () => streams.every((stream) => stream.changes().length === index + 1));
        }
        for (const stream of streams) {
          expect(stream.changes().map((change) => change.data.data)).toEqual(
            Array.from({ length: 3 }, () => expect.objectContaining({ event: 'secret:import-mutation', payload: [{ environment: 'dev', secretPath: '/app' }] })),
          );
        }
        return own.database.queryCount() - before;
      }

      const one = [await subscribe(viewers[0]!.token, body, url)];
      const withOne = await statementsFor(one, 'ONE');
      one[0]!.close();
      await waitFor('it to close', () => own.services.changeFanout.size === 0);

      const many = await Promise.all(Array.from({ length: 20 }, (_, index) => subscribe(viewers[index % 4]!.token, body, url)));
      try {
        expect(many.every((stream) => stream.response.status === 200)).toBe(true);
        const withMany = await statementsFor(many, 'MANY');
        // a read of the place per subscription and write would be 19 × 3 reads more (each several statements); what
        // may differ between the two runs is per caller, not per write: the 4 viewers' first permission and token
        // look-ups, and how read audit rows happen to be grouped into INSERTs. So: fewer than one statement per extra
        // subscription over the three writes.
        expect(withMany - withOne).toBeLessThan(19);
      } finally {
        for (const stream of many) stream.close();
      }
      await waitFor('every subscription to close', () => own.services.changeFanout.size === 0);
    } finally {
      await own.close();
    }
  });
});

describe('caps across projects and per organization', () => {
  test(`a caller's streams count across projects, an organization's across its members; the next is 429; another organization is not held back`, async () => {
    const { own, ox, url } = await separateApp('events-capped', { heldRequestLimits: { projectEventStreams: { perCaller: 3, perOrganization: 5 } } });
    const open: Awaited<ReturnType<typeof subscribe>>[] = [];
    try {
      const second = await ox.call('POST', '/api/v2/workspace', { projectName: 'Second', slug: 'events-capped-second' });
      const projects = [ox.projectId, second.project.id as string];
      const callers = await Promise.all([1, 2, 3].map((n) => ox.identity(`events-capped-${n}`, 'admin')));
      const body = (projectId: string) => ({ projectId, register: [{ event: 'secret:update' }] });
      const take = async (token: string, projectId: string) => {
        const stream = await subscribe(token, body(projectId), url);
        open.push(stream);
        return stream;
      };
      // the first caller: two streams on one project, one on the other
      for (const projectId of [projects[0]!, projects[0]!, projects[1]!]) expect((await take(callers[0]!.token, projectId)).response.status).toBe(200);
      const fourth = await take(callers[0]!.token, projects[1]!);
      expect(fourth.response.status).toBe(429);
      expect(await fourth.response.json()).toMatchObject({
        statusCode: 429,
        error: 'RateLimitExceeded',
        code: 'RateLimitExceeded',
        message: 'At most 3 project event streams may be under way per caller; close one before opening another.',
        reqId: expect.any(String),
      });
      // the organization: 3 + 2 = 5; a third member is refused though it holds none
      for (const projectId of projects) expect((await take(callers[1]!.token, projectId)).response.status).toBe(200);
      const third = await take(callers[2]!.token, projects[0]!);
      expect(third.response.status).toBe(429);
      expect(await third.response.json()).toMatchObject({ statusCode: 429, error: 'RateLimitExceeded', message: expect.stringContaining('per organization') });
      // a stranger in another organization on the same server
      const strangerToken = await ox.foreignAdmin('events-capped-stranger');
      const theirs = await own.request('POST', '/api/v2/workspace', { token: strangerToken, body: { projectName: 'Theirs' } });
      expect((await take(strangerToken, theirs.body.project.id)).response.status).toBe(200);
      // a stream that ends gives its place back
      open[0]!.close();
      await waitFor('the place to be free', () => own.services.changeFanout.size === 5);
      expect((await take(callers[2]!.token, projects[0]!)).response.status).toBe(200);
    } finally {
      for (const stream of open) stream.close();
      await own.close();
    }
  });
});

describe('what a place reads, when the database fails to say', () => {
  // Found by a full run on a loaded machine: a place whose read failed kept what it read before, so a reference
  // written just then went unheard and a change of what it references never reached the operator.
  test('a failed read of the place never loses an import-mutation; once a read succeeds an unrelated folder is silent again', async () => {
    for (const name of ['referenced', 'elsewhere']) await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'prod', path: '/', name });
    const write = (key: string, secretPath: string, secretValue: string, method = 'POST') =>
      fx.call(method, `/api/v3/secrets/raw/${key}`, { workspaceId: fx.projectId, environment: 'prod', secretPath, secretValue });
    await write('FAILING_SOURCE', '/referenced', 'one');
    await write('FAILING_BASE', '/', 'zero');

    let failures = 0;
    let reads = 0;
    class FailingReader extends SecretReader {
      override async foldersRead(...args: Parameters<SecretReader['foldersRead']>) {
        reads++;
        if (failures > 0) {
          failures--;
          throw new ServiceUnavailableError('The database is unavailable; try again later');
        }
        return super.foldersRead(...args);
      }
    }
    const { services } = app;
    // the fan-out has published the writes above (on PostgreSQL it hears them a moment later): none is taken for a later one
    const written = await services.changes.latestRevision(services.db);
    await waitFor('the fan-out to pass the writes above', () => services.changeFanout.position >= written);
    const events = new ProjectEventService(services, services.changeFanout, new FailingReader(services));
    const actor = await services.auth.authenticate(`Bearer ${fx.token}`, { ip: null, userAgent: null, userAgentType: 'other' });
    const conditions = { environmentSlug: 'prod', secretPath: '/' };
    const stream = await events.subscribe(
      actor,
      fx.projectId,
      OPERATOR_EVENTS.map((event) => ({ event, conditions }) as EventRegistration),
    );
    /** The next `count` events, in order, whatever batches they come in. */
    const take = async (count: number) => {
      const taken: string[] = [];
      while (taken.length < count) {
        for (const event of (await stream.next())!) {
          const { data } = JSON.parse(event.data) as { data: { event: string; payload: { secretPath: string }[] } };
          taken.push(`${data.event} ${data.payload.map((place) => place.secretPath).join(',')}`);
        }
      }
      return taken;
    };
    try {
      // the reference written in "/" makes the place read again: those reads fail
      failures = 2;
      await write('FAILING_REFERS', '/', '${prod.referenced.FAILING_SOURCE}');
      expect(await take(1)).toEqual(['secret:update /']);
      await write('FAILING_SOURCE', '/referenced', 'two', 'PATCH');
      await write('FAILING_BASE', '/', 'one', 'PATCH');
      expect(await take(2)).toEqual(['secret:import-mutation /', 'secret:update /']);

      // a read succeeds (the retry, or one a change sets off): the place reads /referenced, and not /elsewhere
      await waitFor('a read of the place after the failures', () => failures === 0 && reads >= 4);
      await write('FAILING_SOURCE', '/referenced', 'three', 'PATCH');
      await write('FAILING_ELSEWHERE', '/elsewhere', 'x');
      await write('FAILING_BASE', '/', 'two', 'PATCH');
      expect(await take(2)).toEqual(['secret:import-mutation /', 'secret:update /']);
    } finally {
      stream.close();
    }
  });
});
