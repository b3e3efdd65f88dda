import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, startApi, startOperatorProcess } from '../support/operator-fixture.ts';
import { type PrivatePostgres, startPrivatePostgres } from '../support/private-postgres.ts';

/**
 * The operator across a PostgreSQL outage: an API process and an operator
 * process share a private PostgreSQL that is stopped until the operator
 * says its change-feed listener failed. Neither process is restarted; a
 * change committed right after the database is back, while the operator is
 * still reconnecting its listener, reaches the Secret: the operator catches
 * up by revision.
 */
let postgres: PrivatePostgres;
let cluster: Cluster;
let namespace: TestNamespace;
let api: CofferProcess;
let operator: CofferProcess;
let token: string;

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  cluster = clusterClients();
  namespace = await createTestNamespace('outage');
  const environment = {
    DATABASE_URL: postgres.url,
    COFFER_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    COFFER_AUTH_SECRET: randomBytes(48).toString('base64'),
    KUBECONFIG: inject('kubeconfig'),
    COFFER_OPERATOR_NAMESPACE: namespace.name,
    COFFER_WATCH_NAMESPACE: namespace.name,
    COFFER_RESYNC_INTERVAL: '1h',
    COFFER_DB_CONNECT_TIMEOUT: '2s',
  };
  ({ api, token } = await startApi(environment));
  operator = await startOperatorProcess(environment);
}, 180_000);

afterAll(async () => {
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  await namespace?.cleanup();
  await postgres?.destroy();
});

async function secretData(): Promise<Record<string, string> | undefined> {
  return cluster.secretData(namespace.name, 'outage-secrets');
}

test('a PostgreSQL outage the operator notices: no restart, and a change committed as it returns reaches the Secret', async () => {
  await cluster.apply('secretsprojects', namespace.name, {
    kind: 'SecretsProject',
    metadata: { name: 'outage' },
    spec: { name: 'Outage', slug: `outage-${Date.now().toString(36)}` },
  });
  const project = await cluster.waitReady('secretsprojects', namespace.name, 'outage');
  const workspaceId = project.status.projectId;
  const write = (key: string, value: string) => callCoffer(api, 'POST', `/api/v3/secrets/raw/${key}`, token, { workspaceId, environment: 'dev', secretValue: value });
  expect((await write('BEFORE', 'one')).status).toBe(200);
  await cluster.apply('integrations', namespace.name, {
    kind: 'Integration',
    metadata: { name: 'outage' },
    spec: { projectRef: { name: 'outage' }, environment: 'dev', target: { name: 'outage-secrets' } },
  });
  await waitFor('the first sync', async () => isDeepStrictEqual(await secretData(), { BEFORE: 'one' }) || undefined, { timeoutMs: 60_000 });

  const loggedBefore = operator.output.join('').length;
  await postgres.stop('fast');
  const during = await write('DURING', 'refused');
  expect(during.status).toBe(503);
  // the positive event: the operator's change-feed listener lost its connection and failed to listen again (its warning)
  await waitFor('the operator to say it cannot read the change feed', async () => operator.output.join('').slice(loggedBefore).includes('change feed read failed'), {
    timeoutMs: 60_000,
  });
  await postgres.start();
  // the first write that gets through, as soon as the API has a connection again
  await waitFor('a write after the outage', async () => (await write('AFTER', 'two')).status === 200 || undefined, { timeoutMs: 60_000, intervalMs: 100 });

  await waitFor('the change made after the outage to reach the Secret', async () => isDeepStrictEqual(await secretData(), { BEFORE: 'one', AFTER: 'two' }) || undefined, {
    timeoutMs: 60_000,
  });
  for (const process of [api, operator]) {
    expect(process.process.exitCode).toBeNull();
    expect(process.process.signalCode).toBeNull();
  }
}, 240_000);
