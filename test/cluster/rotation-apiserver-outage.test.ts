import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ControlPlane, ensureTestBinaries, startControlPlane } from '../k8s/controlplane.ts';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, logLines, stopCoffer } from '../support/coffer-process.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { type Cluster, clusterClients, operatorMetric, startOperatorProcess } from '../support/operator-fixture.ts';
import { type RotatedPostgres, startRotatedPostgres } from '../support/rotated-postgres.ts';
import { bootstrap, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * A PostgreSQL credential rotation while the kube-apiserver its consumer's
 * operator writes to is down: a control plane of this file's own (the shared
 * one stays up for the others), its apiserver stopped and started again over
 * the same etcd. The API runs in process (its clock injected); the operator
 * is a `coffer serve` child over the same database; the PostgreSQL server the
 * rotation acts on checks passwords. A stand-in workload signs in with the
 * credential the Secret held when it last could read it, as a pod keeps the
 * environment it started with.
 */
process.env.COFFER_TEST_BACKEND ??= 'postgres';

const base = '/api/v2/secret-rotations/postgres-credentials';
const clock = new ManualClock();
const CONSUMER_WAIT_MINUTES = 1;

interface Credential {
  username: string;
  password: string;
}

let plane: ControlPlane;
let rotated: RotatedPostgres;
let app: TestApp;
let operator: CofferProcess;
let cluster: Cluster;
let namespace: TestNamespace;
let token: string;
let rotationId: string;
/** How the rotation names the Integration it waits for. */
let integrationName: string;
/** The revision of the last run that published a credential (its Coffer-Revision header). */
let publishedAt: number;
/** Every password the rotation issued in this file. */
const passwords = new Set<string>();

async function rotate() {
  const answer = await app.request('POST', `${base}/${rotationId}/rotate-secrets`, { token });
  if (answer.status === 200) publishedAt = Number(answer.headers['coffer-revision']);
  return answer;
}
const rotation = async () => (await app.request('GET', `${base}/${rotationId}`, { token })).body.secretRotation;

/** The credential the rotation holds active now. */
async function activeCredential(): Promise<Credential> {
  const { generatedCredentials, activeIndex } = (await app.request('GET', `${base}/${rotationId}/generated-credentials`, { token })).body;
  for (const { password } of generatedCredentials as Credential[]) passwords.add(password);
  return generatedCredentials[activeIndex];
}

/** What the operator last told Coffer about the Integration's sync (status text only). */
async function integrationRecord() {
  return app.database.db.selectFrom('integrations').select(['isSynced', 'syncMessage']).where('managedBy', '=', `${namespace.name}/db`).executeTakeFirstOrThrow();
}

/** Failed syncs of an Integration for a reason no condition names (the apiserver unreachable), as the operator counts them. */
const unnamedFailures = () => operatorMetric(operator, 'coffer_operator_reconcile_errors_total', { kind: 'Integration', reason: 'Error' });

/**
 * Resolves once the operator has failed a sync of the Integration since it had failed `before` of them: it tried, and
 * could not write. Counted, not read from the log: the log's warning is the first of a spell of failures only, and a
 * spell can begin before the outage. On a timeout it quotes the operator's log.
 */
const waitForSyncRefused = (before: number) =>
  waitFor(
    'the operator to fail a sync of the Integration',
    async () => {
      const [failures, leading, queued] = await Promise.all([
        unnamedFailures(),
        operatorMetric(operator, 'coffer_operator_leader'),
        operatorMetric(operator, 'coffer_operator_queue_length'),
      ]);
      if (failures > before) return true;
      const said = logLines(operator.output).map((line) => `${new Date(line.time).toISOString().slice(11, 23)} ${line.msg}`);
      throw new Error(`${failures} failed syncs (${before} before the outage); leading ${leading}; ${queued} keys queued; the operator's log: ${said.join(' | ')}`);
    },
    { timeoutMs: 60_000 },
  );

/** The revision barrier, as a client waits for it: every Integration reading the rotation's place reflects its last publication. */
async function waitForPublished(): Promise<void> {
  expect(publishedAt).toBeGreaterThan(0);
  const answer = await app.request('GET', '/api/v1/changes/wait', { token, query: { revision: String(publishedAt), timeout: '2m' } });
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ revision: publishedAt, reached: true });
}

const secretHolds = (credential: Credential, what: string) =>
  cluster.waitForData(namespace.name, 'db', { DB_USER: credential.username, DB_PASSWORD: credential.password }, what, 120_000);

/**
 * Runs `body` with the apiserver stopped; before it is started again (however `body` ends), the operator must have
 * failed a sync of the Integration and its record must say so: it tried, and the outage is what held it.
 */
async function duringOutage<T>(body: () => Promise<T>): Promise<T> {
  // the operator leads before the apiserver goes (after the last outage it may be taking the Lease again)
  await waitFor('the operator to lead', async () => (await operatorMetric(operator, 'coffer_operator_leader')) === 1, { timeoutMs: 30_000 });
  const before = await unnamedFailures();
  await plane.stopApiserver();
  try {
    const result = await body();
    await waitForSyncRefused(before);
    // the integration record says the sync failed (a fixed sentence), not the last success
    expect(await integrationRecord()).toEqual({ isSynced: false, syncMessage: expect.stringMatching(/^The last sync failed \(the Kubernetes API server unreachable/) });
    return result;
  } finally {
    await plane.startApiserver();
  }
}

interface StandIn {
  /** Resolves once the stand-in has signed in with `credential`. */
  uses(credential: Credential): Promise<unknown>;
}

/**
 * Runs `body` while a workload stand-in reads its credential from the Secret whenever the apiserver answers and signs in
 * with the last one it read, over and over; then proves it was never refused.
 */
async function withStandIn(body: (standIn: StandIn) => Promise<void>): Promise<void> {
  let running = true;
  let current: Credential | undefined;
  let connections = 0;
  const refused: string[] = [];
  const loop = (async () => {
    while (running) {
      const data = await cluster.secretData(namespace.name, 'db').catch(() => undefined);
      if (data) current = { username: data.DB_USER!, password: data.DB_PASSWORD! };
      if (current) {
        if (await rotated.canLogIn(current.username, current.password)) connections++;
        else refused.push(current.username);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const standIn: StandIn = {
    uses: (credential) =>
      waitFor(`the stand-in to sign in as ${credential.username}`, () => current?.password === credential.password && connections > 0, { timeoutMs: 30_000 }),
  };
  try {
    await body(standIn);
  } finally {
    running = false;
    await loop;
  }
  expect(refused).toEqual([]);
  expect(connections).toBeGreaterThan(0);
}

beforeAll(async () => {
  plane = await startControlPlane({ binDir: await ensureTestBinaries(), controllerManager: false });
  cluster = clusterClients(plane.kubeconfigPath);
  namespace = await createTestNamespace('rotation-outage', plane.kubeconfigPath);
  integrationName = `local/${namespace.name}/db`;
  rotated = await startRotatedPostgres();
  clock.advance(Date.now());
  app = await startTestApp({ signIn: { clock: () => clock.now() } });
  ({ token } = await bootstrap(app));
  operator = await startOperatorProcess({
    DATABASE_URL: app.databaseUrl!,
    COFFER_ENCRYPTION_KEY: app.keys.encryptionKey,
    COFFER_AUTH_SECRET: app.keys.authSecret,
    KUBECONFIG: plane.kubeconfigPath,
    COFFER_OPERATOR_NAMESPACE: namespace.name,
    COFFER_RESYNC_INTERVAL: '1h',
    COFFER_LOG_LEVEL: 'info',
  });
  await cluster.apply('secretsprojects', namespace.name, {
    kind: 'SecretsProject',
    metadata: { name: 'shop' },
    spec: { name: 'Shop', slug: `rot-outage-${Date.now().toString(36)}` },
  });
  const projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'shop')).status.projectId;
  const connection = await app.request('POST', '/api/v1/app-connections/postgres', {
    token,
    body: { name: 'orders-db', projectId, credentials: rotated.connectionCredentials() },
  });
  expect(connection.status, JSON.stringify(connection.body)).toBe(200);
  const created = await app.request('POST', base, {
    token,
    body: rotated.onDemandRotation(projectId, connection.body.appConnection.id, { consumerWaitMinutes: CONSUMER_WAIT_MINUTES }),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  rotationId = created.body.secretRotation.id;
  publishedAt = Number(created.headers['coffer-revision']);
  await cluster.apply('integrations', namespace.name, {
    kind: 'Integration',
    metadata: { name: 'db' },
    spec: { projectRef: { name: 'shop' }, environment: 'dev', target: { name: 'db' } },
  });
  await cluster.waitReady('integrations', namespace.name, 'db');
}, 240_000);

afterAll(async () => {
  if (operator) await stopCoffer(operator);
  await app?.close();
  await rotated?.server.destroy();
  await plane?.stop();
});

describe('the kube-apiserver down while a rotation runs', () => {
  test('the rotation publishes, then waits naming the Integration, cutting nobody off; once the apiserver is back the Secret takes the new credential and the next run retires the old one', async () => {
    const old = await activeCredential();
    await secretHolds(old, 'the first credential in the Secret');
    await waitForPublished();
    await withStandIn(async (standIn) => {
      await standIn.uses(old);
      const fresh = await duringOutage(async () => {
        const published = await rotate();
        expect(published.status, JSON.stringify(published.body)).toBe(200);
        const fresh = await activeCredential();
        expect(fresh.username).not.toBe(old.username);

        const held = await rotate();
        expect(held.status, JSON.stringify(held.body)).toBe(409);
        expect(held.body).toMatchObject({ code: 'SecretRotationWaiting', message: `Waiting for consumers to take the current credential: ${integrationName}` });
        expect(await rotation()).toMatchObject({ rotationStatus: 'waiting', waitingFor: [integrationName] });
        // the Secret holds the credential it had when the apiserver went down (nothing can write it now): it signs in
        for (const credential of [old, fresh]) expect(await rotated.canLogIn(credential.username, credential.password)).toBe(true);
        return fresh;
      });

      await secretHolds(fresh, 'the new credential in the Secret once the apiserver is back');
      await waitForPublished();
      expect(await integrationRecord()).toEqual({ isSynced: true, syncMessage: null });
      await standIn.uses(fresh);
      const retired = await rotate();
      expect(retired.status, JSON.stringify(retired.body)).toBe(200);
      expect(retired.body.secretRotation).toMatchObject({ rotationStatus: 'success', waitingFor: [] });
      expect(await rotated.canLogIn(old.username, old.password)).toBe(false);
      expect(await rotated.canLogIn(fresh.username, fresh.password)).toBe(true);
      const next = await activeCredential();
      await secretHolds(next, 'the next credential in the Secret');
      await standIn.uses(next);
    });
  });

  test('the apiserver down past the consumer window: the rotation stops as failed with its reason and an audit entry, and cuts nobody off', async () => {
    const old = await activeCredential();
    await secretHolds(old, 'the current credential in the Secret');
    await waitForPublished();
    await withStandIn(async (standIn) => {
      await standIn.uses(old);
      const fresh = await duringOutage(async () => {
        expect((await rotate()).status).toBe(200);
        const fresh = await activeCredential();
        expect((await rotate()).status).toBe(409);
        expect(await rotation()).toMatchObject({ rotationStatus: 'waiting', waitingFor: [integrationName] });

        clock.advance(CONSUMER_WAIT_MINUTES * 60_000 + 1);
        const stopped = await rotate();
        expect(stopped.status, JSON.stringify(stopped.body)).toBe(409);
        expect(await rotation()).toMatchObject({
          rotationStatus: 'failed',
          lastRotationMessage: `Consumers did not take the current credential within ${CONSUMER_WAIT_MINUTES} minutes: ${integrationName}; the previous credential stays valid`,
          waitingFor: [integrationName],
        });
        const audit = await app.database.db
          .selectFrom('auditLogs')
          .select('eventMetadata')
          .where('eventType', '=', 'secret-rotation-failed')
          .orderBy('createdAt', 'desc')
          .executeTakeFirstOrThrow();
        expect(audit.eventMetadata).toMatchObject({ rotationId, reason: 'ConsumersDidNotConverge', waitingFor: [integrationName] });
        for (const credential of [old, fresh]) expect(await rotated.canLogIn(credential.username, credential.password)).toBe(true);
        return fresh;
      });

      // back: the Secret takes the new credential; the stopped rotation retired nothing, and the next run goes on
      await secretHolds(fresh, 'the new credential in the Secret once the apiserver is back');
      await waitForPublished();
      await standIn.uses(fresh);
      for (const credential of [old, fresh]) expect(await rotated.canLogIn(credential.username, credential.password)).toBe(true);
      const resumed = await rotate();
      expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
      expect(resumed.body.secretRotation).toMatchObject({ rotationStatus: 'success', lastRotationMessage: null });
      expect(await rotated.canLogIn(old.username, old.password)).toBe(false);
      await standIn.uses(await activeCredential());
    });
  });

  test("no credential reaches the operator's log, the Integration's status and Events, or the rotation's status and audit", async () => {
    await activeCredential();
    expect(passwords.size).toBe(5);
    const integration = await cluster.get('integrations', namespace.name, 'db');
    const events = (await cluster.core.listNamespacedEvent({ namespace: namespace.name })).items.map((event) => event.message ?? '');
    const audit = await app.database.db.selectFrom('auditLogs').select('eventMetadata').where('eventType', 'like', 'secret-rotation-%').execute();
    const seen = [operator.output.join(''), JSON.stringify(integration.status), events.join('\n'), JSON.stringify(await rotation()), JSON.stringify(audit)];
    seen.push(JSON.stringify(await integrationRecord()));
    for (const text of seen) for (const password of [...passwords, rotated.rotatorPassword]) expect(text).not.toContain(password);
  });
});
