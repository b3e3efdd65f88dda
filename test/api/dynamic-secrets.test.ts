import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ManualClock } from '../support/manual-clock.ts';
import { adminQuery } from '../support/postgres-server.ts';
import { bootstrap, currentBackend, startReplica, startTestApp, type TestApp } from '../support/test-app.ts';

// The target: a database of its own on the local PostgreSQL server (trust auth), dropped afterwards with every role a lease made.
const SERVER = 'postgres://postgres@127.0.0.1:5432/postgres';
const targetDb = `coffer_dyn_${randomBytes(5).toString('hex')}`;
const adminPassword = `admin-${randomBytes(12).toString('hex')}`;
const usernames = new Set<string>();
const clock = new ManualClock();
const start = Date.now();

let app: TestApp;
let token: string;
let projectSlug: string;
let projectId: string;

const place = () => ({ projectSlug, environmentSlug: 'dev', path: '/' });
const inputs = () => ({
  client: 'postgres',
  host: '127.0.0.1',
  port: 5432,
  database: targetDb,
  username: 'postgres',
  password: adminPassword,
  creationStatement: `CREATE ROLE "{{username}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';`,
  revocationStatement: 'DROP ROLE IF EXISTS "{{username}}";',
  renewStatement: `ALTER ROLE "{{username}}" VALID UNTIL '{{expiration}}';`,
});

beforeAll(async () => {
  await adminQuery(SERVER, `CREATE DATABASE ${targetDb}`);
  app = await startTestApp({ signIn: { clock: () => start + clock.now() }, leaseLimits: { perProject: 100, perCaller: 6 } });
  ({ token } = await bootstrap(app));
  const project = (await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Dynamic' } })).body.project;
  projectSlug = project.slug;
  projectId = project.id;
  const created = await app.request('POST', '/api/v1/dynamic-secrets', {
    token,
    body: { ...place(), name: 'pg', provider: { type: 'sql-database', inputs: inputs() }, defaultTTL: '1h', maxTTL: '2h' },
  });
  expect(created.status).toBe(200);
});

afterAll(async () => {
  await app?.close();
  for (const name of usernames) await adminQuery(SERVER, `DROP ROLE IF EXISTS "${name}"`);
  await adminQuery(SERVER, `DROP DATABASE IF EXISTS ${targetDb}`);
});

/** Whether `username` can open a session on the target database right now. */
async function logsIn(username: string, password: string): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port: 5432, database: targetDb, user: username, password });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function roleExists(username: string): Promise<boolean> {
  return (await adminQuery(SERVER, `SELECT 1 FROM pg_roles WHERE rolname = '${username}'`)).rowCount === 1;
}

async function lease(ttl?: string) {
  const response = await app.request('POST', '/api/v1/dynamic-secrets/leases', { token, body: { ...place(), dynamicSecretName: 'pg', ...(ttl ? { ttl } : {}) } });
  if (response.status === 200) usernames.add(response.body.data.DB_USERNAME);
  return response;
}

describe('dynamic secret configuration', () => {
  test('is shown without the admin password, stored sealed, and the password reaches no log or audit entry', async () => {
    const got = await app.request('GET', '/api/v1/dynamic-secrets/pg', { token, query: place() });
    expect(got.status).toBe(200);
    expect(got.body.dynamicSecret).toMatchObject({ name: 'pg', type: 'sql-database', defaultTTL: '1h', maxTTL: '2h', version: 1 });
    expect(got.body.dynamicSecret.inputs).toMatchObject({ host: '127.0.0.1', database: targetDb, username: 'postgres' });
    expect(JSON.stringify(got.body)).not.toContain(adminPassword);
    const row = await app.database.db.selectFrom('dynamicSecrets').selectAll().executeTakeFirstOrThrow();
    expect(row.encryptedInputs.toString('latin1')).not.toContain(adminPassword);
    const audit = JSON.stringify(await app.database.db.selectFrom('auditLogs').select('eventMetadata').execute());
    expect(audit).not.toContain(adminPassword);
    expect(app.logs.join('\n')).not.toContain(adminPassword);
    const listed = await app.request('GET', '/api/v1/dynamic-secrets', { token, query: place() });
    expect(listed.body.dynamicSecrets.map((item: any) => item.name)).toEqual(['pg']);
  });

  test('a default TTL over the max TTL is a 400 and nothing is stored', async () => {
    const response = await app.request('POST', '/api/v1/dynamic-secrets', {
      token,
      body: { ...place(), name: 'too-long', provider: { type: 'sql-database', inputs: inputs() }, defaultTTL: '3h', maxTTL: '2h' },
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toBe('Default TTL cannot be larger than max TTL');
    expect(await app.database.db.selectFrom('dynamicSecrets').select('name').execute()).toEqual([{ name: 'pg' }]);
  });

  test('an unknown dynamic secret is a 404 and an unknown project the project 404', async () => {
    expect((await app.request('GET', '/api/v1/dynamic-secrets/nope', { token, query: place() })).status).toBe(404);
    const other = await app.request('GET', '/api/v1/dynamic-secrets', { token, query: { ...place(), projectSlug: 'no-such-project' } });
    expect(other.status).toBe(404);
    expect(other.body.message).toBe('Project not found');
  });
});

describe('leases', () => {
  test('a lease role logs in until it is revoked on demand, and not after', async () => {
    const created = await lease();
    expect(created.status).toBe(200);
    const { DB_USERNAME: username, DB_PASSWORD: password } = created.body.data;
    expect(created.body.lease).toMatchObject({ externalEntityId: username, version: 1, dynamicSecretId: created.body.dynamicSecret.id });
    expect(new Date(created.body.lease.expireAt).getTime()).toBe(start + clock.now() + 3_600_000);
    expect(await logsIn(username, password)).toBe(true);

    const listed = await app.request('GET', '/api/v1/dynamic-secrets/pg/leases', { token, query: place() });
    expect(listed.body.leases.map((item: any) => item.id)).toContain(created.body.lease.id);
    const got = await app.request('GET', `/api/v1/dynamic-secrets/leases/${created.body.lease.id}`, { token, query: place() });
    expect(got.body.lease).toMatchObject({ id: created.body.lease.id, dynamicSecret: { name: 'pg' } });
    expect(JSON.stringify(got.body)).not.toContain(password);

    const revoked = await app.request('DELETE', `/api/v1/dynamic-secrets/leases/${created.body.lease.id}`, { token, body: place() });
    expect(revoked.status).toBe(200);
    expect(await logsIn(username, password)).toBe(false);
    expect(await roleExists(username)).toBe(false);
    const gone = await app.request('GET', `/api/v1/dynamic-secrets/leases/${created.body.lease.id}`, { token, query: place() });
    expect(gone).toMatchObject({ status: 404, body: { message: `Dynamic secret lease with ID '${created.body.lease.id}' not found` } });
    const audit = JSON.stringify(await app.database.db.selectFrom('auditLogs').select('eventMetadata').execute());
    expect(audit).not.toContain(password);
  });

  test('renewal extends the expiry within the max TTL; past it is a 400 and the lease is unchanged', async () => {
    const created = await lease();
    const id = created.body.lease.id;
    const renewed = await app.request('POST', `/api/v1/dynamic-secrets/leases/${id}/renew`, { token, body: { ...place(), ttl: '30m' } });
    expect(renewed.status).toBe(200);
    expect(renewed.body.lease.version).toBe(2);
    expect(new Date(renewed.body.lease.expireAt).getTime()).toBe(new Date(created.body.lease.expireAt).getTime() + 1_800_000);
    const [role] = (await adminQuery(SERVER, `SELECT rolvaliduntil FROM pg_roles WHERE rolname = '${created.body.data.DB_USERNAME}'`)).rows;
    expect(new Date(role.rolvaliduntil).getTime()).toBe(new Date(renewed.body.lease.expireAt).getTime() - (new Date(renewed.body.lease.expireAt).getTime() % 1000));

    const over = await app.request('POST', `/api/v1/dynamic-secrets/leases/${id}/renew`, { token, body: { ...place(), ttl: '1h' } });
    expect(over.status).toBe(400);
    // Infisical's operator leases anew on "TTL cannot be larger than max ttl" in a renewal's error (case-sensitive)
    expect(over.body.message).toBe('TTL cannot be larger than max ttl: a lease ends by its start plus the max TTL, renewals included');
    const row = await app.database.db.selectFrom('dynamicSecretLeases').select(['version', 'expireAt']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.version).toBe(2);
    expect(new Date(row.expireAt).toISOString()).toBe(renewed.body.lease.expireAt);
  });

  test('a TTL over the max is a 400 and creates no role', async () => {
    const rolesBefore = (await adminQuery(SERVER, `SELECT count(*)::int AS n FROM pg_roles WHERE rolname LIKE 'coffer\\_%'`)).rows[0].n;
    const response = await lease('3h');
    expect(response.status).toBe(400);
    expect(response.body.message).toBe('TTL cannot be larger than max TTL');
    expect((await adminQuery(SERVER, `SELECT count(*)::int AS n FROM pg_roles WHERE rolname LIKE 'coffer\\_%'`)).rows[0].n).toBe(rolesBefore);
  });

  test('the expiry job revokes a lease once its expiry passes, and leaves the others', async () => {
    const short = await lease('10m');
    const long = await lease('1h');
    const shortUser = short.body.data.DB_USERNAME;
    expect(await app.services.dynamicSecretLeases.revokeExpired()).toBe(0);
    expect(await logsIn(shortUser, short.body.data.DB_PASSWORD)).toBe(true);

    clock.advance(10 * 60_000 + 1000);
    expect(await app.services.dynamicSecretLeases.revokeExpired()).toBeGreaterThanOrEqual(1);
    expect(await logsIn(shortUser, short.body.data.DB_PASSWORD)).toBe(false);
    expect(await roleExists(shortUser)).toBe(false);
    expect(await logsIn(long.body.data.DB_USERNAME, long.body.data.DB_PASSWORD)).toBe(true);
    const leases = await app.database.db.selectFrom('dynamicSecretLeases').select('id').execute();
    expect(leases.map((row) => row.id)).not.toContain(short.body.lease.id);
    expect(leases.map((row) => row.id)).toContain(long.body.lease.id);
  });

  // Every replica runs the expiry job: a due lease is claimed by one of them (SKIP LOCKED, then a claim time), so two
  // passes at once revoke each lease exactly once, one audit entry each.
  test.skipIf(currentBackend() !== 'postgres')('two replicas expiring at once revoke each due lease once', async () => {
    const replica = await startReplica(app);
    try {
      const due = [await lease('10m'), await lease('10m')];
      const ids = due.map((response) => response.body.lease.id as string);
      clock.advance(10 * 60_000 + 1000);
      const [here, there] = await Promise.all([app.services.dynamicSecretLeases.revokeExpired(), replica.services.dynamicSecretLeases.revokeExpired()]);
      expect(here + there).toBe(2);
      for (const response of due) expect(await roleExists(response.body.data.DB_USERNAME)).toBe(false);
      const audited = await app.database.db.selectFrom('auditLogs').select('eventMetadata').where('eventType', '=', 'revoke-dynamic-secret-lease').execute();
      for (const id of ids) expect(audited.filter((row) => JSON.stringify(row.eventMetadata).includes(id))).toHaveLength(1);
    } finally {
      await replica.close();
    }
  });

  test("the Go SDK's request shapes are accepted: an empty ttl is the default, extra fields are ignored", async () => {
    // CreateDynamicSecretLeaseV1Request and RenewDynamicSecretLeaseV1Request (github:Infisical/go-sdk) send every field
    const created = await app.request('POST', '/api/v1/dynamic-secrets/leases', {
      token,
      body: { dynamicSecretName: 'pg', projectSlug, ttl: '', path: '/', environmentSlug: 'dev' },
    });
    expect(created.status).toBe(200);
    usernames.add(created.body.data.DB_USERNAME);
    expect(new Date(created.body.lease.expireAt).getTime()).toBe(start + clock.now() + 3_600_000);
    const id = created.body.lease.id;
    const renewed = await app.request('POST', `/api/v1/dynamic-secrets/leases/${id}/renew`, {
      token,
      body: { leaseId: id, ttl: '', projectSlug, path: '/', environmentSlug: 'dev', isForced: false },
    });
    expect(renewed.status).toBe(200);
    expect(new Date(renewed.body.lease.expireAt).getTime()).toBe(new Date(created.body.lease.expireAt).getTime() + 3_600_000);
    const revoked = await app.request('DELETE', `/api/v1/dynamic-secrets/leases/${id}`, {
      token,
      body: { leaseId: id, projectSlug, path: '/', environmentSlug: 'dev', isForced: false },
    });
    expect(revoked.status).toBe(200);
  });

  test("a lease asked for through another folder is the unknown lease's 404, and stays", async () => {
    const created = await lease();
    const id = created.body.lease.id;
    expect((await app.request('POST', '/api/v1/folders', { token, body: { workspaceId: projectId, environment: 'dev', path: '/', name: 'elsewhere' } })).status).toBe(
      200,
    );
    const elsewhere = { ...place(), path: '/elsewhere' };
    const notFound = { status: 404, body: { message: `Dynamic secret lease with ID '${id}' not found` } };
    expect(await app.request('GET', `/api/v1/dynamic-secrets/leases/${id}`, { token, query: elsewhere })).toMatchObject(notFound);
    expect(await app.request('POST', `/api/v1/dynamic-secrets/leases/${id}/renew`, { token, body: elsewhere })).toMatchObject(notFound);
    expect(await app.request('DELETE', `/api/v1/dynamic-secrets/leases/${id}`, { token, body: elsewhere })).toMatchObject(notFound);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(await app.request('GET', `/api/v1/dynamic-secrets/leases/${unknown}`, { token, query: place() })).toMatchObject({
      status: 404,
      body: { message: `Dynamic secret lease with ID '${unknown}' not found` },
    });
    expect(await logsIn(created.body.data.DB_USERNAME, created.body.data.DB_PASSWORD)).toBe(true);
    const row = await app.database.db.selectFrom('dynamicSecretLeases').select(['version', 'expireAt']).where('id', '=', id).executeTakeFirstOrThrow();
    expect({ version: row.version, expireAt: new Date(row.expireAt).toISOString() }).toEqual({ version: 1, expireAt: created.body.lease.expireAt });
    expect((await app.request('DELETE', `/api/v1/dynamic-secrets/leases/${id}`, { token, body: place() })).status).toBe(200);
  });

  test('leases held at once are capped per caller: the next is a 429 and creates no role', async () => {
    let status = 200;
    while (status === 200) status = (await lease()).status;
    expect(status).toBe(429);
    expect(await app.database.db.selectFrom('dynamicSecretLeases').select('id').execute()).toHaveLength(6);
  });

  test('deleting the dynamic secret revokes every lease role', async () => {
    const held = await app.database.db.selectFrom('dynamicSecretLeases').select('externalEntityId').execute();
    expect(held.length).toBeGreaterThan(0);
    const response = await app.request('DELETE', '/api/v1/dynamic-secrets/pg', { token, body: place() });
    expect(response.status).toBe(200);
    for (const { externalEntityId } of held) expect(await roleExists(externalEntityId)).toBe(false);
    expect(await app.database.db.selectFrom('dynamicSecretLeases').select('id').execute()).toEqual([]);
  });
});
