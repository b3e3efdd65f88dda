import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HELD_REQUEST_LIMITS } from '../../src/actor/caller-quota.ts';
import { BarrierWatch } from '../../src/integrations/barrier-watch.ts';
import { SyncProgress } from '../../src/integrations/sync-progress.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { type ApiResponse, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The revision barrier: every write answers the change-feed revision it
 * committed (Coffer-Revision), and GET /api/v1/changes/wait answers once every
 * Integration that reads what changed reflects it. The operator is played here
 * through the operator API, as an operator in another cluster calls it.
 */

const app: TestApp = await startTestApp();
let fx: AccessFixture;
let operator: { id: string; token: string };
let environmentIds: Record<string, string>;

beforeAll(async () => {
  fx = await accessFixture(app, 'barrier-project');
  operator = await fx.identity('barrier-operator', 'member', 'admin');
  await fx.bindToCluster(operator.id, 'cluster-b');
  const environments = (await fx.call('GET', `/api/v1/workspace/${fx.projectId}`)).workspace.environments as { id: string; slug: string }[];
  environmentIds = Object.fromEntries(environments.map((environment) => [environment.slug, environment.id]));
});
afterAll(async () => app?.close());

const as = (token: string) => (method: string, url: string, body?: unknown, query?: Record<string, string>) => app.request(method, url, { token, body, query });
const admin = () => as(fx.token);

const revisionOf = (response: { headers: Record<string, unknown> }) => {
  const header = response.headers['coffer-revision'];
  return header === undefined ? undefined : Number(header);
};

async function latestRevision(): Promise<number> {
  const row = await app.database.db
    .selectFrom('changeLog')
    .select((eb) => eb.fn.max('revision').as('revision'))
    .executeTakeFirstOrThrow();
  return Number(row.revision);
}

async function writeSecret(key: string, value: string, secretPath = '/', environment = 'dev'): Promise<number> {
  const body = { workspaceId: fx.projectId, environment, secretPath, secretValue: value };
  let response = await admin()('POST', `/api/v3/secrets/raw/${key}`, body);
  if (response.status !== 200) response = await admin()('PATCH', `/api/v3/secrets/raw/${key}`, body);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return revisionOf(response)!;
}

const wait = (revision: number | string, timeout?: string, token = fx.token) =>
  as(token)('GET', '/api/v1/changes/wait', undefined, { revision: String(revision), ...(timeout ? { timeout } : {}) });

/** An Integration resource of cluster-b, as its operator keeps the record. */
async function record(name: string, options: { environment?: string; secretPath?: string; reloads?: boolean; isActive?: boolean } = {}) {
  const response = await as(operator.token)('PUT', '/api/v1/operator/integrations', {
    cluster: 'cluster-b',
    managedBy: `shop/${name}`,
    projectId: fx.projectId,
    environment: options.environment ?? 'dev',
    secretPath: options.secretPath ?? '/',
    app: `${name}-secret`,
    owner: 'shop',
    targetEnvironment: 'shop',
    ...(options.reloads === undefined ? {} : { reloads: options.reloads }),
    ...(options.isActive === undefined ? {} : { isActive: options.isActive }),
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.integration.id as string;
}

async function synced(id: string, revision: number, places: { environment: string; path: string; recursive?: boolean }[]) {
  const response = await as(operator.token)('POST', `/api/v1/operator/integrations/${id}/sync-result`, {
    isSynced: true,
    syncMessage: null,
    syncedRevision: revision,
    places: places.map((place) => ({ environmentId: environmentIds[place.environment], path: place.path, recursive: place.recursive ?? false })),
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

const stateOf = (answer: { integrations: { id: string; state: string }[] }, id: string) => answer.integrations.find((integration) => integration.id === id)?.state;

describe('Coffer-Revision on writes', () => {
  test('each write that records a change answers the newest revision it committed; reads and writes that record none answer no revision', async () => {
    const created = await admin()('POST', '/api/v3/secrets/raw/HEADER_A', { workspaceId: fx.projectId, environment: 'dev', secretValue: 'a' });
    expect(revisionOf(created)).toBe(await latestRevision());
    const updated = await admin()('PATCH', '/api/v3/secrets/raw/HEADER_A', { workspaceId: fx.projectId, environment: 'dev', secretValue: 'b' });
    expect(revisionOf(updated)).toBe(revisionOf(created)! + 1);
    const batch = await admin()('POST', '/api/v3/secrets/batch/raw', {
      workspaceId: fx.projectId,
      environment: 'dev',
      secrets: [
        { secretKey: 'HEADER_B', secretValue: 'b' },
        { secretKey: 'HEADER_C', secretValue: 'c' },
      ],
    });
    expect(batch.status).toBe(200);
    expect(revisionOf(batch)).toBe(await latestRevision());
    const folder = await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: 'header-folder' });
    expect(revisionOf(folder)).toBe(await latestRevision());
    const imported = await admin()('POST', '/api/v1/secret-imports', {
      workspaceId: fx.projectId,
      environment: 'dev',
      path: '/header-folder',
      import: { environment: 'staging', path: '/' },
    });
    expect(revisionOf(imported)).toBe(await latestRevision());
    const deleted = await admin()('DELETE', '/api/v3/secrets/raw/HEADER_A', { workspaceId: fx.projectId, environment: 'dev' });
    expect(revisionOf(deleted)).toBe(await latestRevision());

    const read = await admin()('GET', '/api/v3/secrets/raw', undefined, { workspaceId: fx.projectId, environment: 'dev' });
    expect(read.status).toBe(200);
    expect(revisionOf(read)).toBeUndefined();
    const identity = await admin()('POST', '/api/v1/identities', { name: 'no-change-identity', organizationId: fx.orgId, role: 'member' });
    expect(identity.status).toBe(200);
    expect(revisionOf(identity)).toBeUndefined();
    const refused = await admin()('POST', '/api/v3/secrets/raw/HEADER_B', { workspaceId: fx.projectId, environment: 'dev', secretValue: 'again' });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(revisionOf(refused)).toBeUndefined();
  });

  test('an update that stores what is there changes nothing: no version, no change row, no audit entry, no revision (v3, v3 batch, v4, v4 batch)', async () => {
    const tag = (await admin()('POST', `/api/v1/workspace/${fx.projectId}/tags`, { slug: 'same-tag', color: '#00ff00' })).body.workspaceTag;
    const place = { workspaceId: fx.projectId, environment: 'dev', secretPath: '/' };
    const stored = { secretValue: 'same', secretComment: 'a note', skipMultilineEncoding: true, tagIds: [tag.id] };
    expect((await admin()('POST', '/api/v3/secrets/raw/SAME_A', { ...place, ...stored })).status).toBe(200);
    expect((await admin()('POST', '/api/v3/secrets/raw/SAME_B', { ...place, ...stored })).status).toBe(200);
    const before = await snapshotDatabase(app.database);

    const single = await admin()('PATCH', '/api/v3/secrets/raw/SAME_A', { ...place, ...stored, secretComment: '  a note  ' });
    expect(single.status, JSON.stringify(single.body)).toBe(200);
    expect(single.body.secret).toMatchObject({ secretKey: 'SAME_A', secretValue: 'same', secretComment: 'a note', version: 1 });
    expect(revisionOf(single)).toBeUndefined();
    const batch = await admin()('PATCH', '/api/v3/secrets/batch/raw', {
      ...place,
      secrets: [
        { secretKey: 'SAME_A', ...stored },
        { secretKey: 'SAME_B', secretValue: 'same', newSecretName: 'SAME_B' },
      ],
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect(batch.body.secrets.map((secret: { version: number }) => secret.version)).toEqual([1, 1]);
    expect(revisionOf(batch)).toBeUndefined();
    const v4 = await admin()('PATCH', '/api/v4/secrets/SAME_A', { projectId: fx.projectId, environment: 'dev', secretPath: '/', ...stored });
    expect(v4.status, JSON.stringify(v4.body)).toBe(200);
    expect(revisionOf(v4)).toBeUndefined();
    const v4Batch = await admin()('PATCH', '/api/v4/secrets/batch', {
      projectId: fx.projectId,
      environment: 'dev',
      secretPath: '/',
      secrets: [{ secretKey: 'SAME_B', ...stored }],
    });
    expect(v4Batch.status, JSON.stringify(v4Batch.body)).toBe(200);
    expect(revisionOf(v4Batch)).toBeUndefined();
    expect(await snapshotDatabase(app.database)).toEqual(before);

    // a batch in which one item changes: that one is versioned, audited and recorded; the other is left alone
    const mixed = await admin()('PATCH', '/api/v3/secrets/batch/raw', {
      ...place,
      secrets: [
        { secretKey: 'SAME_A', secretValue: 'same' },
        { secretKey: 'SAME_B', secretValue: 'changed' },
      ],
    });
    expect(mixed.status).toBe(200);
    expect(mixed.body.secrets.map((secret: { version: number }) => secret.version)).toEqual([1, 2]);
    expect(revisionOf(mixed)).toBe(await latestRevision());
    const audited = await app.database.db.selectFrom('auditLogs').select('eventMetadata').where('eventType', '=', 'update-secrets').execute();
    expect(audited.map((entry) => entry.eventMetadata)).toEqual([
      expect.objectContaining({ secrets: [expect.objectContaining({ secretKey: 'SAME_B', secretVersion: 2 })] }),
    ]);
    // and a tag change alone is a change
    const retagged = await admin()('PATCH', '/api/v3/secrets/raw/SAME_A', { ...place, tagIds: [] });
    expect(retagged.body.secret.version).toBe(2);
    expect(revisionOf(retagged)).toBe(await latestRevision());
  });

  test('the API reference documents the header on every write', async () => {
    const document = (await app.request('GET', '/api/docs/openapi.json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>;
    };
    const secretCreate = document.paths['/api/v3/secrets/raw/{secretName}']!.post!;
    expect(secretCreate.responses['200']!.headers).toHaveProperty('Coffer-Revision');
    expect(document.paths['/api/v3/secrets/raw']!.get!.responses['200']!.headers).toBeUndefined();
  });
});

describe('GET /api/v1/changes/wait', () => {
  test('pending until the Integration reading the place records a sync at or past the revision; then reached', async () => {
    const id = await record('app');
    const revision = await writeSecret('WAIT_A', 'one');
    const before = await wait(revision, '300ms');
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ revision, reached: false });
    expect(before.body.integrations.find((integration: { id: string }) => integration.id === id)).toEqual({
      id,
      cluster: 'cluster-b',
      namespace: 'shop',
      name: 'app',
      secretName: 'app-secret',
      syncedRevision: null,
      reloadedRevision: null,
      state: 'pending',
      isSynced: null,
      message: null,
    });
    await synced(id, revision - 1, [{ environment: 'dev', path: '/' }]);
    expect(stateOf((await wait(revision, '200ms')).body, id)).toBe('pending');
    await synced(id, revision, [{ environment: 'dev', path: '/' }]);
    const after = await wait(revision, '5s');
    expect(after.body.reached).toBe(true);
    expect(stateOf(after.body, id)).toBe('reached');
  });

  test('a waiting call answers when the sync is recorded, not at its timeout', async () => {
    const id = await record('woken');
    await synced(id, await latestRevision(), [{ environment: 'dev', path: '/woken' }]);
    await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: 'woken' });
    const revision = await writeSecret('WOKEN', 'x', '/woken');
    const waiting = wait(revision, '2m');
    setTimeout(() => void synced(id, revision, [{ environment: 'dev', path: '/woken' }]), 300);
    const answer = await waiting;
    expect(answer.body.reached).toBe(true);
    expect(stateOf(answer.body, id)).toBe('reached');
  });

  test('a change that does not touch what an Integration reads never makes it wait; one in a folder it reads through an import does', async () => {
    await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: 'narrow' });
    const id = await record('narrow', { secretPath: '/narrow' });
    await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'staging', name: 'imported' });
    await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: 'elsewhere' });
    const base = await latestRevision();
    await synced(id, base, [
      { environment: 'dev', path: '/narrow' },
      { environment: 'staging', path: '/imported' },
    ]);
    const elsewhere = await writeSecret('ELSEWHERE', 'x', '/elsewhere');
    expect(stateOf((await wait(elsewhere, '5s')).body, id)).toBe('reached');
    const throughImport = await writeSecret('IMPORTED', 'x', '/imported', 'staging');
    expect(stateOf((await wait(throughImport, '200ms')).body, id)).toBe('pending');
    const tag = await admin()('POST', `/api/v1/workspace/${fx.projectId}/tags`, { slug: 'barrier-tag', color: '#000000' });
    expect(tag.status).toBe(200);
    await synced(id, throughImport, [
      { environment: 'dev', path: '/narrow' },
      { environment: 'staging', path: '/imported' },
    ]);
    expect(stateOf((await wait(throughImport, '5s')).body, id)).toBe('reached');
  });

  test('recursive Integrations wait for changes below their path; folder changes above a path reach it', async () => {
    await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: 'tree' });
    const id = await record('deep', { secretPath: '/tree' });
    await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/tree', name: 'leaf' });
    await synced(id, await latestRevision(), [{ environment: 'dev', path: '/tree', recursive: true }]);
    const below = await writeSecret('LEAF', 'x', '/tree/leaf');
    expect(stateOf((await wait(below, '200ms')).body, id)).toBe('pending');
    await synced(id, below, [{ environment: 'dev', path: '/tree', recursive: true }]);
    expect(stateOf((await wait(below, '5s')).body, id)).toBe('reached');
  });

  test('a paused Integration is listed and not waited for', async () => {
    const id = await record('paused', { isActive: false });
    const revision = await writeSecret('PAUSED', 'x');
    const answer = await wait(revision, '100ms');
    expect(stateOf(answer.body, id)).toBe('paused');
    await record('paused', { isActive: true });
  });

  test('an Integration that rolls workloads also waits for its reload', async () => {
    await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: 'rolling' });
    const id = await record('rolling', { secretPath: '/rolling', reloads: true });
    const revision = await writeSecret('ROLLING', 'x', '/rolling');
    await synced(id, revision, [{ environment: 'dev', path: '/rolling' }]);
    expect(stateOf((await wait(revision, '200ms')).body, id)).toBe('pending');
    const reloaded = await as(operator.token)('POST', `/api/v1/operator/integrations/${id}/reload-result`, { reloadedRevision: revision });
    expect(reloaded.status).toBe(200);
    const answer = await wait(revision, '5s');
    expect(answer.body.integrations.find((integration: { id: string }) => integration.id === id)).toMatchObject({ state: 'reached', reloadedRevision: revision });
  });

  test('a failed sync keeps the revision reached, and its message says why it is pending (isSynced false: failing, not slow)', async () => {
    await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: 'failing' });
    const id = await record('failing', { secretPath: '/failing' });
    const first = await writeSecret('FAILING', 'x', '/failing');
    await synced(id, first, [{ environment: 'dev', path: '/failing' }]);
    const failed = await as(operator.token)('POST', `/api/v1/operator/integrations/${id}/sync-result`, { isSynced: false, syncMessage: 'the template failed' });
    expect(failed.status).toBe(200);
    const second = await writeSecret('FAILING', 'y', '/failing');
    const answer = await wait(second, '200ms');
    expect(answer.body.integrations.find((integration: { id: string }) => integration.id === id)).toMatchObject({
      state: 'pending',
      syncedRevision: first,
      isSynced: false,
      message: 'the template failed',
    });
    // a write it does not read is not held up by it
    const unrelated = await writeSecret('UNRELATED', 'z', '/elsewhere');
    expect(stateOf((await wait(unrelated, '5s')).body, id)).toBe('reached');
  });

  test('bad input is a 422 naming the field; an unknown revision, and one the caller may not see, are 404 alike; nothing changes', async () => {
    const outsider = await fx.identity('barrier-outsider', 'member');
    const strangerToken = await fx.foreignAdmin('barrier-stranger');
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    for (const [query, field] of [
      [{}, 'revision'],
      [{ revision: 'abc' }, 'revision'],
      [{ revision: '0' }, 'revision'],
      [{ revision: '1', timeout: '10m' }, 'timeout'],
      [{ revision: '1', timeout: 'soon' }, 'timeout'],
    ] as const) {
      const response = await admin()('GET', '/api/v1/changes/wait', undefined, query);
      expect(response.status, JSON.stringify(query)).toBe(422);
      expect(response.body).toMatchObject({ statusCode: 422, error: 'ValidationFailure', reqId: expect.any(String) });
      expect(JSON.stringify(response.body)).toContain(field);
    }
    const unknown = await wait(Number.MAX_SAFE_INTEGER, '1s');
    expect(unknown.status).toBe(404);
    const revision = await latestRevision();
    const stranger = await wait(revision, '1s', strangerToken);
    expect(stranger.status).toBe(404);
    expect(stranger.body.message).toBe(unknown.body.message.replace(String(Number.MAX_SAFE_INTEGER), String(revision)));
    expect((await wait(revision, '1s', outsider.token)).status).toBe(404);
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);
  });

  test('a caller may have 20 waits under way; the 21st is 429 at once, and a wait that answered frees its place', async () => {
    expect((await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: 'crowded' })).status).toBe(200);
    const id = await record('crowded', { secretPath: '/crowded' });
    const revision = await writeSecret('CROWDED', 'v', '/crowded');
    // a held wait refused while a probe below holds a place asks again, until it holds one
    const hold = async (): Promise<ApiResponse> => {
      for (;;) {
        const answer = await wait(revision, '20s');
        if (answer.status !== 429) return answer;
      }
    };
    const held = Array.from({ length: 20 }, hold);
    // the 21st asks until the 20 hold their places: its refusal is the positive event (no answer tells a client when they hold them)
    const probe: { answer?: ApiResponse } = {};
    await until('the 20 waits to hold their places', async () => (probe.answer = await wait(revision, '1ms')).status === 429);
    const refused = probe.answer!;
    expect(refused.body).toMatchObject({ statusCode: 429, error: 'RateLimitExceeded', message: expect.stringContaining('20 waits'), reqId: expect.any(String) });
    // the place frees itself by the first held wait's timeout at the latest
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(20);
    // another caller is not counted against this one
    const other = await fx.identity('barrier-other-waiter', 'member', 'admin');
    const theirs = wait(revision, '20s', other.token);
    await synced(id, revision, [{ environment: 'dev', path: '/crowded' }]);
    for (const answer of [...(await Promise.all(held)), await theirs]) expect(answer.body).toMatchObject({ reached: true });
    expect((await wait(revision, '1s')).status).toBe(200);
  });
});

/** Polls `check` (a request) until it answers true; every probe is a real request, so a refusal or an answer is a positive event. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('held waits', () => {
  test('a wait whose client disconnects ends at once and gives its place back', async () => {
    expect((await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: 'abandoned' })).status).toBe(200);
    const id = await record('abandoned', { secretPath: '/abandoned' });
    const revision = await writeSecret('ABANDONED', 'v', '/abandoned');
    const caller = await fx.identity('barrier-leaver', 'member', 'admin');
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}/api/v1/changes/wait?revision=${revision}&timeout=5m`;
    const clients = Array.from({ length: HELD_REQUEST_LIMITS.revisionWaits.perCaller }, () => new AbortController());
    // a held request that arrives while a probe below holds a place is refused (429): it asks again until it holds one
    const hold = async (client: AbortController): Promise<string> => {
      try {
        for (;;) {
          const response = await fetch(url, { headers: { authorization: `Bearer ${caller.token}` }, signal: client.signal });
          if (response.status !== 429) return `answered ${response.status} ${await response.text()}`;
          await response.body?.cancel();
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } catch {
        return 'gone';
      }
    };
    const held = clients.map(hold);
    try {
      await until('the caller to hold every place', async () => (await wait(revision, '1ms', caller.token)).status === 429, 60_000);
    } finally {
      for (const client of clients) client.abort();
    }
    expect(await Promise.all(held)).toEqual(clients.map(() => 'gone'));
    // each of the 20 would have held its place for 5 minutes
    await until('a place to be free again', async () => (await wait(revision, '1ms', caller.token)).status === 200);
    await synced(id, revision, [{ environment: 'dev', path: '/abandoned' }]);
  }, 120_000);

  // Found by a full run on a loaded machine: a wait whose caller lost access while the barrier was starting to listen
  // was never told (an AbortSignal sends its event once) and held its place to the timeout.
  test('a wait whose signal aborts while the barrier starts listening answers at once', async () => {
    const watch = new BarrierWatch(app.database.db, new SyncProgress(app.database));
    const client = new AbortController();
    const answered = watch.until(fx.projectId, () => ({ done: false, value: 'evaluated' }), { deadline: Date.now() + 3_600_000, signal: client.signal, gone: 'gone' });
    client.abort(); // after until() checked the signal, before it returns from listening
    expect(await answered).toBe('gone');
    expect(watch.watchedProjects).toBe(0);
  });

  test('the waits of one project share one read per progress notification, however many there are', async () => {
    expect((await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: 'noisy' })).status).toBe(200);
    const noisy = await record('noisy', { secretPath: '/noisy' });
    let noise = 0;
    /** Statements run from the start of `waiters` waits through `notifications` unrelated results and the one that answers them. */
    async function statementsFor(waiters: number, notifications: number): Promise<number> {
      // a folder and Integration of its own: an earlier round's Integration must not be pending on this write
      const folder = `shared-${waiters}-${notifications}`;
      expect((await admin()('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: folder })).status).toBe(200);
      const id = await record(folder, { secretPath: `/${folder}` });
      const revision = await writeSecret(`SHARED_${waiters}_${notifications}`, 'v', `/${folder}`);
      const before = app.database.queryCount();
      const waits = Array.from({ length: waiters }, () => wait(revision, '2m'));
      for (let index = 0; index < notifications; index++) {
        const result = await as(operator.token)('POST', `/api/v1/operator/integrations/${noisy}/sync-result`, { isSynced: false, syncMessage: `noise ${noise++}` });
        expect(result.status).toBe(200);
      }
      await synced(id, revision, [{ environment: 'dev', path: `/${folder}` }]);
      for (const answer of await Promise.all(waits)) expect(answer.body.reached).toBe(true);
      return app.database.queryCount() - before;
    }
    // what 4 more notifications cost, with the waits' own start-up cancelled out
    const perFour = async (waiters: number) => (await statementsFor(waiters, 6)) - (await statementsFor(waiters, 2));
    const one = await perFour(1);
    const twenty = await perFour(20);
    // one read per wait and notification would be 4 × 19 = 76 more
    expect(twenty - one).toBeLessThan(30);
  }, 120_000);
});

describe('caps per organization', () => {
  test('one organization past its cap is refused with 429 and Retry-After; a stranger in another organization is not', async () => {
    const small = await startTestApp({ heldRequestLimits: { revisionWaits: { perCaller: 2, perOrganization: 3 } } });
    try {
      const sx = await accessFixture(small, 'capped-org');
      const [first, second] = await Promise.all([sx.identity('capped-a', 'member', 'admin'), sx.identity('capped-b', 'member', 'admin')]);
      const waitOn = (revision: number, timeout: string, token: string) =>
        small.request('GET', '/api/v1/changes/wait', { token, query: { revision: String(revision), timeout } });
      await sx.bindToCluster(sx.identityId, 'c');
      const operatorRecord = await small.request('PUT', '/api/v1/operator/integrations', {
        token: sx.token,
        body: { cluster: 'c', managedBy: 'ns/capped', projectId: sx.projectId, environment: 'dev', secretPath: '/', app: 'capped', owner: 'ns', targetEnvironment: 'ns' },
      });
      expect(operatorRecord.status).toBe(200);
      const written = await small.request('POST', '/api/v3/secrets/raw/CAPPED', {
        token: sx.token,
        body: { workspaceId: sx.projectId, environment: 'dev', secretValue: 'v' },
      });
      const revision = Number(written.headers['coffer-revision']);
      // a held wait refused while a probe below holds a place asks again, until it holds one
      const hold = async (token: string) => {
        for (;;) {
          const answer = await waitOn(revision, '60s', token);
          if (answer.status !== 429) return answer;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const held = [hold(first.token), hold(first.token), hold(second.token)];
      await until('the organization to hold its 3', async () => (await waitOn(revision, '1ms', second.token)).status === 429);
      const refused = await waitOn(revision, '1ms', second.token);
      expect(refused.body).toMatchObject({
        statusCode: 429,
        error: 'RateLimitExceeded',
        code: 'RateLimitExceeded',
        message: expect.stringContaining('per organization'),
        reqId: expect.any(String),
      });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
      const mine = await waitOn(revision, '1ms', first.token);
      expect(mine.body).toMatchObject({ statusCode: 429, message: expect.stringContaining('per caller') });

      // another organization on the same server waits as usual
      const strangerToken = await sx.foreignAdmin('capped-stranger');
      const theirs = await small.request('POST', '/api/v2/workspace', { token: strangerToken, body: { projectName: 'Theirs' } });
      const theirWrite = await small.request('POST', '/api/v3/secrets/raw/THEIRS', {
        token: strangerToken,
        body: { workspaceId: theirs.body.project.id, environment: 'dev', secretValue: 'v' },
      });
      const stranger = await waitOn(Number(theirWrite.headers['coffer-revision']), '1ms', strangerToken);
      expect(stranger.status).toBe(200);
      expect(stranger.body).toMatchObject({ reached: true });

      const synced = await small.request('POST', `/api/v1/operator/integrations/${operatorRecord.body.integration.id}/sync-result`, {
        token: sx.token,
        body: { isSynced: true, syncMessage: null, syncedRevision: revision },
      });
      expect(synced.status).toBe(200);
      for (const answer of await Promise.all(held)) expect(answer.body).toMatchObject({ reached: true });
    } finally {
      await small.close();
    }
  });
});
