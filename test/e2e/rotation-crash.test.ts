import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { waitFor } from '../k8s/helpers.ts';
import { callCoffer, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { type RotatedPostgres, startRotatedPostgres } from '../support/rotated-postgres.ts';
import { bootstrap, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * kill -9 of `coffer serve` at each step of a PostgreSQL credential rotation's
 * run: while it claims the run, while it sets the password on the server, and
 * while it publishes the new credential. The server is held at each step by a
 * lock the test takes (on Coffer's database or on the rotated server), then
 * killed. Whatever it left, one credential at least signs in to the real
 * PostgreSQL server, and the run resumes (an in-process replica's scheduler,
 * its clock injected, once the dead one's claim lapses).
 */
process.env.COFFER_TEST_BACKEND ??= 'postgres';

const base = '/api/v2/secret-rotations/postgres-credentials';
const clock = new ManualClock();

let rotated: RotatedPostgres;
let app: TestApp;
let token: string;
let rotationId: string;

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

const credentials = async () => (await app.request('GET', `${base}/${rotationId}/generated-credentials`, { token })).body;
const secretValue = async (key: string, projectId: string) =>
  (await app.request('GET', `/api/v3/secrets/raw/${key}`, { token, query: { workspaceId: projectId, environment: 'dev', secretPath: '/' } })).body.secret.secretValue;

/** A session of `url` waiting for a lock, as pg_stat_activity shows it there. */
function waitForLockWait(url: string, applicationName?: string) {
  return waitFor(
    'the run to wait for the lock the test holds',
    async () => {
      const client = await connect(url);
      try {
        const { rows } = await client.query(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND ($1::text IS NULL OR application_name = $1)`,
          [applicationName ?? null],
        );
        return rows[0].waiting > 0;
      } finally {
        await client.end();
      }
    },
    { intervalMs: 20 },
  );
}

/** Starts a rotation run on a `coffer serve` child, holds it at `lock`'s step, kills it with SIGKILL, and releases the lock. */
async function killDuringRun(lock: { url: string; statement: string; params: unknown[]; applicationName?: string }): Promise<void> {
  const child = await startCoffer({
    DATABASE_URL: app.databaseUrl!,
    COFFER_ENCRYPTION_KEY: app.keys.encryptionKey,
    COFFER_AUTH_SECRET: app.keys.authSecret,
    COFFER_OPERATOR: 'false',
  });
  const holder = await connect(lock.url);
  try {
    await holder.query('BEGIN');
    await holder.query(lock.statement, lock.params);
    const run = callCoffer(child, 'POST', `${base}/${rotationId}/rotate-secrets`, token).catch(() => undefined);
    await waitForLockWait(lock.url, lock.applicationName);
    await stopCoffer(child, 'SIGKILL');
    await run;
  } finally {
    await holder.query('ROLLBACK').finally(() => holder.end());
    await stopCoffer(child, 'SIGKILL');
  }
}

beforeAll(async () => {
  rotated = await startRotatedPostgres();
  clock.advance(Date.now());
  app = await startTestApp({ signIn: { clock: () => clock.now() } });
  ({ token } = await bootstrap(app));
}, 120_000);

afterAll(async () => {
  await app?.close();
  await rotated?.server.destroy();
});

describe('kill -9 at each step of a run', () => {
  let projectId: string;

  beforeAll(async () => {
    projectId = (await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Crashes' } })).body.project.id;
    const connection = await app.request('POST', '/api/v1/app-connections/postgres', {
      token,
      body: {
        name: 'orders-db',
        projectId,
        credentials: rotated.connectionCredentials(),
      },
    });
    const created = await app.request('POST', base, { token, body: rotated.onDemandRotation(projectId, connection.body.appConnection.id) });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    rotationId = created.body.secretRotation.id;
    // a previous credential to keep or retire: the second role takes its turn
    expect((await app.request('POST', `${base}/${rotationId}/rotate-secrets`, { token })).status).toBe(200);
  });

  /** The credential the secrets hold signs in; after the resumed run, the new one and the one before it do. */
  async function expectRecovered(resumes: boolean): Promise<void> {
    expect(await rotated.canLogIn(await secretValue('DB_USER', projectId), await secretValue('DB_PASSWORD', projectId))).toBe(true);
    const before = await credentials();
    clock.advance(2 * 60_000 + 1_000);
    expect(await app.services.rotations.runDue()).toBe(resumes ? 1 : 0);
    if (!resumes) expect((await app.request('POST', `${base}/${rotationId}/rotate-secrets`, { token })).status).toBe(200);
    const after = await credentials();
    expect(after.activeIndex).toBe(1 - before.activeIndex);
    for (const credential of after.generatedCredentials) expect(await rotated.canLogIn(credential.username, credential.password)).toBe(true);
    expect(await rotated.canLogIn(await secretValue('DB_USER', projectId), await secretValue('DB_PASSWORD', projectId))).toBe(true);
  }

  test('while it claims the run: nothing was done; both credentials sign in and the next run goes through', async () => {
    const previous = await credentials();
    await killDuringRun({ url: app.databaseUrl!, statement: 'SELECT 1 FROM secret_rotations WHERE id = $1 FOR UPDATE', params: [rotationId] });
    expect(await credentials()).toEqual(previous);
    for (const credential of previous.generatedCredentials) expect(await rotated.canLogIn(credential.username, credential.password)).toBe(true);
    await expectRecovered(false);
  });

  test('while it sets the password on the server: the claim stays, the active credential signs in, and the scheduler resumes the run', async () => {
    const previous = await credentials();
    const [active, inactive] = [previous.generatedCredentials[previous.activeIndex], previous.generatedCredentials[1 - previous.activeIndex]];
    // an ALTER ROLE of the test's, not committed, holds the role's catalog row: the run's ALTER ROLE waits for it
    await killDuringRun({
      url: rotated.server.url,
      statement: `ALTER ROLE ${inactive.username} CONNECTION LIMIT -1`,
      params: [],
      applicationName: 'coffer-secret-rotation',
    });
    // the server finishes the statement it was sent (the role not in use may have its new password already): the active one is untouched
    expect(await rotated.canLogIn(active.username, active.password)).toBe(true);
    await expectRecovered(true);
  });

  test('while it publishes the new credential: the active one still signs in, and the scheduler finishes the run', async () => {
    const previous = await credentials();
    const active = previous.generatedCredentials[previous.activeIndex];
    await killDuringRun({ url: app.databaseUrl!, statement: "SELECT 1 FROM secrets WHERE key = 'DB_PASSWORD' FOR UPDATE", params: [] });
    expect(await rotated.canLogIn(active.username, active.password)).toBe(true);
    await expectRecovered(true);
  });

  // Coffer's own database lost mid-run (here: the session publishing the credential is terminated by the server)
  // instead of the process: the run's request fails cleanly (never a 500 that leaks the driver's text), the process
  // goes on serving, the active credential still signs in, the run is rolled back as failed with a fixed sentence,
  // and the next run goes through.
  test("while it publishes, Coffer's database connection is lost: no 500, the process serves on, the run rolls back", async () => {
    const previous = await credentials();
    const active = previous.generatedCredentials[previous.activeIndex];
    const child = await startCoffer({
      DATABASE_URL: app.databaseUrl!,
      COFFER_ENCRYPTION_KEY: app.keys.encryptionKey,
      COFFER_AUTH_SECRET: app.keys.authSecret,
      COFFER_OPERATOR: 'false',
    });
    const holder = await connect(app.databaseUrl!);
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM secrets WHERE key = 'DB_PASSWORD' FOR UPDATE");
      const run = callCoffer(child, 'POST', `${base}/${rotationId}/rotate-secrets`, token);
      await waitForLockWait(app.databaseUrl!);
      const terminated = await holder.query(
        `SELECT pg_terminate_backend(pid) AS gone FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()`,
      );
      expect(terminated.rows.length).toBeGreaterThan(0);
      await holder.query('ROLLBACK');
      const answer = await run;
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).not.toBe(500);
      expect(JSON.stringify(answer.body)).not.toMatch(/terminat|admin command|connection/i);
      expect(await rotated.canLogIn(active.username, active.password)).toBe(true);
      expect((await callCoffer(child, 'GET', '/api/status')).status).toBe(200);
    } finally {
      await holder.end();
      await stopCoffer(child, 'SIGKILL');
    }
    const rotation = (await app.request('GET', `${base}/${rotationId}`, { token })).body.secretRotation;
    expect(rotation).toMatchObject({
      activeIndex: previous.activeIndex,
      rotationStatus: 'failed',
      lastRotationMessage: 'The rotation failed for an internal reason; see the server log',
    });
    await expectRecovered(false);
  });
});
