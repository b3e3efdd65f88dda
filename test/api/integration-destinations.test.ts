import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DESTINATIONS_ANSWERED_MAX } from '../../src/integrations/place-destinations.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * GET /api/v1/workspace/:workspaceId/integrations/syncing: where one folder's secrets go. The operator is played
 * through the operator API (its records and sync results), as an operator in another cluster calls it.
 */
const app: TestApp = await startTestApp();
let fx: AccessFixture;
let operator: { id: string; token: string };
let environmentIds: Record<string, string>;
const VALUE = 'destination-value-5e1c07';

beforeAll(async () => {
  fx = await accessFixture(app, 'where-project');
  operator = await fx.identity('where-operator', 'member', 'admin');
  await fx.bindToCluster(operator.id, 'cluster-w');
  const environments = (await fx.call('GET', `/api/v1/workspace/${fx.projectId}`)).workspace.environments as { id: string; slug: string }[];
  environmentIds = Object.fromEntries(environments.map((environment) => [environment.slug, environment.id]));
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

/** An Integration resource of cluster-w, as its operator keeps the record. */
async function record(name: string, environment: string, secretPath: string): Promise<string> {
  const response = await app.request('PUT', '/api/v1/operator/integrations', {
    token: operator.token,
    body: { cluster: 'cluster-w', managedBy: `shop/${name}`, projectId: fx.projectId, environment, secretPath, app: `${name}-secret`, owner: 'shop', targetEnvironment: 'shop' },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.integration.id as string;
}

async function syncResult(id: string, result: Record<string, unknown>, places?: { environment: string; path: string; recursive?: boolean }[]) {
  const body = {
    ...result,
    ...(places ? { places: places.map((place) => ({ environmentId: environmentIds[place.environment], path: place.path, recursive: place.recursive ?? false })) } : {}),
  };
  const response = await app.request('POST', `/api/v1/operator/integrations/${id}/sync-result`, { token: operator.token, body });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

const names = (body: { integrations: { name: string }[] }) => body.integrations.map((integration) => integration.name).sort();

describe('where a folder is synced', () => {
  test('the Integrations reading the folder, as source, below a recursive source or through an import, with how far each got; none other, no value', async () => {
    const direct = await record('direct', 'dev', '/app');
    const recursive = await record('recursive', 'dev', '/');
    const imported = await record('imported', 'staging', '/shared');
    const failing = await record('failing', 'dev', '/app');
    await record('elsewhere', 'dev', '/ops');
    await syncResult(direct, { isSynced: true, syncMessage: null, syncedRevision: 3 }, [{ environment: 'dev', path: '/app' }]);
    await syncResult(recursive, { isSynced: true, syncMessage: null, syncedRevision: 3 }, [{ environment: 'dev', path: '/', recursive: true }]);
    await syncResult(imported, { isSynced: true, syncMessage: null, syncedRevision: 3 }, [
      { environment: 'staging', path: '/shared' },
      { environment: 'dev', path: '/app' },
    ]);
    await syncResult(failing, { isSynced: false, syncMessage: 'Secret shop/failing-secret exists and is not managed by this Integration' });

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
    for (let index = 0; index <= DESTINATIONS_ANSWERED_MAX; index++) await record(`many-${index}`, 'dev', '/many');
    const answer = await syncing({ environment: 'dev', secretPath: '/many' });
    expect(answer.status).toBe(200);
    expect(answer.body.integrations).toHaveLength(DESTINATIONS_ANSWERED_MAX);
    expect(answer.body.truncated).toBe(true);
  }, 120_000);
});
