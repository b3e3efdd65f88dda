import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import provideChromium from '../console/chromium-setup.ts';
import { launchBrowser } from '../console/console-server.ts';
import { answersHolding, expectAccessible, recordApiAnswers, saveAndFollow, signInThroughForm, valuesInPage } from '../console/page-checks.ts';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, logLines, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, putSecret, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * The console journey's last step on the real control plane: `coffer serve` (its built console) and the operator
 * against the test kube-apiserver, Debian's chromium driving the console. After an edit in the console, its "Where it
 * goes" screen shows the write reaching the Integration's new revision, while the Secret in the cluster holds the new
 * value; an Integration whose Secret belongs to someone else shows its failure's reason. No value in the page or in
 * any answer it loaded. Then the workloads that read the Secret, as the operator finds them in their pod templates:
 * under the keys each reads, and gone from a key when its reference is removed. (test/console/where.test.ts covers
 * the screen's other cases with the operator played.)
 */
const USER = { email: 'ops@example.com', password: 'operator test password' };
const VALUES = { first: 'cluster-first-value-71ac', edited: 'cluster-edited-value-0d5e', apiKey: 'cluster-api-key-value-94c3' };

let cluster: Cluster;
let namespace: TestNamespace;
let api: CofferProcess;
let operator: CofferProcess;
let browser: Browser;
let page: Page;
let answers: { url: string; body: string }[];
let projectId: string;
let token: string;
const slug = `where-${Date.now().toString(36)}`;

beforeAll(async () => {
  provideChromium();
  cluster = clusterClients();
  namespace = await createTestNamespace('where');
  const environment = await cofferEnvironment(namespace.name);
  [{ api, token }, browser] = await Promise.all([startApi(environment), launchBrowser()]);
  // at debug level: the log says which changes it routes and what it reconciles
  operator = await startOperatorProcess({ ...environment, COFFER_LOG_LEVEL: 'debug' });
  await cluster.apply('secretsprojects', namespace.name, { kind: 'SecretsProject', metadata: { name: 'shop' }, spec: { name: 'Shop', slug } });
  projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'shop')).status.projectId;
  expect((await callCoffer(api, 'POST', '/api/v1/folders', token, { workspaceId: projectId, environment: 'dev', name: 'where' })).status).toBe(200);
  await putSecret(api, token, { projectId, environment: 'dev', secretPath: '/where' }, 'DB_PASSWORD', VALUES.first);
  // a Secret of someone else's, which the second Integration may not take
  await cluster.core.createNamespacedSecret({ namespace: namespace.name, body: { metadata: { name: 'taken-secrets' }, stringData: { OWNER: 'someone else' } } });
  for (const [name, target] of [
    ['app', 'app-secrets'],
    ['taken', 'taken-secrets'],
  ]) {
    await cluster.apply('integrations', namespace.name, {
      kind: 'Integration',
      metadata: { name },
      spec: { projectRef: { name: 'shop' }, environment: 'dev', secretPath: '/where', target: { name: target } },
    });
  }
  await cluster.waitReady('integrations', namespace.name, 'app', 'Synced');
  page = await browser.newPage();
  answers = recordApiAnswers(page);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  await namespace?.cleanup();
});

test('after an edit in the console, the Where it goes screen shows the Integration reach the new revision; the failing one its reason; no value loaded', async () => {
  await page.goto(`${api.api}/projects/${projectId}?env=dev&path=%2Fwhere`);
  await signInThroughForm(page, USER);
  await saveAndFollow(page, 'DB_PASSWORD', VALUES.edited);

  const delivery = page.getByRole('region', { name: /^Your save of DB_PASSWORD, revision \d+$/ });
  const revision = Number(/revision (\d+)$/.exec((await delivery.getAttribute('aria-label'))!)![1]);
  await delivery.getByText(`local / ${namespace.name} / app: Reached (at revision ${revision})`).waitFor({ timeout: 60_000 });
  // the answer came from the cluster: the Secret holds the edit, at the revision the screen names
  const secret = await cluster.secret(namespace.name, 'app-secrets');
  expect(Buffer.from(secret!.data!.DB_PASSWORD!, 'base64').toString()).toBe(VALUES.edited);
  expect((await cluster.get('integrations', namespace.name, 'app')).status.syncedRevision).toBeGreaterThanOrEqual(revision);

  await delivery.getByText(new RegExp(`^local / ${namespace.name} / taken: Failing: .*exists and is not managed by this Integration`)).waitFor();
  const taken = page.getByRole('table').getByRole('row', { name: /^taken / });
  await taken.getByText(/^Failing: .*exists and is not managed by this Integration/).waitFor();
  await expectAccessible(page, 'where it goes, on the real control plane');

  expect(await valuesInPage(page, Object.values(VALUES))).toEqual([]);
  expect(answersHolding(answers, Object.values(VALUES))).toEqual([]);
});

/** The workloads the API names as reading `key` of /where through the Integration `app`, as `Kind/name` (every key: `*`). */
async function readersOf(key: string): Promise<string[] | undefined> {
  const answer = await callCoffer(api, 'GET', `/api/v1/workspace/${projectId}/integrations/syncing?environment=dev&secretPath=%2Fwhere&key=${key}`, token);
  const app = answer.body.integrations.find((integration: { name: string }) => integration.name === 'app');
  return app?.keys?.workloads?.map((workload: { kind: string; name: string; everyKey: boolean }) => `${workload.kind}/${workload.name}${workload.everyKey ? '*' : ''}`);
}

const deployment = (name: string, container: object) => ({
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'example.com/app:1', ...container }] } },
  },
});

test('a Deployment reading DB_PASSWORD by secretKeyRef and one reading the Secret by envFrom appear under the keys they read; removing the reference removes it', async () => {
  await putSecret(api, token, { projectId, environment: 'dev', secretPath: '/where' }, 'API_KEY', VALUES.apiKey);
  const keyRef = { env: [{ name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'app-secrets', key: 'DB_PASSWORD' } } }] };
  await cluster.apps.createNamespacedDeployment({ namespace: namespace.name, body: deployment('api', keyRef) });
  await cluster.apps.createNamespacedDeployment({ namespace: namespace.name, body: deployment('worker', { envFrom: [{ secretRef: { name: 'app-secrets' } }] }) });

  const both = ['Deployment/api', 'Deployment/worker*'];
  await waitFor('both Deployments reported as reading DB_PASSWORD', async () => JSON.stringify(await readersOf('DB_PASSWORD')) === JSON.stringify(both));
  await waitFor('the envFrom one alone as reading API_KEY', async () => JSON.stringify(await readersOf('API_KEY')) === JSON.stringify(['Deployment/worker*']));

  // in the console: the key picked, its readers in the Integration's row
  await page.goto(`${api.api}/projects/${projectId}/where?env=dev&path=%2Fwhere`);
  await page.getByLabel('Key').selectOption('DB_PASSWORD');
  await page.getByRole('heading', { name: 'Shop: where DB_PASSWORD goes' }).waitFor();
  const app = page.getByRole('table').getByRole('row', { name: /^app / });
  await expect.poll(() => app.getByRole('listitem').allTextContents()).toEqual(['Deployment api', 'Deployment worker (every key)']);
  await expectAccessible(page, 'where one key goes, on the real control plane');
  // from here the screen stays open: a document load would be a reload
  const requests: string[] = [];
  page.on('request', (request) => void (request.resourceType() === 'document' && requests.push(request.url())));

  // with the screen open, no reload: a Deployment that starts reading DB_PASSWORD appears (its report reaches the change stream)
  const from = operator.output.length;
  await cluster.apps.createNamespacedDeployment({ namespace: namespace.name, body: deployment('late', keyRef) });
  await expect
    .poll(() => app.getByRole('listitem').allTextContents(), { timeout: 30_000 })
    .toEqual(['Deployment api', 'Deployment late', 'Deployment worker (every key)']);
  // the operator's own report change woke the console, not the operator: a later integration change (a manual sync,
  // committed after it; the operator routes changes in revision order) is the first it routes, and app was reconciled once before it
  const { integrationId } = (await cluster.get('integrations', namespace.name, 'app')).status;
  const manual = await callCoffer(api, 'POST', `/api/v1/integration/${integrationId}/sync`, token);
  expect(manual.status).toBe(200);
  const revision = Number(manual.headers.get('coffer-revision'));
  const routedLine = `change ${revision} (integration) affects`;
  const lines = await waitFor('the operator to route the manual sync', () => {
    const messages = logLines(operator.output, from).map((line) => line.msg);
    return messages.some((msg) => msg.startsWith(routedLine)) && messages;
  });
  const before = lines.slice(
    0,
    lines.findIndex((msg) => msg.startsWith(routedLine)),
  );
  expect(before.filter((msg) => /^change \d+ \(integration\)/.test(msg))).toEqual([]);
  expect(before.filter((msg) => msg === `reconciling Integration ${namespace.name}/app`)).toHaveLength(1);

  // the reference removed from the pod template: api no longer reads DB_PASSWORD (its status changes are not what wakes this); the open screen follows
  await cluster.apps.patchNamespacedDeployment(
    { namespace: namespace.name, name: 'api', body: [{ op: 'remove', path: '/spec/template/spec/containers/0/env' }] },
    setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
  );
  await expect.poll(() => app.getByRole('listitem').allTextContents(), { timeout: 30_000 }).toEqual(['Deployment late', 'Deployment worker (every key)']);
  expect(await readersOf('DB_PASSWORD')).toEqual(['Deployment/late', 'Deployment/worker*']);
  expect(requests).toEqual([]);

  expect(await valuesInPage(page, Object.values(VALUES))).toEqual([]);
  expect(answersHolding(answers, Object.values(VALUES))).toEqual([]);
});
