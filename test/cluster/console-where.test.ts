import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import provideChromium from '../console/chromium-setup.ts';
import { launchBrowser } from '../console/console-server.ts';
import { answersHolding, expectAccessible, recordApiAnswers, saveAndFollow, signInThroughForm, valuesInPage } from '../console/page-checks.ts';
import { createTestNamespace, type TestNamespace } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, putSecret, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * The console journey's last step on the real control plane: `coffer serve` (its built console) and the operator
 * against the test kube-apiserver, Debian's chromium driving the console. After an edit in the console, its "Where it
 * goes" screen shows the write reaching the Integration's new revision, while the Secret in the cluster holds the new
 * value; an Integration whose Secret belongs to someone else shows its failure's reason. No value in the page or in
 * any answer it loaded. (test/console/where.test.ts covers the screen's other cases with the operator played.)
 */
const USER = { email: 'ops@example.com', password: 'operator test password' };
const VALUES = { first: 'cluster-first-value-71ac', edited: 'cluster-edited-value-0d5e' };

let cluster: Cluster;
let namespace: TestNamespace;
let api: CofferProcess;
let operator: CofferProcess;
let browser: Browser;
let page: Page;
let answers: { url: string; body: string }[];
let projectId: string;
const slug = `where-${Date.now().toString(36)}`;

beforeAll(async () => {
  provideChromium();
  cluster = clusterClients();
  namespace = await createTestNamespace('where');
  const environment = await cofferEnvironment(namespace.name);
  let token: string;
  [{ api, token }, browser] = await Promise.all([startApi(environment), launchBrowser()]);
  operator = await startOperatorProcess(environment);
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
