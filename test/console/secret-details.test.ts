import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ADMIN, launchBrowser, startConsoleServer } from './console-server.ts';
import { expectAccessible } from './page-checks.ts';

/**
 * A secret's details in a real browser: where an imported secret and a `${…}` reference come from, tags edited on a
 * secret, and the signed-in user's personal value of a key (set, revealed, deleted) while the shared one stays.
 */
const VALUES = { shared: 'shared-value-51c0de', personal: 'personal-value-9e22af', imported: 'imported-value-77aa01' };

let server: Awaited<ReturnType<typeof startConsoleServer>>;
let browser: Browser;
let page: Page;
let projectId: string;
const network: string[] = [];

async function call(method: string, url: string, body?: unknown) {
  const answer = await server.app.request(method, url, { token: server.admin.token, body });
  if (answer.status !== 200) throw new Error(`${method} ${url} → ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startConsoleServer(), launchBrowser()]);
  ({
    project: { id: projectId },
  } = await call('POST', '/api/v2/workspace', { projectName: 'Details' }));
  const place = { projectId, secretPath: '/' };
  await call('POST', '/api/v4/secrets/batch', {
    ...place,
    environment: 'dev',
    secrets: [
      { secretKey: 'API_TOKEN', secretValue: VALUES.shared },
      { secretKey: 'DB_URL', secretValue: 'postgres://${DB_HOST}/${prod.app.DB_NAME}' },
      { secretKey: 'DB_HOST', secretValue: 'db.internal' },
    ],
  });
  await call('POST', '/api/v1/folders', { workspaceId: projectId, environment: 'prod', path: '/', name: 'app' });
  await call('POST', '/api/v4/secrets/DB_NAME', { projectId, environment: 'prod', secretPath: '/app', secretValue: 'orders' });
  await call('POST', '/api/v4/secrets/SHARED_KEY', { projectId, environment: 'staging', secretPath: '/', secretValue: VALUES.imported });
  await call('POST', '/api/v1/secret-imports', { projectId, environment: 'dev', path: '/', import: { environment: 'staging', path: '/' } });

  page = await browser.newPage();
  page.setDefaultTimeout(10_000);
  page.on(
    'response',
    (response) =>
      void response.text().then(
        (body) => network.push(body),
        () => undefined,
      ),
  );
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(server.origin + '/');
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  await page.goto(`${server.origin}/projects/${projectId}?env=dev&path=/`);
  await page.getByRole('row', { name: /API_TOKEN/ }).waitFor();
});
afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

test('an imported secret shows where it comes from, and a revealed reference where it reads from', async () => {
  await page.getByRole('table', { name: 'Secrets imported into this folder' }).getByRole('row', { name: 'SHARED_KEY staging:/' }).waitFor();
  await page.getByRole('button', { name: 'Reveal DB_URL' }).click();
  const references = page.getByRole('list', { name: 'References' });
  await references.getByText('${DB_HOST} reads DB_HOST from dev:/').waitFor();
  await references.getByText('${prod.app.DB_NAME} reads DB_NAME from prod:/app').waitFor();
  await expectAccessible(page, 'secrets with imports and references');
  // the imported value was never in an answer: the listing is masked
  expect(network.filter((body) => body.includes(VALUES.imported))).toEqual([]);
});

test('tags are put on a secret and taken off it', async () => {
  await page.getByRole('button', { name: 'Edit API_TOKEN' }).click();
  const edit = page.getByRole('form', { name: 'Edit API_TOKEN' });
  await edit.getByLabel('New tag').fill('payments');
  await edit.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('row', { name: /API_TOKEN.*payments/ }).waitFor();
  await page.getByRole('button', { name: 'Edit API_TOKEN' }).click();
  await expectAccessible(page, 'edit with tags');
  await edit.getByLabel('payments').uncheck();
  await edit.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved API_TOKEN').waitFor();
  const { secret } = await call('GET', `/api/v4/secrets/API_TOKEN?projectId=${projectId}&environment=dev&secretPath=/`);
  expect(secret.tags).toEqual([]);
});

test("a personal value is the user's own: set, revealed and deleted while the shared one stays", async () => {
  await page.getByRole('button', { name: 'Personal value of API_TOKEN' }).click();
  const panel = page.getByRole('region', { name: 'Personal value of API_TOKEN' });
  await panel.getByText('No personal value of API_TOKEN').waitFor();
  await panel.getByLabel('Personal value', { exact: true }).fill(VALUES.personal);
  await panel.getByRole('button', { name: 'Set personal value' }).click();
  await page.getByRole('row', { name: /API_TOKEN.*personal value set/ }).waitFor();
  await expectAccessible(page, 'personal value');
  expect(await page.evaluate('document.documentElement.outerHTML')).not.toContain(VALUES.personal);
  await panel.getByRole('button', { name: 'Reveal personal value' }).click();
  await panel.getByText(VALUES.personal).waitFor();
  // the shared value is unchanged, for everyone else
  const { secret } = await call('GET', `/api/v4/secrets/API_TOKEN?projectId=${projectId}&environment=dev&secretPath=/`);
  expect(secret.secretValue).toBe(VALUES.shared);

  await panel.getByRole('button', { name: 'Delete personal value' }).click();
  await page.getByText('Deleted your personal value of API_TOKEN').waitFor();
  await expect.poll(() => page.getByText('personal value set').count()).toBe(0);
});
