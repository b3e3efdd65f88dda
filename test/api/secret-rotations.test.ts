import { createPublicKey, createPrivateKey, sign, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ManualClock } from '../support/manual-clock.ts';
import { type RotatedPostgres, startRotatedPostgres } from '../support/rotated-postgres.ts';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';
import { issueTestToken } from '../support/access-fixture.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

let rotated: RotatedPostgres;
let server: RotatedPostgres['server'];
let roles: RotatedPostgres['roles'];
let app: TestApp;
let token: string;
let orgId: string;
let projectId: string;
let connectionId: string;
const clock = new ManualClock();

const canLogIn = (user: string, password: string) => rotated.canLogIn(user, password);

async function secretValue(key: string, secretPath = '/'): Promise<string> {
  const response = await app.request('GET', `/api/v3/secrets/raw/${key}`, { token, query: { workspaceId: projectId, environment: 'dev', secretPath } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.secret.secretValue as string;
}

const serverCredentials = (password?: string) => rotated.connectionCredentials(password);
const postgresBase = '/api/v2/secret-rotations/postgres-credentials';
const generatedBase = '/api/v2/secret-rotations/generated-secret';

function createPostgresRotation(name: string, overrides: Record<string, unknown> = {}) {
  return app.request('POST', postgresBase, {
    token,
    body: {
      name,
      projectId,
      connectionId,
      environment: 'dev',
      secretPath: '/',
      rotationInterval: 1,
      rotateAtUtc: { hours: 3, minutes: 30 },
      parameters: { username1: roles.first, username2: roles.second },
      secretsMapping: { username: `${name.toUpperCase().replaceAll('-', '_')}_USER`, password: `${name.toUpperCase().replaceAll('-', '_')}_PASSWORD` },
      ...overrides,
    },
  });
}

async function auditRows(type: string) {
  return app.database.db.selectFrom('auditLogs').select(['eventType', 'eventMetadata', 'actor']).where('eventType', '=', type).execute();
}

beforeAll(async () => {
  rotated = await startRotatedPostgres();
  ({ server, roles } = rotated);
  clock.advance(Date.UTC(2026, 0, 10, 12, 0));
  app = await startTestApp({ signIn: { clock: () => clock.now() } });
  ({ token, orgId } = await bootstrap(app));
  projectId = (await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Rotations' } })).body.project.id;
}, 120_000);

afterAll(async () => {
  await app?.close();
  await server?.destroy();
});

describe('PostgreSQL connections', () => {
  test('a connection is checked by signing in, stored encrypted, and answered without its password', async () => {
    const response = await app.request('POST', '/api/v1/app-connections/postgres', {
      token,
      body: { name: 'orders-db', projectId, method: 'username-and-password', credentials: serverCredentials() },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    connectionId = response.body.appConnection.id;
    expect(response.body.appConnection).toEqual({
      id: expect.any(String),
      name: 'orders-db',
      description: null,
      version: 1,
      projectId,
      app: 'postgres',
      method: 'username-and-password',
      credentials: {
        host: '127.0.0.1',
        port: server.port,
        database: 'postgres',
        username: roles.rotator,
        sslEnabled: false,
        sslRejectUnauthorized: true,
        sslCertificate: null,
      },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const row = await app.database.db.selectFrom('appConnections').select('encryptedCredentials').where('id', '=', connectionId).executeTakeFirstOrThrow();
    expect(row.encryptedCredentials.includes(Buffer.from(rotated.rotatorPassword))).toBe(false);
    const byName = await app.request('GET', '/api/v1/app-connections/postgres/connection-name/orders-db', { token, query: { projectId } });
    expect(byName.body.appConnection.id).toBe(connectionId);
    expect(JSON.stringify(byName.body)).not.toContain(rotated.rotatorPassword);
  });

  test('credentials the server refuses: 400 with a fixed sentence, nothing stored', async () => {
    const before = await snapshotDatabase(app.database);
    const response = await app.request('POST', '/api/v1/app-connections/postgres', {
      token,
      body: { name: 'wrong-db', projectId, credentials: serverCredentials('not-the-password') },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, message: 'The PostgreSQL server rejected the connection credentials' });
    expect(JSON.stringify(response.body)).not.toContain('not-the-password');
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('PostgreSQL credential rotation', () => {
  let rotationId: string;

  test('creating a rotation issues the first role a password and writes username and password', async () => {
    const response = await createPostgresRotation('orders');
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const rotation = response.body.secretRotation;
    rotationId = rotation.id;
    expect(rotation).toMatchObject({
      name: 'orders',
      type: 'postgres-credentials',
      projectId,
      connectionId,
      connection: { app: 'postgres', name: 'orders-db', id: connectionId },
      environment: { slug: 'dev' },
      folder: { path: '/' },
      activeIndex: 0,
      rotationStatus: 'success',
      lastRotationMessage: null,
      isAutoRotationEnabled: true,
      rotationInterval: 1,
      rotateAtUtc: { hours: 3, minutes: 30 },
      nextRotationAt: '2026-01-11T03:30:00.000Z',
    });
    expect(await secretValue('ORDERS_USER')).toBe(roles.first);
    expect(await canLogIn(roles.first, await secretValue('ORDERS_PASSWORD'))).toBe(true);
  });

  test('each run sets the role not in use; the previous password is valid until the next run retires it', async () => {
    const firstPassword = await secretValue('ORDERS_PASSWORD');
    const rotated = await app.request('POST', `${postgresBase}/${rotationId}/rotate-secrets`, { token });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body.secretRotation).toMatchObject({ activeIndex: 1, rotationStatus: 'success', isLastRotationManual: true });
    const secondPassword = await secretValue('ORDERS_PASSWORD');
    expect(await secretValue('ORDERS_USER')).toBe(roles.second);
    expect(await canLogIn(roles.second, secondPassword)).toBe(true);
    expect(await canLogIn(roles.first, firstPassword)).toBe(true);

    const again = await app.request('POST', `${postgresBase}/${rotationId}/rotate-secrets`, { token });
    expect(again.body.secretRotation.activeIndex).toBe(0);
    expect(await canLogIn(roles.first, await secretValue('ORDERS_PASSWORD'))).toBe(true);
    expect(await canLogIn(roles.first, firstPassword)).toBe(false);
    expect(await canLogIn(roles.second, secondPassword)).toBe(true);

    const credentials = await app.request('GET', `${postgresBase}/${rotationId}/generated-credentials`, { token });
    expect(credentials.body).toEqual({
      generatedCredentials: [
        { username: roles.first, password: await secretValue('ORDERS_PASSWORD') },
        { username: roles.second, password: secondPassword },
      ],
      activeIndex: 0,
      rotationId,
      type: 'postgres-credentials',
    });
  });

  test('an application that connects with whatever its secrets hold never fails across 20 rotations', async () => {
    for (let run = 0; run < 20; run++) {
      const user = await secretValue('ORDERS_USER');
      const password = await secretValue('ORDERS_PASSWORD');
      expect((await app.request('POST', `${postgresBase}/${rotationId}/rotate-secrets`, { token })).status).toBe(200);
      // what the application read before the run still signs in after it
      expect(await canLogIn(user, password)).toBe(true);
      expect(await canLogIn(await secretValue('ORDERS_USER'), await secretValue('ORDERS_PASSWORD'))).toBe(true);
    }
  });

  test('the schedule: nothing is due before the time of day, one run when it comes, the next one a day later', async () => {
    const before = (await app.request('GET', `${postgresBase}/${rotationId}`, { token })).body.secretRotation;
    expect(await app.services.rotations.runDue()).toBe(0);
    clock.advance(Date.parse(before.nextRotationAt) - clock.now() - 1);
    expect(await app.services.rotations.runDue()).toBe(0);
    clock.advance(1);
    expect(await app.services.rotations.runDue()).toBe(1);
    const after = (await app.request('GET', `${postgresBase}/${rotationId}`, { token })).body.secretRotation;
    expect(after).toMatchObject({ activeIndex: 1 - before.activeIndex, isLastRotationManual: false, rotationStatus: 'success' });
    expect(Date.parse(after.nextRotationAt) - Date.parse(before.nextRotationAt)).toBe(DAY_MS);
    expect(await canLogIn(await secretValue('ORDERS_USER'), await secretValue('ORDERS_PASSWORD'))).toBe(true);
    const completed = await auditRows('secret-rotation-completed');
    expect(completed.at(-1)).toMatchObject({ actor: 'unknownUser' });
  });

  test('a run that cannot reach the server fails with a clear reason, keeps both credentials, and the next run sets the same password', async () => {
    const user = await secretValue('ORDERS_USER');
    const password = await secretValue('ORDERS_PASSWORD');
    await server.stop('fast');
    let failed;
    try {
      failed = await app.request('POST', `${postgresBase}/${rotationId}/rotate-secrets`, { token });
    } finally {
      await server.start();
    }
    expect(failed.status).toBe(400);
    expect(failed.body.message).toBe('The PostgreSQL server refused the connection');
    const state = (await app.request('GET', `${postgresBase}/${rotationId}`, { token })).body.secretRotation;
    expect(state).toMatchObject({ rotationStatus: 'failed', lastRotationMessage: 'The PostgreSQL server refused the connection' });
    expect(await secretValue('ORDERS_PASSWORD')).toBe(password);
    expect(await canLogIn(user, password)).toBe(true);
    const failures = await auditRows('secret-rotation-failed');
    expect(failures.at(-1)?.eventMetadata).toMatchObject({ rotationId, reason: 'The PostgreSQL server refused the connection' });

    const retried = await app.request('POST', `${postgresBase}/${rotationId}/rotate-secrets`, { token });
    expect(retried.status).toBe(200);
    expect(retried.body.secretRotation).toMatchObject({ rotationStatus: 'success', lastRotationMessage: null });
    expect(await canLogIn(await secretValue('ORDERS_USER'), await secretValue('ORDERS_PASSWORD'))).toBe(true);
    expect(await canLogIn(user, password)).toBe(true);
  });

  test('a run left half done by a replica that died is resumed by the next scheduler pass once its claim lapses', async () => {
    const user = await secretValue('ORDERS_USER');
    const password = await secretValue('ORDERS_PASSWORD');
    const row = await app.database.db.selectFrom('secretRotations').selectAll().where('id', '=', rotationId).executeTakeFirstOrThrow();
    // the state a run leaves after its claim and before publishing: pending value recorded, claim held
    await server.stop('fast');
    await app.request('POST', `${postgresBase}/${rotationId}/rotate-secrets`, { token });
    await server.start();
    await app.database.db
      .updateTable('secretRotations')
      .set({ runClaimedUntil: new Date(clock.now() + 60_000), rotationStatus: 'rotating' })
      .where('id', '=', rotationId)
      .execute();
    expect(await app.services.rotations.runDue()).toBe(0);
    expect((await app.request('POST', `${postgresBase}/${rotationId}/rotate-secrets`, { token })).status).toBe(409);
    clock.advance(60_001);
    expect(await app.services.rotations.runDue()).toBe(1);
    const after = (await app.request('GET', `${postgresBase}/${rotationId}`, { token })).body.secretRotation;
    expect(after).toMatchObject({ activeIndex: 1 - row.activeIndex, rotationStatus: 'success' });
    expect(await canLogIn(await secretValue('ORDERS_USER'), await secretValue('ORDERS_PASSWORD'))).toBe(true);
    expect(await canLogIn(user, password)).toBe(true);
  });

  test('bad input: 4xx with the error body, nothing changed', async () => {
    const before = await snapshotDatabase(app.database);
    const cases: [Record<string, unknown>, number][] = [
      [{ parameters: { username1: roles.first, username2: roles.first } }, 400],
      [{ parameters: { username1: roles.first, username2: `missing_${roles.rotator}` } }, 400],
      [{ connectionId: '9d0f7c3e-1111-4111-8111-111111111111' }, 404],
      [{ rotationInterval: 0 }, 422],
      [{ rotateAtUtc: { hours: 24, minutes: 0 } }, 422],
      [{ environment: 'nowhere' }, 404],
    ];
    for (const [overrides, status] of cases) {
      const response = await createPostgresRotation('bad', overrides);
      expect(response.status, JSON.stringify(overrides)).toBe(status);
      expect(response.body).toMatchObject({ statusCode: status, reqId: expect.any(String) });
    }
    const duplicate = await createPostgresRotation('orders');
    expect(duplicate.status).toBe(400);
    expect((await app.request('GET', `${postgresBase}/9d0f7c3e-1111-4111-8111-111111111111`, { token })).status).toBe(404);
    expect((await app.request('GET', `${generatedBase}/${rotationId}`, { token })).status).toBe(404);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('a connection a rotation uses cannot be deleted; deleting the rotation keeps the secrets', async () => {
    expect((await app.request('DELETE', `/api/v1/app-connections/postgres/${connectionId}`, { token })).status).toBe(400);
    const deleted = await app.request('DELETE', `${postgresBase}/${rotationId}`, { token });
    expect(deleted.status).toBe(200);
    expect(await secretValue('ORDERS_USER')).toMatch(/^app_/);
    expect((await app.request('GET', `${postgresBase}/${rotationId}`, { token })).status).toBe(404);
  });

  test('no password, connection password or generated value in logs or audit metadata', async () => {
    const audit = JSON.stringify(await app.database.db.selectFrom('auditLogs').select(['eventMetadata', 'actorMetadata']).execute());
    const logs = app.logs.join('\n');
    const rows = await app.database.db.selectFrom('secretVersions').select(['secretId']).execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const value of [rotated.rotatorPassword, rotated.superuserPassword, await secretValue('ORDERS_PASSWORD')]) {
      expect(audit).not.toContain(value);
      expect(logs).not.toContain(value);
    }
    expect(await auditRows('secret-rotation-completed')).not.toHaveLength(0);
  });
});

describe('consumer-aware retirement', () => {
  let rotationId: string;
  let integrationId: string;
  const rotate = () => app.request('POST', `${postgresBase}/${rotationId}/rotate-secrets`, { token });
  const state = async () => (await app.request('GET', `${postgresBase}/${rotationId}`, { token })).body.secretRotation;
  const latestRevision = async () =>
    Number(
      (
        await app.database.db
          .selectFrom('changeLog')
          .select((eb) => eb.fn.max('revision').as('revision'))
          .executeTakeFirstOrThrow()
      ).revision,
    );
  /** Plays the operator of cluster `local`: the Integration shop/billing-db synced (and its workloads reloaded) up to `revision`. */
  const synced = (revision: number) => app.services.integrations.recordSyncResult(integrationId, { isSynced: true, syncMessage: null, syncedRevision: revision });
  const reloaded = (revision: number, rolling: { kind: 'Deployment'; namespace: string; name: string }[] = []) =>
    app.services.integrations.recordReloadResult(integrationId, { reloadedRevision: revision, rolling });

  beforeAll(async () => {
    const created = await createPostgresRotation('billing', { consumerWaitMinutes: 5 });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    rotationId = created.body.secretRotation.id;
    const origin = { ip: '127.0.0.1', userAgent: 'rotation test', userAgentType: 'other' as const };
    const operator = { ...(await app.services.auth.authenticate(`Bearer ${token}`, origin)), cluster: 'local' };
    const integration = await app.services.integrations.upsertManaged(operator, {
      managedBy: 'shop/billing-db',
      projectId,
      environment: 'dev',
      secretPath: '/',
      app: 'billing-db',
      owner: 'shop',
      targetEnvironment: 'shop',
      reloads: true,
    });
    integrationId = integration.id;
    await synced(await latestRevision());
    await reloaded(await latestRevision());
  });

  test('the next run waits until every Integration reading the keys synced and reloaded the last one; the previous credential stays valid meanwhile', async () => {
    expect((await rotate()).status).toBe(200);
    const previous = (await app.request('GET', `${postgresBase}/${rotationId}/generated-credentials`, { token })).body.generatedCredentials[0];
    const refused = await rotate();
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'SecretRotationWaiting', message: 'Waiting for consumers to take the current credential: local/shop/billing-db' });
    expect(await state()).toMatchObject({ rotationStatus: 'waiting', waitingFor: ['local/shop/billing-db'], waitingSince: expect.any(String) });
    expect(await canLogIn(previous.username, previous.password)).toBe(true);
    expect((await auditRows('secret-rotation-waiting')).at(-1)?.eventMetadata).toMatchObject({ rotationId, waitingFor: ['local/shop/billing-db'] });

    await synced(await latestRevision());
    expect(await app.services.rotations.runDue()).toBe(0);
    expect((await state()).rotationStatus).toBe('waiting');
    expect(await canLogIn(previous.username, previous.password)).toBe(true);

    await reloaded(await latestRevision());
    clock.advance(60_000);
    expect(await app.services.rotations.runDue()).toBe(1);
    expect(await state()).toMatchObject({ rotationStatus: 'success', waitingFor: [], waitingSince: null });
    expect(await canLogIn(previous.username, previous.password)).toBe(false);
    expect(await canLogIn(await secretValue('BILLING_USER'), await secretValue('BILLING_PASSWORD'))).toBe(true);
  });

  test('a workload whose rollout has not finished holds the next run, named with its Integration; the run goes ahead once it has', async () => {
    const previous = (await app.request('GET', `${postgresBase}/${rotationId}/generated-credentials`, { token })).body.generatedCredentials;
    const revision = await latestRevision();
    await synced(revision);
    await reloaded(revision, [{ kind: 'Deployment', namespace: 'shop', name: 'billing-api' }]);
    const refused = await rotate();
    expect(refused.status).toBe(409);
    const named = 'local/shop/billing-db: Deployment/shop/billing-api rolling out';
    expect(refused.body.message).toBe(`Waiting for consumers to take the current credential: ${named}`);
    expect(await state()).toMatchObject({ rotationStatus: 'waiting', waitingFor: [named] });
    for (const credential of previous) expect(await canLogIn(credential.username, credential.password)).toBe(true);

    await reloaded(revision, []);
    const rotated = await rotate();
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body.secretRotation).toMatchObject({ rotationStatus: 'success', waitingFor: [] });
    const active = (await state()).activeIndex;
    expect(await canLogIn(previous[active].username, previous[active].password)).toBe(false);
    expect(await canLogIn(previous[1 - active].username, previous[1 - active].password)).toBe(true);
  });

  test("an Integration that does not read the rotation's place never holds it and is never named, whatever its workloads report", async () => {
    // another team's operator (cluster team-b) keeps an Integration reading dev:/ops that reloads a Deployment stuck rolling out
    const call = async (method: string, url: string, body: unknown, as = token) => {
      const response = await app.request(method, url, { token: as, body });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body;
    };
    const { identity } = await call('POST', '/api/v1/identities', { name: 'team-b-operator', organizationId: orgId, role: 'member' });
    await call('POST', `/api/v2/workspace/${projectId}/identity-memberships/${identity.id}`, { roles: [{ role: 'admin' }] });
    const { cluster } = await call('POST', '/api/v1/clusters', { name: 'team-b' });
    await call('POST', `/api/v1/clusters/${cluster.id}/identities`, { identityId: identity.id });
    const operatorToken = await issueTestToken(app, identity.id);
    await call('POST', '/api/v1/folders', { workspaceId: projectId, environment: 'dev', name: 'ops' });
    const lastRotated = await latestRevision();
    const { integration } = await call(
      'PUT',
      '/api/v1/operator/integrations',
      {
        cluster: 'team-b',
        managedBy: 'ops/ops-db',
        projectId,
        environment: 'dev',
        secretPath: '/ops',
        app: 'ops-db',
        owner: 'ops',
        targetEnvironment: 'ops',
        reloads: true,
      },
      operatorToken,
    );
    const devId = integration.envId as string;
    // behind the rotation's last write, and its workload rolling: it would hold the run, were it a consumer
    await call(
      'POST',
      `/api/v1/operator/integrations/${integration.id}/sync-result`,
      { isSynced: true, syncMessage: null, syncedRevision: lastRotated - 1, places: [{ environmentId: devId, path: '/ops', recursive: false }] },
      operatorToken,
    );
    await call(
      'POST',
      `/api/v1/operator/integrations/${integration.id}/reload-result`,
      { reloadedRevision: lastRotated - 1, rolling: [{ kind: 'Deployment', namespace: 'ops', name: 'ops-ledger-api' }] },
      operatorToken,
    );
    // the rotation's own consumer took its last write
    await synced(lastRotated);
    await reloaded(lastRotated);

    const previous = (await app.request('GET', `${postgresBase}/${rotationId}/generated-credentials`, { token })).body.generatedCredentials;
    const active = (await state()).activeIndex;
    const rotated = await rotate();
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body.secretRotation).toMatchObject({ rotationStatus: 'success', waitingFor: [], waitingSince: null });
    // the credential retired is the one that was previous: the run did not wait for the stranger
    expect(await canLogIn(previous[1 - active].username, previous[1 - active].password)).toBe(false);
    expect(await canLogIn(previous[active].username, previous[active].password)).toBe(true);

    const seen = JSON.stringify([
      await state(),
      ...(await app.database.db.selectFrom('auditLogs').select('eventMetadata').where('eventType', 'like', 'secret-rotation%').execute()),
    ]);
    for (const stranger of ['ops-ledger-api', 'team-b', 'ops/ops-db']) expect(seen).not.toContain(stranger);
  });

  test('a consumer that does not converge within the window stops the rotation with a clear status, an audit event and a metric, never a cut-off', async () => {
    const previous = (await app.request('GET', `${postgresBase}/${rotationId}/generated-credentials`, { token })).body.generatedCredentials;
    const before = await state();
    clock.advance(Date.parse(before.nextRotationAt) - clock.now());
    expect(await app.services.rotations.runDue()).toBe(0);
    expect((await state()).rotationStatus).toBe('waiting');
    clock.advance(5 * 60_000 + 1);
    expect(await app.services.rotations.runDue()).toBe(0);
    const stopped = await state();
    expect(stopped).toMatchObject({
      rotationStatus: 'failed',
      lastRotationMessage: 'Consumers did not take the current credential within 5 minutes: local/shop/billing-db; the previous credential stays valid',
      nextRotationAt: null,
      activeIndex: before.activeIndex,
    });
    expect((await auditRows('secret-rotation-failed')).at(-1)?.eventMetadata).toMatchObject({ rotationId, reason: 'ConsumersDidNotConverge' });
    expect(app.services.rotations.outcomes.get('postgres-credentials:stalled')).toBe(1);
    for (const credential of previous) expect(await canLogIn(credential.username, credential.password)).toBe(true);
    clock.advance(DAY_MS);
    expect(await app.services.rotations.runDue()).toBe(0);

    const retired = await app.request('POST', `${postgresBase}/${rotationId}/retire-now`, { token });
    expect(retired.status, JSON.stringify(retired.body)).toBe(200);
    expect(retired.body.secretRotation).toMatchObject({ rotationStatus: 'success', waitingFor: [], lastRotationMessage: null });
    const inactive = previous[1 - before.activeIndex];
    expect(await canLogIn(inactive.username, inactive.password)).toBe(false);
    expect(await canLogIn(await secretValue('BILLING_USER'), await secretValue('BILLING_PASSWORD'))).toBe(true);
    expect((await auditRows('secret-rotation-retired')).at(-1)?.eventMetadata).toMatchObject({ rotationId, acceptedRisk: true, waitingFor: ['local/shop/billing-db'] });
    expect((await app.request('POST', `${postgresBase}/${rotationId}/retire-now`, { token })).status).toBe(400);
    // with the previous credential retired there is nothing to wait for: the next run goes ahead
    expect((await rotate()).status).toBe(200);
  });
});

describe('generated secrets', () => {
  async function createGenerated(name: string, parameters: Record<string, unknown>, secretsMapping: Record<string, string>) {
    return app.request('POST', generatedBase, { token, body: { name, projectId, environment: 'dev', secretPath: '/', rotationInterval: 7, parameters, secretsMapping } });
  }

  test('a password meets its length and alphabet; the value before is kept where mapped', async () => {
    const created = await createGenerated(
      'api-password',
      { kind: 'password', length: 40, alphabet: 'abcdef0123' },
      { value: 'API_PASSWORD', previousValue: 'API_PASSWORD_PREVIOUS' },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const first = await secretValue('API_PASSWORD');
    expect(first).toMatch(/^[abcdef0123]{40}$/);
    const rotated = await app.request('POST', `${generatedBase}/${created.body.secretRotation.id}/rotate-secrets`, { token });
    expect(rotated.status).toBe(200);
    const second = await secretValue('API_PASSWORD');
    expect(second).toMatch(/^[abcdef0123]{40}$/);
    expect(second).not.toBe(first);
    expect(await secretValue('API_PASSWORD_PREVIOUS')).toBe(first);
  });

  test('random bytes in hex and base64, and UUIDs', async () => {
    expect((await createGenerated('hex-key', { kind: 'random-bytes', bytes: 32, encoding: 'hex' }, { value: 'HEX_KEY' })).status).toBe(200);
    expect(await secretValue('HEX_KEY')).toMatch(/^[0-9a-f]{64}$/);
    expect((await createGenerated('b64-key', { kind: 'random-bytes', bytes: 48, encoding: 'base64' }, { value: 'B64_KEY' })).status).toBe(200);
    expect(Buffer.from(await secretValue('B64_KEY'), 'base64')).toHaveLength(48);
    expect((await createGenerated('an-id', { kind: 'uuid' }, { value: 'AN_ID' })).status).toBe(200);
    expect(await secretValue('AN_ID')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test.each([
    ['ed25519', {}, null],
    ['rsa', { modulusLength: 2048 }, 'sha256'],
  ] as const)('a %s key pair in PEM: the private key signs, the public key verifies', async (kind, extra, digest) => {
    const keys = { privateKey: `${kind.toUpperCase()}_PRIVATE`, publicKey: `${kind.toUpperCase()}_PUBLIC`, previousPublicKey: `${kind.toUpperCase()}_PUBLIC_PREVIOUS` };
    const created = await createGenerated(`${kind}-pair`, { kind, ...extra }, keys);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const privatePem = await secretValue(keys.privateKey);
    const publicPem = await secretValue(keys.publicKey);
    expect(privatePem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(publicPem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    const message = Buffer.from('signed by the workload');
    const signature = sign(digest, message, createPrivateKey(privatePem));
    expect(verify(digest, message, createPublicKey(publicPem), signature)).toBe(true);
    await app.request('POST', `${generatedBase}/${created.body.secretRotation.id}/rotate-secrets`, { token });
    expect(await secretValue(keys.previousPublicKey)).toBe(publicPem);
    expect(verify(digest, message, createPublicKey(await secretValue(keys.publicKey)), signature)).toBe(false);
  });

  test('a mapping that does not fit the kind: 400, nothing changed', async () => {
    const before = await snapshotDatabase(app.database);
    const response = await createGenerated('misfit', { kind: 'ed25519' }, { value: 'MISFIT' });
    expect(response.status).toBe(400);
    expect(response.body.message).toBe('A ed25519 rotation needs secretsMapping.privateKey');
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('listing shows every type with its state, never a value', async () => {
    const all = await app.request('GET', '/api/v2/secret-rotations', { token, query: { projectId } });
    expect(all.status).toBe(200);
    expect(all.body.secretRotations.map((rotation: { name: string }) => rotation.name)).toEqual([
      'an-id',
      'api-password',
      'b64-key',
      'billing',
      'ed25519-pair',
      'hex-key',
      'rsa-pair',
    ]);
    expect(JSON.stringify(all.body)).not.toContain(await secretValue('API_PASSWORD'));
  });
});
