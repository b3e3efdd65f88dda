import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DESTINATIONS_ANSWERED_MAX } from '../../src/integrations/place-destinations.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { playedOperator } from '../support/played-operator.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * GET /api/v1/workspace/:workspaceId/integrations/syncing: where one folder's secrets go. The operator is played
 * through the operator API (its records and sync results), as an operator in another cluster calls it.
 */
const app: TestApp = await startTestApp();
let fx: AccessFixture;
let operator: Awaited<ReturnType<typeof playedOperator>>;
const VALUE = 'destination-value-5e1c07';

beforeAll(async () => {
  fx = await accessFixture(app, 'where-project');
  operator = await playedOperator(app, fx, fx.projectId, 'cluster-w');
  for (const [environment, name, path] of [
    ['dev', 'app', '/'],
    ['dev', 'db', '/app'],
    ['dev', 'ops', '/'],
    ['staging', 'shared', '/'],
  ] as const) {
    await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment, name, path });
  }
  await fx.call('POST', '/api/v3/secrets/raw/DB_PASSWORD', { workspaceId: fx.projectId, environment: 'dev', secretPath: '/app', secretValue: VALUE });
});
afterAll(async () => app?.close());

const syncing = (query: Record<string, string>, token = fx.token, projectId = fx.projectId) =>
  app.request('GET', `/api/v1/workspace/${projectId}/integrations/syncing`, { token, query });

const names = (body: { integrations: { name: string }[] }) => body.integrations.map((integration) => integration.name).sort();

describe('where a folder is synced', () => {
  test('the Integrations reading the folder, as source, below a recursive source or through an import, with how far each got; none other, no value', async () => {
    const direct = await operator.record('direct', 'dev', '/app');
    const recursive = await operator.record('recursive', 'dev', '/');
    const imported = await operator.record('imported', 'staging', '/shared');
    const failing = await operator.record('failing', 'dev', '/app');
    await operator.record('elsewhere', 'dev', '/ops');
    await operator.syncResult(direct, { isSynced: true, syncMessage: null, syncedRevision: 3 }, [{ environment: 'dev', path: '/app' }]);
    await operator.syncResult(recursive, { isSynced: true, syncMessage: null, syncedRevision: 3 }, [{ environment: 'dev', path: '/', recursive: true }]);
    await operator.syncResult(imported, { isSynced: true, syncMessage: null, syncedRevision: 3 }, [
      { environment: 'staging', path: '/shared' },
      { environment: 'dev', path: '/app' },
    ]);
    await operator.syncResult(failing, { isSynced: false, syncMessage: 'Secret shop/failing-secret exists and is not managed by this Integration' });

    const answer = await syncing({ environment: 'dev', secretPath: '/app' });
    expect(answer.status).toBe(200);
    expect(answer.body.truncated).toBe(false);
    expect(names(answer.body)).toEqual(['direct', 'failing', 'imported', 'recursive']);
    const byName = Object.fromEntries(answer.body.integrations.map((integration: { name: string }) => [integration.name, integration]));
    expect(byName.direct).toEqual({
      id: direct,
      cluster: 'cluster-w',
      namespace: 'shop',
      name: 'direct',
      secretName: 'direct-secret',
      source: { environment: 'dev', secretPath: '/app' },
      through: 'source',
      isActive: true,
      isSynced: true,
      syncMessage: null,
      syncedRevision: 3,
      reloads: false,
      reloadedRevision: null,
      lastSyncTime: expect.any(String),
      keys: null,
    });
    expect(byName.recursive).toMatchObject({ through: 'recursive', source: { environment: 'dev', secretPath: '/' } });
    expect(byName.imported).toMatchObject({ through: 'import', source: { environment: 'staging', secretPath: '/shared' } });
    expect(byName.failing).toMatchObject({
      through: 'source',
      isSynced: false,
      syncedRevision: null,
      syncMessage: 'Secret shop/failing-secret exists and is not managed by this Integration',
    });
    expect(JSON.stringify(answer.body)).not.toContain(VALUE);

    // a folder below: the recursive one only; another environment: the one importing it
    expect(names((await syncing({ environment: 'dev', secretPath: '/ops' })).body)).toEqual(['elsewhere', 'recursive']);
    expect(names((await syncing({ environment: 'staging', secretPath: 'shared/' })).body)).toEqual(['imported']);
  });

  test('a folder that does not exist is answered as one nothing reads (200, empty); an unknown environment is 404; bad input 422; nothing changes', async () => {
    const before = await snapshotDatabase(app.database);
    const absent = await syncing({ environment: 'prod', secretPath: '/no/such/folder' });
    expect(absent.status).toBe(200);
    expect(absent.body).toEqual({ integrations: [], truncated: false });
    expect((await syncing({ environment: 'nope', secretPath: '/' })).status).toBe(404);
    const bad = await syncing({ environment: 'dev', secretPath: '/a\u0000b' });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ statusCode: 422, error: 'ValidationFailure' });
    expect((await syncing({ secretPath: '/' })).status).toBe(422);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('who may ask', () => {
  test('a role that may read /app/** but not /ops gets 403 for /ops whether or not the folder exists; one without integrations read gets 403', async () => {
    await fx.call('POST', `/api/v1/workspace/${fx.projectId}/roles`, {
      slug: 'where-app',
      name: 'Where app',
      permissions: [
        { subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } },
        { subject: 'integrations', action: ['read'] },
      ],
    });
    await fx.call('POST', `/api/v1/workspace/${fx.projectId}/roles`, {
      slug: 'where-no-integrations',
      name: 'Where without integrations',
      permissions: [{ subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } }],
    });
    const limited = await fx.identity('where-limited', 'member', 'where-app');
    const blind = await fx.identity('where-blind', 'member', 'where-no-integrations');

    expect((await syncing({ environment: 'dev', secretPath: '/app' }, limited.token)).status).toBe(200);
    const existing = await syncing({ environment: 'dev', secretPath: '/ops' }, limited.token);
    const missing = await syncing({ environment: 'dev', secretPath: '/opz' }, limited.token);
    expect(existing.status).toBe(403);
    expect(missing.status).toBe(403);
    expect(existing.body.message.replace('/ops', '/opz')).toBe(missing.body.message);
    expect((await syncing({ environment: 'dev', secretPath: '/app' }, blind.token)).status).toBe(403);
  });

  test('another organization, and a project the caller is not in, are 404 as an unknown project', async () => {
    const stranger = await fx.foreignAdmin('where-stranger');
    const outsider = await fx.identity('where-outsider', 'member');
    const unknown = await syncing({ environment: 'dev', secretPath: '/' }, fx.token, '6a4f1c2e-2b7d-4c1a-9f3e-5d8b7a6c4e21');
    expect(unknown.status).toBe(404);
    for (const token of [stranger, outsider.token]) {
      const answer = await syncing({ environment: 'dev', secretPath: '/' }, token);
      expect(answer.status).toBe(404);
      expect(answer.body.message.replaceAll(fx.projectId, '6a4f1c2e-2b7d-4c1a-9f3e-5d8b7a6c4e21')).toBe(unknown.body.message);
    }
  });
});

describe('cost', () => {
  test(`at most ${DESTINATIONS_ANSWERED_MAX} are answered; truncated says there were more`, async () => {
    await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', name: 'many' });
    for (let index = 0; index <= DESTINATIONS_ANSWERED_MAX; index++) await operator.record(`many-${index}`, 'dev', '/many');
    const answer = await syncing({ environment: 'dev', secretPath: '/many' });
    expect(answer.status).toBe(200);
    expect(answer.body.integrations).toHaveLength(DESTINATIONS_ANSWERED_MAX);
    expect(answer.body.truncated).toBe(true);
  }, 120_000);
});
