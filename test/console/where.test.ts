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
const VALUES = { first: 'where-first-value-3b9d', edited: 'where-edited-value-8c21', apiKey: 'where-api-key-value-51e0' };
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

test('a key picked with the keyboard: only the Integrations whose Secret holds it, and the workloads that read it; the whole folder again', async () => {
  await call('POST', '/api/v3/secrets/raw/API_KEY', { workspaceId: projectId, environment: 'dev', secretPath: '/app', secretValue: VALUES.apiKey });
  const report = (keys: { key: string; as?: string }[], readers: { name: string; keys: string[] | null }[]) => ({
    carried: [{ environment: 'dev', path: '/app', keys }],
    templated: 0,
    carriedTruncated: false,
    readers: readers.map((reader) => ({ kind: 'Deployment', namespace: 'shop', ...reader })),
    readersTruncated: false,
  });
  const synced = { isSynced: true, syncMessage: null };
  await operator.syncResult(ids.app!, {
    ...synced,
    targetKeys: report(
      [{ key: 'API_KEY', as: 'APP_API_KEY' }, { key: 'DB_PASSWORD' }],
      [
        { name: 'api', keys: ['DB_PASSWORD'] },
        { name: 'worker', keys: null },
      ],
    ),
  });
  await operator.syncResult(ids.late!, { ...synced, targetKeys: report([{ key: 'DB_PASSWORD' }], []) });
  const rows = () => page.getByRole('table').getByRole('row').count();
  const readers = (name: string) => row(name).getByRole('listitem').allTextContents();

  await page.goto(`${server.origin}/projects/${projectId}/where?env=dev&path=%2Fapp`);
  await page.getByRole('heading', { name: 'Shop: where dev:/app goes' }).waitFor();
  await row('app').getByText('API_KEY as APP_API_KEY, DB_PASSWORD').waitFor();
  expect(await readers('app')).toEqual(['Deployment api: DB_PASSWORD', 'Deployment worker: every key']);
  await row('taken').getByText('Not reported yet by its operator').waitFor();
  await expect.poll(rows).toBe(4);

  // the Key list, from the keyboard: the whole folder, API_KEY, DB_PASSWORD
  await page.getByLabel('Key').focus();
  await page.keyboard.press('ArrowDown');
  await page.getByRole('heading', { name: 'Shop: where API_KEY goes' }).waitFor();
  expect(new URL(page.url()).searchParams.get('key')).toBe('API_KEY');
  await row('app').getByText('Holds it as APP_API_KEY').waitFor();
  expect(await readers('app')).toEqual(['Deployment worker (every key)']);
  // its operator has not said what its Secret holds: it may hold the key, so it stays
  await row('taken').getByText('Not reported yet by its operator').waitFor();
  await expect.poll(rows).toBe(3);
  await expectAccessible(page, 'where one key goes');

  await page.keyboard.press('ArrowDown');
  await page.getByRole('heading', { name: 'Shop: where DB_PASSWORD goes' }).waitFor();
  await row('late').getByText('Holds it', { exact: true }).waitFor();
  await expect.poll(() => readers('app')).toEqual(['Deployment api', 'Deployment worker (every key)']);
  await row('late').getByText('No workload reads it').waitFor();
  await expect.poll(rows).toBe(4);

  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  await page.getByRole('heading', { name: 'Shop: where dev:/app goes' }).waitFor();
  expect(new URL(page.url()).searchParams.has('key')).toBe(false);
  await expect.poll(rows).toBe(4);
  await expectAccessible(page, 'where the whole folder goes, with its keys');

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
