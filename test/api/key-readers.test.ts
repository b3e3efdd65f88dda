import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CARRIED_KEYS_MAX, KEY_READERS_MAX, KEYS_PER_READER_MAX } from '../../src/integrations/target-keys.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { playedOperator } from '../support/played-operator.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * What an Integration's Secret holds of a folder and which workloads read it: the operator's report with each sync
 * (`targetKeys` of POST /api/v1/operator/integrations/:id/sync-result), and its part for one folder or one key in
 * GET /api/v1/workspace/:workspaceId/integrations/syncing. The operator of cluster `cluster-k` is played through
 * the operator API (test/cluster/console-where.test.ts has the real one).
 */
const app: TestApp = await startTestApp();
let fx: AccessFixture;
let operator: Awaited<ReturnType<typeof playedOperator>>;
const VALUE = 'key-readers-value-2f7a90';
const ids: Record<string, string> = {};

const deployment = (name: string, keys: string[] | null, namespace = 'shop') => ({ kind: 'Deployment', namespace, name, keys });
const report = (carried: unknown[], readers: unknown[] | null, extra: Record<string, unknown> = {}) => ({
  carried,
  templated: 0,
  carriedTruncated: false,
  readers,
  readersTruncated: false,
  ...extra,
});
const synced = { isSynced: true, syncMessage: null };
const APP_REPORT = report(
  [
    { environment: 'dev', path: '/app', keys: [{ key: 'API_KEY', as: 'APP_API_KEY' }, { key: 'DB_PASSWORD' }] },
    { environment: 'dev', path: '/ops', keys: [{ key: 'OPS_TOKEN' }] },
  ],
  [deployment('api', ['DB_PASSWORD']), deployment('ops-job', ['OPS_TOKEN']), deployment('worker', null)],
);

const syncing = (query: Record<string, string>, token = fx.token) => app.request('GET', `/api/v1/workspace/${fx.projectId}/integrations/syncing`, { token, query });
const syncResult = (id: string, body: unknown, token = operator.token) => app.request('POST', `/api/v1/operator/integrations/${id}/sync-result`, { token, body });
const byName = (body: { integrations: { name: string }[] }) =>
  Object.fromEntries(body.integrations.map((integration) => [integration.name, integration])) as Record<string, any>;
const storedReport = async (id: string) =>
  (await app.database.db.selectFrom('integrationTargetKeys').select('report').where('integrationId', '=', id).executeTakeFirst())?.report;

beforeAll(async () => {
  fx = await accessFixture(app, 'keys-project');
  operator = await playedOperator(app, fx, fx.projectId, 'cluster-k');
  for (const name of ['app', 'ops', 'many']) await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name });
  for (const key of ['DB_PASSWORD', 'API_KEY', 'LOG_LEVEL']) {
    await fx.call('POST', `/api/v3/secrets/raw/${key}`, { workspaceId: fx.projectId, environment: 'dev', secretPath: '/app', secretValue: VALUE });
  }
  for (const name of ['app', 'other', 'templated', 'silent']) ids[name] = await operator.record(name, 'dev', '/app');
  const places = [
    { environment: 'dev', path: '/app' },
    { environment: 'dev', path: '/ops' },
  ];
  await operator.syncResult(ids.app!, { ...synced, targetKeys: APP_REPORT }, places);
  await operator.syncResult(ids.other!, { ...synced, targetKeys: report([{ environment: 'dev', path: '/app', keys: [{ key: 'LOG_LEVEL' }] }], []) });
  await operator.syncResult(ids.templated!, { ...synced, targetKeys: report([], [deployment('renderer', null)], { templated: 2 }) });
  await operator.syncResult(ids.silent!, synced);
});
afterAll(async () => app?.close());

describe('the keys of a folder and who reads them', () => {
  test("each Integration's Secret: the folder's keys it holds by their names there, and the workloads reading them; with key, only those that may hold it", async () => {
    const folder = await syncing({ environment: 'dev', secretPath: '/app' });
    expect(folder.status).toBe(200);
    const all = byName(folder.body);
    expect(all.app.keys).toEqual({
      carried: [
        { key: 'API_KEY', as: 'APP_API_KEY' },
        { key: 'DB_PASSWORD', as: 'DB_PASSWORD' },
      ],
      complete: true,
      workloads: [
        { kind: 'Deployment', name: 'api', keys: ['DB_PASSWORD'], everyKey: false },
        { kind: 'Deployment', name: 'worker', keys: ['API_KEY', 'DB_PASSWORD'], everyKey: true },
      ],
      workloadsTruncated: false,
    });
    expect(all.other.keys).toEqual({ carried: [{ key: 'LOG_LEVEL', as: 'LOG_LEVEL' }], complete: true, workloads: [], workloadsTruncated: false });
    // its template made keys from the secrets: what it holds of the folder cannot be told, and so nothing reads it by name
    expect(all.templated.keys).toEqual({ carried: [], complete: false, workloads: [], workloadsTruncated: false });
    expect(all.silent.keys).toBeNull();

    const apiKey = await syncing({ environment: 'dev', secretPath: '/app', key: 'API_KEY' });
    expect(Object.keys(byName(apiKey.body)).sort()).toEqual(['app', 'silent', 'templated']);
    expect(byName(apiKey.body).app.keys).toMatchObject({
      carried: [{ key: 'API_KEY', as: 'APP_API_KEY' }],
      workloads: [{ kind: 'Deployment', name: 'worker', keys: ['API_KEY'], everyKey: true }],
    });
    const dbPassword = byName((await syncing({ environment: 'dev', secretPath: '/app', key: 'DB_PASSWORD' })).body);
    expect(dbPassword.app.keys.workloads.map((workload: { name: string }) => workload.name)).toEqual(['api', 'worker']);
    expect(Object.keys(byName((await syncing({ environment: 'dev', secretPath: '/app', key: 'NO_SUCH_KEY' })).body)).sort()).toEqual(['silent', 'templated']);
    expect(JSON.stringify([folder.body, apiKey.body])).not.toContain(VALUE);
  });

  test('an Integration reading two folders names only the keys of the folder asked about, and only the workloads that read them', async () => {
    const ops = byName((await syncing({ environment: 'dev', secretPath: '/ops' })).body);
    expect(Object.keys(ops)).toEqual(['app']);
    expect(ops.app).toMatchObject({ through: 'import' });
    expect(ops.app.keys).toEqual({
      carried: [{ key: 'OPS_TOKEN', as: 'OPS_TOKEN' }],
      complete: true,
      workloads: [
        { kind: 'Deployment', name: 'ops-job', keys: ['OPS_TOKEN'], everyKey: false },
        { kind: 'Deployment', name: 'worker', keys: ['OPS_TOKEN'], everyKey: true },
      ],
      workloadsTruncated: false,
    });
    // a role that reads /app only learns nothing of /ops through the Integration's report
    await fx.call('POST', `/api/v1/workspace/${fx.projectId}/roles`, {
      slug: 'keys-app-only',
      name: 'Keys of app only',
      permissions: [
        { subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } },
        { subject: 'integrations', action: ['read'] },
      ],
    });
    const limited = await fx.identity('keys-limited', 'member', 'keys-app-only');
    const answer = await syncing({ environment: 'dev', secretPath: '/app' }, limited.token);
    expect(answer.status).toBe(200);
    expect(JSON.stringify(answer.body)).not.toMatch(/OPS_TOKEN|ops-job/);
    expect((await syncing({ environment: 'dev', secretPath: '/ops' }, limited.token)).status).toBe(403);
    expect((await syncing({ environment: 'dev', secretPath: '/ops', key: 'OPS_TOKEN' }, limited.token)).status).toBe(403);
  });

  test('a key of a folder read through an import of an import is never ruled out (the keys an import brings are attributed to it)', async () => {
    const nested = await syncing({ environment: 'dev', secretPath: '/many', key: 'ANY_KEY' });
    expect(nested.status).toBe(200);
    // /many is not among the app's places: nothing reads it; made one of them, the app may hold its keys
    expect(byName(nested.body).app).toBeUndefined();
    await operator.syncResult(ids.app!, { ...synced, targetKeys: APP_REPORT }, [
      { environment: 'dev', path: '/app' },
      { environment: 'dev', path: '/ops' },
      { environment: 'dev', path: '/many' },
    ]);
    const reached = byName((await syncing({ environment: 'dev', secretPath: '/many', key: 'ANY_KEY' })).body);
    expect(reached.app.keys).toMatchObject({ carried: [], complete: false });
  });
});

describe('who may report', () => {
  test("only the operator of the record's cluster reports its target's keys; another cluster's operator and a project admin are refused, nothing stored", async () => {
    const stranger = await playedOperator(app, fx, fx.projectId, 'cluster-stranger');
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const forged = { ...synced, targetKeys: report([], [deployment('evil', null)]) };
    expect((await syncResult(ids.app!, forged, stranger.token)).body).toMatchObject({ statusCode: 403, code: 'OperatorOnly' });
    expect((await syncResult(ids.app!, forged, fx.token)).body).toMatchObject({ statusCode: 403, code: 'ClusterNotBound' });
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);
    expect(await storedReport(ids.app!)).toEqual(APP_REPORT);
  });

  test('a workload of another namespace, or a key from a folder its operator may not read, is refused and nothing is stored', async () => {
    await fx.call('POST', `/api/v1/workspace/${fx.projectId}/roles`, {
      slug: 'keys-operator-app',
      name: 'Operator of app',
      permissions: [
        { subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } },
        { subject: 'integrations', action: ['read', 'create', 'edit', 'delete'] },
      ],
    });
    const narrow = await fx.identity('keys-narrow-operator', 'member', 'keys-operator-app');
    await fx.bindToCluster(narrow.id, 'cluster-narrow');
    const body = {
      cluster: 'cluster-narrow',
      managedBy: 'shop/narrow',
      projectId: fx.projectId,
      environment: 'dev',
      secretPath: '/app',
      app: 'narrow-secret',
      owner: 'shop',
      targetEnvironment: 'shop',
    };
    const kept = await app.request('PUT', '/api/v1/operator/integrations', { token: narrow.token, body });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    const id = kept.body.integration.id as string;
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const elsewhere = await syncResult(id, { ...synced, targetKeys: report([], [deployment('api', null, 'elsewhere')]) }, narrow.token);
    expect(elsewhere.body).toMatchObject({ statusCode: 403, code: 'WorkloadNotInNamespace' });
    expect(elsewhere.body.message).toContain('Deployment/elsewhere/api');
    for (const folder of [
      { environment: 'dev', path: '/ops' },
      { environment: 'nope', path: '/app' },
    ]) {
      const refused = await syncResult(id, { ...synced, targetKeys: report([{ ...folder, keys: [{ key: 'OPS_TOKEN' }] }], []) }, narrow.token);
      expect(refused.body).toMatchObject({ statusCode: 403, code: 'PlaceNotReadable' });
    }
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);
    const allowed = report([{ environment: 'dev', path: '/app', keys: [{ key: 'DB_PASSWORD' }] }], [deployment('api', ['DB_PASSWORD'])]);
    expect((await syncResult(id, { ...synced, targetKeys: allowed }, narrow.token)).status).toBe(200);
    expect(await storedReport(id)).toEqual(allowed);
  });
});

describe('what one report may hold', () => {
  const many = (count: number, name: (index: number) => string) => Array.from({ length: count }, (_, index) => name(index));

  test('past the caps, 422 and nothing stored; a report its operator cut is answered as incomplete, and the key asked about is not ruled out', async () => {
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const keys = many(CARRIED_KEYS_MAX + 1, (index) => ({ key: `KEY_${index}` }) as never);
    const tooMany = [
      report([{ environment: 'dev', path: '/app', keys }], []),
      report(
        [],
        many(KEY_READERS_MAX + 1, (index) => deployment(`api-${index}`, null) as never),
      ),
      report(
        [],
        [
          deployment(
            'api',
            many(KEYS_PER_READER_MAX + 1, (index) => `KEY_${index}`),
          ),
        ],
      ),
    ];
    for (const targetKeys of tooMany) {
      const refused = await syncResult(ids.other!, { ...synced, targetKeys });
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ statusCode: 422, error: 'ValidationFailure' });
    }
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);

    const cut = report([{ environment: 'dev', path: '/app', keys: keys.slice(0, CARRIED_KEYS_MAX) }], [], { carriedTruncated: true });
    expect((await syncResult(ids.other!, { ...synced, targetKeys: cut })).status).toBe(200);
    const answer = byName((await syncing({ environment: 'dev', secretPath: '/app', key: 'LOG_LEVEL' })).body);
    expect(answer.other.keys).toEqual({ carried: [], complete: false, workloads: [], workloadsTruncated: false });
  });

  test('a report carrying a value, or any field beyond names, is refused (422, nothing stored); null forgets the report, absent keeps it', async () => {
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const withValues = [
      report([{ environment: 'dev', path: '/app', keys: [{ key: 'DB_PASSWORD', value: VALUE }] }], []),
      report([], [{ ...deployment('api', ['DB_PASSWORD']), values: { DB_PASSWORD: VALUE } }]),
      { ...report([], []), data: { DB_PASSWORD: VALUE } },
    ];
    for (const targetKeys of withValues) expect((await syncResult(ids.silent!, { ...synced, targetKeys })).status).toBe(422);
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);

    const small = report([{ environment: 'dev', path: '/app', keys: [{ key: 'DB_PASSWORD' }] }], null);
    expect((await syncResult(ids.silent!, { ...synced, targetKeys: small })).status).toBe(200);
    expect((await syncResult(ids.silent!, synced)).status).toBe(200);
    expect(byName((await syncing({ environment: 'dev', secretPath: '/app' })).body).silent.keys).toEqual({
      carried: [{ key: 'DB_PASSWORD', as: 'DB_PASSWORD' }],
      complete: true,
      workloads: null,
      workloadsTruncated: false,
    });
    expect((await syncResult(ids.silent!, { ...synced, targetKeys: null })).status).toBe(200);
    expect(byName((await syncing({ environment: 'dev', secretPath: '/app' })).body).silent.keys).toBeNull();
    expect(await storedReport(ids.silent!)).toBeUndefined();
  });

  test('a bad key asked about is 422; an empty one asks for the whole folder; nothing changes', async () => {
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const bad = await syncing({ environment: 'dev', secretPath: '/app', key: 'A\u0000B' });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ statusCode: 422, error: 'ValidationFailure' });
    expect((await syncing({ environment: 'dev', secretPath: '/app', key: 'K'.repeat(501) })).status).toBe(422);
    const empty = await syncing({ environment: 'dev', secretPath: '/app', key: '' });
    expect(empty.status).toBe(200);
    expect(Object.keys(byName(empty.body))).toContain('other');
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);
  });
});
