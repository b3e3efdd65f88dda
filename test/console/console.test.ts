import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ADMIN, launchBrowser, startConsoleServer } from './console-server.ts';
import { answersHolding, expectAccessible as expectAccessibleOn, recordApiAnswers, valuesInPage as valuesIn } from './page-checks.ts';

/**
 * The console in a real browser (one chromium for the file, one page through the journey): sign in by keyboard →
 * create a project → add secrets → compare environments → reveal (audited) → the project's access → edit → roll back, with an
 * accessibility check of every screen in both themes, no value in the page or the network before it is revealed,
 * a value of HTML shown as text, and a forged write refused.
 */
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
const VALUES = { hostile: HOSTILE, prod: 'prod-value-7f3a91', pasted: 'pasted-value-c2e4d8', edited: 'edited-value-91b0aa' };

let server: Awaited<ReturnType<typeof startConsoleServer>>;
let browser: Browser;
let page: Page;
/** Every /api answer the page loaded, in order (bodies as text). */
let network: { url: string; body: string }[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startConsoleServer(), launchBrowser()]);
  page = await browser.newPage();
  network = recordApiAnswers(page);
  page.on('dialog', (dialog) => void dialog.accept());
});
afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

const expectAccessible = (screen: string) => expectAccessibleOn(page, screen);
const valuesInPage = () => valuesIn(page, Object.values(VALUES));

test('sign in by keyboard, create a project, add secrets, compare, reveal, edit and roll back', async () => {
  await page.goto(server.origin + '/');
  await page.getByRole('heading', { name: 'Sign in to Coffer' }).waitFor();
  await expectAccessible('sign-in');
  await page.keyboard.press('Tab');
  await page.keyboard.type(ADMIN.email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(ADMIN.password);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  await expect.poll(() => page.getByText('No projects yet').count()).toBe(1);
  await expectAccessible('projects, empty');

  await page.getByLabel('New project name').fill('Journey');
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.getByRole('heading', { name: 'Journey: secrets' }).waitFor();
  await page.getByText('No secrets here yet').waitFor();
  await expectAccessible('secrets, empty');

  // a value that is HTML and script, typed into the form
  const add = page.getByRole('form', { name: 'Add a secret' });
  await add.getByLabel('Key').fill('API_KEY');
  await add.getByLabel('Value').fill(VALUES.hostile);
  await add.getByRole('button', { name: 'Add secret' }).click();
  await page.getByRole('row', { name: /API_KEY/ }).waitFor();
  // a pasted .env file
  await page.getByLabel('.env text (KEY=value lines)').fill(`# pasted\nexport PASTED="${VALUES.pasted}"\nEMPTY=\n`);
  await page.getByRole('button', { name: 'Add all' }).click();
  await page.getByRole('row', { name: /PASTED/ }).waitFor();
  // prod has its own value
  await page.getByRole('group', { name: 'Environment' }).getByRole('button', { name: 'Production' }).click();
  await page.getByText('No secrets here yet').waitFor();
  await add.getByLabel('Key').fill('API_KEY');
  await add.getByLabel('Value').fill(VALUES.prod);
  await add.getByRole('button', { name: 'Add secret' }).click();
  await page.getByRole('row', { name: /API_KEY/ }).waitFor();

  // nothing revealed yet: no value in the page, nor in any answer the page loaded
  expect(await valuesInPage()).toEqual([]);
  expect(network.length).toBeGreaterThan(5);
  expect(answersHolding(network, Object.values(VALUES))).toEqual([]);
  await expectAccessible('secrets, listed');

  await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Compare' }).click();
  await page.getByRole('heading', { name: 'Journey: compare environments' }).waitFor();
  const row = page.getByRole('row', { name: /API_KEY/ });
  await row.waitFor();
  await expect
    .poll(() =>
      page
        .getByRole('row', { name: /PASTED/ })
        .getByText('missing')
        .count(),
    )
    .toBe(2);
  await expectAccessible('compare');
  await row.getByRole('button', { name: 'Reveal API_KEY in Development' }).click();
  await row.getByText(VALUES.hostile).waitFor();
  await row.getByRole('button', { name: 'Reveal API_KEY in Production' }).click();
  await row.getByText(VALUES.prod).waitFor();
  // the HTML was shown as text: no element was made of it and no script ran
  expect(await page.evaluate('window.__pwned')).toBeUndefined();
  expect(await page.locator('img[src="x"]').count()).toBe(0);

  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.getByRole('heading', { name: 'Journey: audit log' }).waitFor();
  await page.getByLabel('Event type').fill('reveal-secret');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect.poll(() => page.locator('td.event', { hasText: 'reveal-secret' }).count()).toBe(2);
  await expectAccessible('audit log');

  await page.getByRole('link', { name: 'Access' }).click();
  await page.getByRole('heading', { name: 'Journey: access' }).waitFor();
  await page.getByRole('row', { name: `${ADMIN.email} admin` }).waitFor();
  await page.getByText('No machine identity can reach this project.').waitFor();
  await expectAccessible('access');

  // edit in dev, then roll back to the first version
  await page.getByRole('link', { name: 'Secrets' }).click();
  await page.getByRole('group', { name: 'Environment' }).getByRole('button', { name: 'Development' }).click();
  await page.getByRole('button', { name: 'Edit API_KEY' }).click();
  const edit = page.getByRole('form', { name: 'Edit API_KEY' });
  await edit.getByLabel('New value (empty keeps it)').fill(VALUES.edited);
  await edit.getByLabel('Comment').fill('rotated');
  await edit.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('row', { name: /API_KEY.*rotated/ }).waitFor();
  await page.getByRole('button', { name: 'History of API_KEY' }).click();
  const history = page.getByRole('region', { name: 'History of API_KEY' });
  await history.getByText('API_KEY is at version 2.').waitFor();
  await history.getByRole('button', { name: 'Compare with current' }).click();
  await history.getByRole('table').getByText(VALUES.edited).waitFor();
  await expectAccessible('history');
  await history.getByRole('button', { name: 'Roll back to version 1' }).click();
  await page.getByText('Rolled API_KEY back to version 1').waitFor();
  await page.getByRole('button', { name: 'Reveal API_KEY' }).click();
  await page.locator('td.value code.revealed', { hasText: VALUES.hostile }).waitFor();
  expect(await page.evaluate('window.__pwned')).toBeUndefined();

  // the dark theme passes the same check
  await page.getByRole('button', { name: 'Dark theme' }).click();
  expect(await page.evaluate('document.documentElement.dataset.theme')).toBe('dark');
  await expectAccessible('secrets, dark');
});

test('a write from the page without the console header is refused and changes nothing', async () => {
  // the page's own fetch, with its cookie, without the header
  const forged = await page.evaluate(`fetch('/api/v2/workspace', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ projectName: 'Forged' }),
    }).then(async (answer) => ({ status: answer.status, body: await answer.json() }))`);
  expect(forged).toMatchObject({ status: 403, body: { code: 'ConsoleHeaderMissing' } });
  const projects = await server.app.request('GET', '/api/v1/workspace', { token: server.admin.token });
  expect(projects.body.workspaces.map((project: any) => project.name)).toEqual(['Journey']);
});

test('sign-out ends the session: the old cookie is refused', async () => {
  const [cookie] = await page.context().cookies();
  expect(cookie).toMatchObject({ name: 'coffer_console', httpOnly: true, sameSite: 'Strict', path: '/api' });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to Coffer' }).waitFor();
  await page.getByText('You have signed out.').waitFor();
  const replay = await server.app.app.inject({
    method: 'GET',
    url: '/api/v1/console/session',
    headers: { cookie: `${cookie!.name}=${cookie!.value}`, 'x-coffer-console': '1' },
  });
  expect(replay.statusCode).toBe(401);
});
