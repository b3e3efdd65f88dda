import { isDeepStrictEqual } from 'node:util';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, stopCoffer } from '../support/coffer-process.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { type Cluster, clusterClients, startOperatorProcess } from '../support/operator-fixture.ts';
import { type RotatedPostgres, startRotatedPostgres } from '../support/rotated-postgres.ts';
import { bootstrap, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * A PostgreSQL credential rotation whose consumer is a Deployment that the
 * operator rolls (spec.reload), on the real control plane and a real
 * PostgreSQL server. There is no controller-manager: the test writes the
 * Deployment's status as its controller would, holding or finishing the
 * rollout. The API runs in process (its clock injected); the operator is a
 * `coffer serve` child over the same database.
 */
process.env.COFFER_TEST_BACKEND ??= 'postgres';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const base = '/api/v2/secret-rotations/postgres-credentials';
const clock = new ManualClock();

let rotated: RotatedPostgres;
let app: TestApp;
let operator: CofferProcess;
let cluster: Cluster;
let namespace: TestNamespace;
let token: string;
let rotationId: string;

const rotate = () => app.request('POST', `${base}/${rotationId}/rotate-secrets`, { token });
const rotation = async () => (await app.request('GET', `${base}/${rotationId}`, { token })).body.secretRotation;
const credentials = async () => (await app.request('GET', `${base}/${rotationId}/generated-credentials`, { token })).body;

/** Writes the Deployment's status as its controller does: `finished` says every replica runs the current template and is available. */
async function writeRolloutStatus(name: string, finished: boolean): Promise<void> {
  const deployment = await cluster.apps.readNamespacedDeployment({ namespace: namespace.name, name });
  const generation = deployment.metadata!.generation!;
  const status = finished
    ? { observedGeneration: generation, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 }
    : { observedGeneration: generation, replicas: 3, updatedReplicas: 1, readyReplicas: 2, availableReplicas: 2 };
  await cluster.apps.patchNamespacedDeploymentStatus({ namespace: namespace.name, name, body: { status } }, mergePatch);
}

/** The workloads the operator last reported rolling for the Integration `name`. */
async function reportedRolling(name: string): Promise<unknown> {
  const row = await app.database.db.selectFrom('integrations').select('rollingWorkloads').where('managedBy', '=', `${namespace.name}/${name}`).executeTakeFirst();
  return row?.rollingWorkloads ?? undefined;
}

/** The messages of the SecretRotation Events on the Integration `name`. */
async function rotationEvents(name: string): Promise<string[]> {
  const { items } = await cluster.core.listNamespacedEvent({ namespace: namespace.name });
  return items
    .filter((event) => event.involvedObject.kind === 'Integration' && event.involvedObject.name === name && event.reason === 'SecretRotation')
    .map((event) => event.message!);
}

const waitForEvent = (phrase: string) =>
  waitFor(`a SecretRotation Event saying "${phrase}"`, async () => {
    const messages = await rotationEvents('db');
    if (messages.some((message) => message.startsWith('secret rotation orders ') && message.includes(phrase))) return true;
    throw new Error(`Events: ${JSON.stringify(messages)}`);
  });

/** The consumers take the active credential: the Secret holds it, the operator rolls the Deployment, its controller finishes the rollout. */
async function consumersTakeIt(): Promise<void> {
  const { generatedCredentials, activeIndex } = await credentials();
  const active = generatedCredentials[activeIndex];
  await cluster.waitForData(namespace.name, 'db', { DB_USER: active.username, DB_PASSWORD: active.password }, 'the active credential in the Secret');
  await waitForRolling([{ kind: 'Deployment', namespace: namespace.name, name: 'api' }]);
  await writeRolloutStatus('api', true);
  await waitForRolling([]);
}

const waitForRolling = (expected: unknown[]) =>
  waitFor(`the operator to report ${JSON.stringify(expected)} rolling`, async () => {
    const rolling = await reportedRolling('db');
    if (isDeepStrictEqual(rolling, expected)) return true;
    throw new Error(`reported ${JSON.stringify(rolling)}`);
  });

beforeAll(async () => {
  rotated = await startRotatedPostgres();
  clock.advance(Date.now());
  app = await startTestApp({ signIn: { clock: () => clock.now() } });
  ({ token } = await bootstrap(app));
  cluster = clusterClients();
  namespace = await createTestNamespace('rotation');
  operator = await startOperatorProcess({
    DATABASE_URL: app.databaseUrl!,
    COFFER_ENCRYPTION_KEY: app.keys.encryptionKey,
    COFFER_AUTH_SECRET: app.keys.authSecret,
    KUBECONFIG: inject('kubeconfig'),
    COFFER_OPERATOR_NAMESPACE: namespace.name,
    COFFER_RESYNC_INTERVAL: '1h',
    COFFER_LOG_LEVEL: 'info',
  });
  await cluster.apply('secretsprojects', namespace.name, {
    kind: 'SecretsProject',
    metadata: { name: 'shop' },
    spec: { name: 'Shop', slug: `rot-${Date.now().toString(36)}` },
  });
  const projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'shop')).status.projectId;
  const connection = await app.request('POST', '/api/v1/app-connections/postgres', {
    token,
    body: {
      name: 'orders-db',
      projectId,
      credentials: rotated.connectionCredentials(),
    },
  });
  expect(connection.status, JSON.stringify(connection.body)).toBe(200);
  const created = await app.request('POST', base, { token, body: rotated.onDemandRotation(projectId, connection.body.appConnection.id, { consumerWaitMinutes: 5 }) });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  rotationId = created.body.secretRotation.id;
  const labels = { app: 'api' };
  await cluster.apps.createNamespacedDeployment({
    namespace: namespace.name,
    body: {
      metadata: { name: 'api' },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'api', image: 'example.com/api:1', envFrom: [{ secretRef: { name: 'db' } }] }] } },
      },
    },
  });
  await cluster.apply('integrations', namespace.name, {
    kind: 'Integration',
    metadata: { name: 'db' },
    spec: { projectRef: { name: 'shop' }, environment: 'dev', target: { name: 'db' }, reload: { workloads: [{ kind: 'Deployment', name: 'api' }], debounce: '0s' } },
  });
  await cluster.waitReady('integrations', namespace.name, 'db', 'Reloaded');
  // the first sight of the Deployment records its checksum (a new generation); its controller catches up
  await writeRolloutStatus('api', true);
  await waitForRolling([]);
}, 240_000);

afterAll(async () => {
  if (operator) await stopCoffer(operator);
  await namespace?.cleanup();
  await app?.close();
  await rotated?.server.destroy();
});

describe('a rotation waits for its consumers to finish rolling out', () => {
  test('a held rollout keeps the previous credential valid and named; once the Deployment has rolled out, the next run retires it', async () => {
    expect((await rotate()).status).toBe(200);
    const { generatedCredentials: issued, activeIndex } = await credentials();
    const [current, previous] = [issued[activeIndex], issued[1 - activeIndex]];
    await cluster.waitForData(namespace.name, 'db', { DB_USER: current.username, DB_PASSWORD: current.password }, 'the new credential in the Secret');
    const rolling = [{ kind: 'Deployment', namespace: namespace.name, name: 'api' }];
    // the operator rolled the Deployment for the new keys; its controller has not finished the rollout
    await writeRolloutStatus('api', false);
    await waitForRolling(rolling);

    const named = `local/${namespace.name}/db: Deployment/${namespace.name}/api rolling out`;
    const held = await rotate();
    expect(held.status).toBe(409);
    expect(held.body).toMatchObject({ code: 'SecretRotationWaiting', message: `Waiting for consumers to take the current credential: ${named}` });
    expect(await rotation()).toMatchObject({ rotationStatus: 'waiting', waitingFor: [named], activeIndex });
    expect(await rotated.canLogIn(previous.username, previous.password)).toBe(true);

    // held past the window: the rotation stops, and cuts nobody off
    clock.advance(5 * 60_000 + 1);
    expect((await rotate()).status).toBe(409);
    expect(await rotation()).toMatchObject({ rotationStatus: 'failed', lastRotationMessage: expect.stringContaining(named), activeIndex });
    for (const credential of [previous, current]) expect(await rotated.canLogIn(credential.username, credential.password)).toBe(true);

    await writeRolloutStatus('api', true);
    await waitForRolling([]);
    const retired = await rotate();
    expect(retired.status, JSON.stringify(retired.body)).toBe(200);
    expect(retired.body.secretRotation).toMatchObject({ rotationStatus: 'success', waitingFor: [], activeIndex: 1 - activeIndex });
    expect(await rotated.canLogIn(previous.username, previous.password)).toBe(false);
    expect(await rotated.canLogIn(current.username, current.password)).toBe(true);
  });

  test('each phase is an Event on the Integration naming the rotation, never a value', async () => {
    await waitForEvent('published a new credential');
    await waitForEvent('waits for this Integration');
    await waitForEvent('stopped: its consumers did not take the current credential');
    const { generatedCredentials } = await credentials();
    const messages = (await cluster.core.listNamespacedEvent({ namespace: namespace.name })).items.map((event) => event.message ?? '').join('\n');
    for (const credential of generatedCredentials) expect(messages).not.toContain(credential.password);
    expect(messages).not.toContain(rotated.rotatorPassword);
  });

  test('an application stand-in that connects with whatever the synced Secret holds never fails across 20 rotations', async () => {
    let running = true;
    let connections = 0;
    const refused: string[] = [];
    const standIn = (async () => {
      while (running) {
        const data = (await cluster.secretData(namespace.name, 'db'))!;
        if (await rotated.canLogIn(data.DB_USER!, data.DB_PASSWORD!)) connections++;
        else refused.push(data.DB_USER!);
      }
    })();
    try {
      for (let run = 0; run < 20; run++) {
        await consumersTakeIt();
        const rotated = await rotate();
        expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      }
      await consumersTakeIt();
    } finally {
      running = false;
      await standIn;
    }
    expect(refused).toEqual([]);
    expect(connections).toBeGreaterThan(20);
  });
});
