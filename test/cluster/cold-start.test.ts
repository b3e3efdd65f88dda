import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, operatorMetric, putSecret, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * A cold start reconciles each Integration once (issue 34: at 10,000, 16 % were reconciled twice). Many
 * Integrations of one project read the same folder, so that every change the operator takes for someone
 * else's wakes all of them: its own record upserts (quiet: no NOTIFY) and its own reports of its targets'
 * keys (NOTIFY), committed 16 at a time while its change stream reads. Then a later write to a folder only
 * one more Integration reads: once that Integration's Secret holds it and the queue is empty, the stream has
 * delivered every change before it, and the count of reconciles is final. The operator that counts watches this
 * test's namespace only: other files' resources on the shared control plane would be counted too.
 */
const READERS = 60;
let cluster: Cluster;
let namespace: TestNamespace;
let api: CofferProcess;
let operator: CofferProcess | undefined;
let token: string;
let environment: Record<string, string>;

const metric = (name: string, labels: Record<string, string>) => operatorMetric(operator!, name, labels);

beforeAll(async () => {
  cluster = clusterClients();
  namespace = await createTestNamespace('coldstart');
  environment = await cofferEnvironment(namespace.name);
  ({ api, token } = await startApi(environment));
}, 120_000);

afterAll(async () => {
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  await namespace?.cleanup();
});

test(`a cold start on ${READERS} Integrations reading one folder reconciles each once, and a later change only the one that reads it, once`, async () => {
  // the project is declared by a first operator, which then stops: the next one starts cold on the Integrations
  operator = await startOperatorProcess(environment);
  await cluster.apply('secretsprojects', namespace.name, {
    kind: 'SecretsProject',
    metadata: { name: 'shop' },
    spec: { name: 'Shop', slug: `cold-${Date.now().toString(36)}` },
  });
  const projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'shop')).status.projectId as string;
  await stopCoffer(operator);
  operator = undefined;
  await putSecret(api, token, { projectId, environment: 'dev', secretPath: '/' }, 'SHARED', 'one');
  expect((await callCoffer(api, 'POST', '/api/v1/folders', token, { workspaceId: projectId, environment: 'dev', name: 'marker' })).status).toBe(200);
  const integration = (name: string, secretPath: string) => ({
    kind: 'Integration',
    metadata: { name },
    spec: { projectRef: { name: 'shop' }, environment: 'dev', secretPath, target: { name: `${name}-secrets` } },
  });
  const names = Array.from({ length: READERS }, (_, index) => `reader-${index}`);
  for (const name of names) await cluster.apply('integrations', namespace.name, integration(name, '/'));
  await cluster.apply('integrations', namespace.name, integration('marker', '/marker'));

  operator = await startOperatorProcess(environment, { COFFER_WATCH_NAMESPACE: namespace.name });
  for (const name of [...names, 'marker']) await cluster.waitReady('integrations', namespace.name, name, 'Synced', 120_000);
  await putSecret(api, token, { projectId, environment: 'dev', secretPath: '/marker' }, 'MARKER', 'after');
  await cluster.waitForData(namespace.name, 'marker-secrets', { MARKER: 'after' }, 'the marker Secret to hold the later write');
  await waitFor('the operator queue to be empty', async () => (await metric('coffer_operator_queue_length', {})) === 0);

  // the readers once each; the marker for its first sync and for the later change, whose own Secret update comes
  // back from the watch while that sync is under way (before its status names the new data) and is told as its own
  const reconciled = await metric('coffer_operator_reconciles_total', { kind: 'Integration', outcome: 'ok' });
  expect(reconciled).toBe(READERS + 2);
  expect(await metric('coffer_operator_reconciles_total', { kind: 'Integration', outcome: 'requeue' })).toBe(0);
  expect(await metric('coffer_operator_reconciles_total', { kind: 'Integration', outcome: 'error' })).toBe(0);
}, 300_000);
