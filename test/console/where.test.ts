import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { playedOperator } from '../support/played-operator.ts';
import { ADMIN, launchBrowser, startConsoleServer } from './console-server.ts';
import { answersHolding, expectAccessible, recordApiAnswers, saveAndFollow, signInThroughForm, valuesInPage } from './page-checks.ts';

/**
 * The "Where it goes" screen in a real browser, with the operator of cluster `east` played through the operator API
 * (test/cluster/console-where.test.ts runs the same journey against the real control plane and operator): the
 * Integrations syncing a secret's folder, one failing with its reason, a new one appearing live through the change
 * stream, and an edit made in the console followed until it reached the cluster. No value is loaded.
 */
const VALUES = { first: 'where-first-value-3b9d', edited: 'where-edited-value-8c21' };
const CONFLICT = 'Secret shop/taken-secret exists and is not managed by this Integration; use creationPolicy Merge to add keys to it';

let server: Awaited<ReturnType<typeof startConsoleServer>>;
let browser: Browser;
let page: Page;
let answers: { url: string; body: string }[];
let projectId: string;
let operator: Awaited<ReturnType<typeof playedOperator>>;
const ids: Partial<Record<'app' | 'taken' | 'late', string>> = {};

async function call(method: string, url: string, body?: unknown) {
  const response = await server.app.request(method, url, { token: server.admin.token, body });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response;
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startConsoleServer(), launchBrowser()]);
  projectId = (await call('POST', '/api/v2/workspace', { projectName: 'Shop', slug: 'shop-where' })).body.project.id;
  for (const name of ['app', 'ops']) await call('POST', '/api/v1/folders', { workspaceId: projectId, environment: 'dev', name });
  await call('POST', '/api/v3/secrets/raw/DB_PASSWORD', { workspaceId: projectId, environment: 'dev', secretPath: '/app', secretValue: VALUES.first });
  const admin = { token: server.admin.token, orgId: server.admin.orgId };
  operator = await playedOperator(server.app, admin, projectId, 'east');
  ids.app = await operator.record('app', 'dev', '/app');
  ids.taken = await operator.record('taken', 'dev', '/app');
  await operator.record('ops', 'dev', '/ops');
  const revision = Number(
    (await call('PATCH', '/api/v3/secrets/raw/DB_PASSWORD', { workspaceId: projectId, environment: 'dev', secretPath: '/app', secretValue: VALUES.first + '!' })).headers[
      'coffer-revision'
    ],
  );
  await operator.syncResult(ids.app, { isSynced: true, syncMessage: null, syncedRevision: revision }, [{ environment: 'dev', path: '/app' }]);
  await operator.syncResult(ids.taken, { isSynced: false, syncMessage: CONFLICT });

  page = await browser.newPage();
  answers = recordApiAnswers(page);
});
afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

const row = (name: string) => page.getByRole('table').getByRole('row', { name: new RegExp(`^${name} `) });

test('the Integrations syncing a secret, one failing with its reason, a new one live, and an edit followed to the cluster; no value loaded', async () => {
  await page.goto(`${server.origin}/projects/${projectId}?env=dev&path=%2Fapp`);
  await signInThroughForm(page, ADMIN);
  await page.getByRole('button', { name: 'Where DB_PASSWORD goes' }).click();

  await page.getByRole('heading', { name: 'Shop: where DB_PASSWORD goes' }).waitFor();
  await page.getByText('Following changes live.').waitFor();
  await row('app').getByText('Synced', { exact: true }).waitFor();
  expect(await row('app').textContent()).toContain('east');
  expect(await row('app').textContent()).toContain('app-secret');
  await row('taken').getByText(`Failing: ${CONFLICT}`).waitFor();
  expect(await page.getByRole('table').getByRole('row').count()).toBe(3); // the header and the two reading /app; not ops
  await expectAccessible(page, 'where it goes');

  // an Integration recorded now appears without a reload (the change stream)
  ids.late = await operator.record('late', 'dev', '/app');
  await row('late').getByText('Not synced yet').waitFor();

  // an edit in the console, followed to the cluster
  await page.getByRole('link', { name: 'Back to the secrets of dev:/app' }).click();
  await saveAndFollow(page, 'DB_PASSWORD', VALUES.edited);
  const saved = await latestRevision();
  const delivery = page.getByRole('region', { name: `Your save of DB_PASSWORD, revision ${saved}` });
  await delivery.getByText('east / shop / app: Waiting for its operator…').waitFor();
  await delivery.getByText(`east / shop / taken: Failing: ${CONFLICT}`).waitFor();

  await operator.syncResult(ids.app!, { isSynced: true, syncMessage: null, syncedRevision: saved });
  await operator.syncResult(ids.late, { isSynced: true, syncMessage: null, syncedRevision: saved }, [{ environment: 'dev', path: '/app' }]);
  await delivery.getByText(`east / shop / app: Reached (at revision ${saved})`).waitFor();
  await delivery.getByText(`east / shop / late: Reached (at revision ${saved})`).waitFor();
  await delivery.getByText('1 of 3 not reached yet, 1 failing.').waitFor();
  await expect
    .poll(() =>
      row('app')
        .getByRole('cell', { name: String(saved), exact: true })
        .count(),
    )
    .toBe(1);
  await expectAccessible(page, 'where it goes, a save followed');

  expect(await valuesInPage(page, Object.values(VALUES))).toEqual([]);
  expect(answersHolding(answers, Object.values(VALUES))).toEqual([]);
});

async function latestRevision(): Promise<number> {
  const row = await server.app.database.db
    .selectFrom('changeLog')
    .select((eb) => eb.fn.max('revision').as('revision'))
    .executeTakeFirstOrThrow();
  return Number(row.revision);
}
