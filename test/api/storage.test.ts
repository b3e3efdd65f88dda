import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { listMigrations, migrate, pendingMigrations } from '../../src/db/migrate.ts';
import { buildProbeApp } from '../../src/http/probe-app.ts';
import { adminQuery, databaseUrl } from '../support/postgres-server.ts';
import { bootstrap, startTestApp, type TestApp } from '../support/test-app.ts';
import { Counter, Gauge, Registry } from 'prom-client';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

test('every shipped migration is applied, and applying again does nothing', async () => {
  expect(await pendingMigrations(app.database.db)).toEqual([]);
  expect(await migrate(app.database)).toEqual([]);
  const applied = await app.database.db.selectFrom('schemaMigrations').select('name').orderBy('name').execute();
  expect(applied.map((row) => row.name)).toEqual(listMigrations().map((migration) => migration.name));
});

test('replicas migrating an empty PostgreSQL database at once apply each migration exactly once', async () => {
  if (app.backend === 'pglite') {
    // One process owns an embedded database; a second migrate on it is a no-op.
    expect(await Promise.all([migrate(app.database), migrate(app.database)])).toEqual([[], []]);
    return;
  }
  const adminUrl = inject('postgresAdminUrl');
  const name = `${inject('postgresRunPrefix')}_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  const replicas = await Promise.all([1, 2, 3].map(() => openDatabase({ databaseUrl: databaseUrl(adminUrl, name), dataDir: '' })));
  try {
    const results = await Promise.all(replicas.map((replica) => migrate(replica)));
    expect(results.flat().sort()).toEqual(listMigrations().map((migration) => migration.name));
    const applied = await replicas[0]!.db.selectFrom('schemaMigrations').select('name').execute();
    expect(applied).toHaveLength(listMigrations().length);
  } finally {
    await Promise.all(replicas.map((replica) => replica.close()));
  }
});

test('a failing migration is rolled back and reported', async () => {
  const before = await app.database.db.selectFrom('schemaMigrations').select('name').execute();
  await expect(
    migrate(app.database, [...listMigrations(), { name: '9999_broken', sql: 'CREATE TABLE half_done (id int); SELECT no_such_column FROM half_done;' }]),
  ).rejects.toThrow(/migration 9999_broken failed/);
  expect(await app.database.db.selectFrom('schemaMigrations').select('name').execute()).toEqual(before);
  expect(await pendingMigrations(app.database.db, [{ name: '9999_broken', sql: '' }])).toEqual(['9999_broken']);
  // The table from the failed script does not exist: the whole migration rolled back.
  await expect(
    app.database.db
      .selectFrom('halfDone' as never)
      .selectAll()
      .execute(),
  ).rejects.toThrow();
});

test('readiness follows the database and the migrations', async () => {
  await bootstrap(app);
  const probes = buildProbeApp(app.services, new Registry());
  expect((await probes.inject({ url: '/healthz' })).statusCode).toBe(200);
  expect((await probes.inject({ url: '/readyz' })).json()).toEqual({ status: 'ready' });
  const last = listMigrations().at(-1)!.name;
  await app.database.db.deleteFrom('schemaMigrations').where('name', '=', last).execute();
  const notReady = await probes.inject({ url: '/readyz' });
  expect(notReady.statusCode).toBe(503);
  expect(notReady.json().reason).toContain(last);
  await app.database.db.insertInto('schemaMigrations').values({ name: last }).execute();
  expect((await probes.inject({ url: '/readyz' })).statusCode).toBe(200);
  const metrics = await probes.inject({ url: '/metrics' });
  expect(metrics.statusCode).toBe(200);
  await probes.close();
});

// A poller that needs a few counters (the scale bench, every half second) asks for them by name: the per-resource
// series of 10,000 Integrations are not rendered for it.
test('the probe port answers only the metrics name[] names when asked, and nothing for an unknown name', async () => {
  const registry = new Registry();
  new Counter({ name: 'coffer_probe_test_total', help: 'a counter', registers: [registry] }).inc(3);
  new Gauge({ name: 'coffer_probe_test_gauge', help: 'a gauge', labelNames: ['resource_name'], registers: [registry] }).set({ resource_name: 'a' }, 1);
  const probes = buildProbeApp(app.services, registry);
  try {
    const all = await probes.inject({ url: '/metrics' });
    expect(all.body).toContain('coffer_probe_test_total 3');
    expect(all.body).toContain('coffer_probe_test_gauge{resource_name="a"} 1');
    const one = await probes.inject({ url: '/metrics?name[]=coffer_probe_test_total' });
    expect(one.statusCode).toBe(200);
    expect(one.headers['content-type']).toBe(registry.contentType);
    expect(one.body).toBe('# HELP coffer_probe_test_total a counter\n# TYPE coffer_probe_test_total counter\ncoffer_probe_test_total 3\n');
    const both = await probes.inject({ url: '/metrics?name[]=coffer_probe_test_gauge&name[]=no_such_metric&name[]=coffer_probe_test_total' });
    expect(both.body.split('\n').filter((line) => !line.startsWith('#') && line !== '')).toEqual([
      'coffer_probe_test_gauge{resource_name="a"} 1',
      'coffer_probe_test_total 3',
    ]);
    const unknown = await probes.inject({ url: '/metrics?name[]=no_such_metric' });
    expect(unknown.statusCode).toBe(200);
    expect(unknown.body).toBe('');
  } finally {
    await probes.close();
  }
});

test('HTTP metrics count requests by route template and status', async () => {
  const { buildApiApp } = await import('../../src/http/app.ts');
  const pino = (await import('pino')).default;
  const { app: api, metrics } = await buildApiApp(app.services, { logger: pino({ level: 'silent' }), trustedProxies: [] });
  await api.inject({ url: '/api/v1/workspace/abc' });
  await api.inject({ url: '/api/status' });
  const text = await metrics.registry.metrics();
  expect(text).toContain('coffer_http_requests_total{method="GET",route="/api/v1/workspace/:workspaceId",status_code="401"} 1');
  expect(text).toContain('coffer_http_request_duration_seconds_bucket');
  await api.close();
});

test('upgrading to 0010 gives the Integration records kept before it their cluster: the one their operator recorded, else local', async () => {
  const database = await openDatabase({ dataDir: 'memory://' });
  try {
    const through = listMigrations().findIndex((migration) => migration.name === '0010_integration_cluster');
    await migrate(database, listMigrations().slice(0, through));
    await database.execScript(
      database.db,
      `INSERT INTO organizations (id, name, slug) VALUES ('00000000-0000-4000-8000-000000000001', 'Org', 'org');
       INSERT INTO projects (id, name, slug, org_id) VALUES ('00000000-0000-4000-8000-000000000002', 'P', 'p', '00000000-0000-4000-8000-000000000001');
       INSERT INTO project_environments (id, name, slug, position, project_id) VALUES ('00000000-0000-4000-8000-000000000003', 'Dev', 'dev', 1, '00000000-0000-4000-8000-000000000002');
       INSERT INTO integration_auths (id, project_id, integration) VALUES ('00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000002', 'kubernetes');
       INSERT INTO integrations (integration_auth_id, env_id, integration, managed_by, metadata) VALUES
         ('00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000003', 'kubernetes', 'shop/named', '{"cluster":"prod-eu"}'),
         ('00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000003', 'kubernetes', 'shop/older', '{}'),
         ('00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000003', 'github', NULL, '{"cluster":"ignored"}');`,
    );
    await migrate(database);
    const rows = await database.db.selectFrom('integrations').select(['managedBy', 'cluster']).orderBy('managedBy').execute();
    expect(rows).toEqual([
      { managedBy: 'shop/named', cluster: 'prod-eu' },
      { managedBy: 'shop/older', cluster: 'local' },
      { managedBy: null, cluster: null },
    ]);
  } finally {
    await database.close();
  }
});
