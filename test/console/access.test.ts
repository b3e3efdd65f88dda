import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { otherOrganization } from '../support/access-fixture.ts';
import { ADMIN, launchBrowser, startConsoleServer } from './console-server.ts';
import { expectAccessible } from './page-checks.ts';

/**
 * The console's access and audit screens in a real browser: an admin invites a user (the token shown once), makes a
 * project, adds the user and changes their role, defines a custom role, grants a namespace, creates a machine identity
 * whose client secret is shown once and never again (page, reload, network), revokes it, and reads and exports the
 * organization's audit log; the invited user, a project member, sees only the actions their permissions allow, and a
 * refusal by the API as a message. Every screen passes axe-core; writes without the console header are refused.
 */
const BOB = { email: 'bob@example.com', password: 'bob has a long password' };

let server: Awaited<ReturnType<typeof startConsoleServer>>;
let browser: Browser;
let admin: BrowserContext;
let page: Page;
/** Every /api answer the admin's page loaded (bodies as text). */
const network: { method: string; url: string; body: string }[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startConsoleServer(), launchBrowser()]);
  admin = await browser.newContext({ acceptDownloads: true });
  page = await admin.newPage();
  page.setDefaultTimeout(10_000);
  page.on('response', (response) => {
    if (!new URL(response.url()).pathname.startsWith('/api/')) return;
    void response.text().then(
      (body) => network.push({ method: response.request().method(), url: response.url(), body }),
      () => undefined,
    );
  });
  page.on('dialog', (dialog) => void dialog.accept());
});
afterAll(async () => {
  await browser?.close();
  await server?.app.close();
});

async function signIn(on: Page, who: { email: string; password: string }) {
  await on.goto(server.origin + '/');
  await on.getByLabel('Email').fill(who.email);
  await on.getByLabel('Password').fill(who.password);
  await on.getByRole('button', { name: 'Sign in' }).click();
  await on.getByRole('heading', { name: 'Projects' }).waitFor();
}

const html = (on: Page): Promise<string> => on.evaluate('document.documentElement.outerHTML');
const orgLink = (on: Page, name: string) => on.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name });

let projectId: string;

test('an admin invites a user, adds them to a project, changes their role, defines a role and grants a namespace', async () => {
  await signIn(page, ADMIN);
  await orgLink(page, 'Members').click();
  await page.getByRole('heading', { name: 'Organization members' }).waitFor();
  await expectAccessible(page, 'organization members');
  const invite = page.getByRole('form', { name: 'Invite a user' });
  await invite.getByLabel('Email').fill(BOB.email);
  await invite.getByRole('button', { name: 'Invite' }).click();
  const shown = page.getByRole('region', { name: /Invite token for bob@example.com/ });
  const inviteToken = (await shown.locator('code').textContent())!;
  expect(inviteToken.length).toBeGreaterThan(20);
  await expectAccessible(page, 'invite token shown once');
  await shown.getByRole('button', { name: 'I have saved it' }).click();
  await page.getByRole('row', { name: /bob@example.com member invited/ }).waitFor();
  expect(await html(page)).not.toContain(inviteToken);
  const accepted = await server.app.request('POST', '/api/v1/invite-org/accept', {
    body: { email: BOB.email, organizationId: server.admin.orgId, inviteToken, password: BOB.password },
  });
  expect(accepted.status).toBe(200);

  await page.getByRole('link', { name: 'Coffer' }).click();
  await page.getByLabel('New project name').fill('Team');
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.getByRole('heading', { name: 'Team: secrets' }).waitFor();
  projectId = new URL(page.url()).pathname.split('/')[2]!;
  await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Access' }).click();
  await page.getByRole('heading', { name: 'Team: access' }).waitFor();

  const add = page.getByRole('form', { name: 'Add a member' });
  await add.getByLabel('Email of an organization user').fill(BOB.email);
  await add.getByLabel('Role').selectOption('viewer');
  await add.getByRole('button', { name: 'Add member' }).click();
  await page.getByText(`Added ${BOB.email}`).waitFor();
  await page.getByRole('row', { name: /^bob@example.com viewer/ }).waitFor();
  await page.getByLabel(`Role of ${BOB.email}`).selectOption('member');
  await page.getByText(`${BOB.email} is now member`).waitFor();
  await page.getByRole('row', { name: /^bob@example.com member/ }).waitFor();
  await expectAccessible(page, 'project access');

  await page.getByRole('button', { name: 'New custom role' }).click();
  const role = page.getByRole('form', { name: 'New custom role' });
  await role.getByLabel('Slug', { exact: true }).fill('secret-reader');
  await role.getByLabel('Name', { exact: true }).fill('Secret reader');
  await role.getByLabel('read secrets', { exact: true }).check();
  await role.getByLabel('Environment of secrets').fill('dev');
  await role.getByLabel('Path of secrets').fill('/app/**');
  await expectAccessible(page, 'role editor');
  await role.getByRole('button', { name: 'Create role' }).click();
  await page.getByText('Created role secret-reader').waitFor();
  await page.getByRole('row', { name: /Secret reader secret-reader can read secrets where/ }).waitFor();
  await page.getByRole('button', { name: 'Edit role secret-reader' }).click();
  const edit = page.getByRole('form', { name: 'Edit role secret-reader' });
  expect(await edit.getByLabel('Path of secrets').inputValue()).toBe('/app/**');
  await edit.getByLabel('read tags', { exact: true }).check();
  await edit.getByRole('button', { name: 'Save role' }).click();
  await page.getByText('Saved role secret-reader').waitFor();
  const { body: stored } = await server.app.request('GET', `/api/v1/workspace/${projectId}/roles/slug/secret-reader`, { token: server.admin.token });
  expect(stored.role.permissions).toEqual([
    { subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } },
    { subject: 'tags', action: ['read'] },
  ]);
  // the new role is offered to members at once
  await page.getByLabel(`Role of ${BOB.email}`).locator('option', { hasText: 'secret-reader' }).waitFor({ state: 'attached' });

  const grant = page.getByRole('form', { name: 'Grant a namespace' });
  await grant.getByLabel('Namespace').fill('shop');
  await grant.getByRole('button', { name: 'Grant namespace' }).click();
  await page.getByRole('row', { name: /^shop local admin@example.com/ }).waitFor();
  await expectAccessible(page, 'namespace grants');
  await page.getByRole('button', { name: 'Revoke local/shop' }).click();
  await page.getByText('Revoked namespace shop').waitFor();
  await page.getByText('No namespace may use this project yet.').waitFor();
});

test('a machine identity: its client secret is shown once, then never again in the page or any answer', async () => {
  await orgLink(page, 'Identities').click();
  await page.getByRole('heading', { name: 'Machine identities' }).waitFor();
  const create = page.getByRole('form', { name: 'Create an identity' });
  // the bootstrap's identity is listed
  await page.getByRole('row').nth(1).waitFor();
  await expectAccessible(page, 'identities');
  await create.getByLabel('Name').fill('ci-deployer');
  await create.getByRole('button', { name: 'Create identity' }).click();
  const auth = page.getByRole('region', { name: 'Universal auth of ci-deployer' });
  await auth.getByText('No client secret yet').waitFor();
  await auth.getByLabel('Description').fill('pipeline');
  await auth.getByRole('button', { name: 'Create client secret' }).click();
  const once = page.getByRole('region', { name: 'New client secret of ci-deployer' });
  const clientSecret = (await once.locator('code').textContent())!;
  expect(clientSecret.length).toBeGreaterThan(20);
  await auth.getByRole('row', { name: /pipeline/ }).waitFor();
  await expectAccessible(page, 'client secret shown once');
  // the secret logs in
  const { body: config } = await server.app.request('GET', `/api/v1/identities`, { token: server.admin.token });
  const identityId: string = config.identities.find((entry: any) => entry.identity.name === 'ci-deployer').identity.id;
  const { body: ua } = await server.app.request('GET', `/api/v1/auth/universal-auth/identities/${identityId}`, { token: server.admin.token });
  const login = await server.app.request('POST', '/api/v1/auth/universal-auth/login', { body: { clientId: ua.identityUniversalAuth.clientId, clientSecret } });
  expect(login.status).toBe(200);

  await once.getByRole('button', { name: 'I have saved it' }).click();
  await expect.poll(() => once.count()).toBe(0);
  expect(await html(page)).not.toContain(clientSecret);
  await page.reload();
  await page.getByRole('button', { name: 'Client secrets of ci-deployer' }).click();
  await auth.getByRole('row', { name: /pipeline/ }).waitFor();
  expect(await html(page)).not.toContain(clientSecret);
  await expect.poll(() => network.filter((answer) => answer.url.includes('/client-secrets') && answer.method === 'GET').length).toBeGreaterThanOrEqual(2);
  // exactly one answer held it: the one that created it
  expect(network.filter((answer) => answer.body.includes(clientSecret)).map((answer) => `${answer.method} ${new URL(answer.url).pathname}`)).toEqual([
    `POST /api/v1/auth/universal-auth/identities/${identityId}/client-secrets`,
  ]);

  await auth.getByRole('button', { name: /Revoke client secret/ }).click();
  await auth.getByText('No client secret yet').waitFor();
  expect((await server.app.request('POST', '/api/v1/auth/universal-auth/login', { body: { clientId: ua.identityUniversalAuth.clientId, clientSecret } })).status).toBe(
    401,
  );

  // the identity joins the project
  await page.goto(`${server.origin}/projects/${projectId}/access`);
  const add = page.getByRole('form', { name: 'Add an identity' });
  await add.getByLabel('Role').selectOption('viewer');
  await add.getByRole('button', { name: 'Add identity' }).click();
  await page.getByRole('row', { name: /^ci-deployer universal-auth viewer/ }).waitFor();
});

test('the organization audit log filters by event type, actor kind and project, and exports what matches', async () => {
  await orgLink(page, 'Organization audit').click();
  await page.getByRole('heading', { name: 'Acme: audit log' }).waitFor();
  const filters = page.getByRole('form', { name: 'Filter the audit log' });
  await filters.getByLabel('Event type').fill('create-identity-universal-auth-client-secret,create-project-role');
  await filters.getByLabel('Actor kind').selectOption('user');
  await filters.getByRole('button', { name: 'Filter' }).click();
  await expect.poll(() => page.locator('td.event').allTextContents()).toEqual(['create-identity-universal-auth-client-secret', 'create-project-role']);
  await filters.getByLabel('Project').selectOption({ label: 'Team' });
  await filters.getByRole('button', { name: 'Filter' }).click();
  await expect.poll(() => page.locator('td.event').allTextContents()).toEqual(['create-project-role']);
  await expectAccessible(page, 'organization audit log');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
  const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
  expect(exported.map((entry: any) => entry.event.type)).toEqual(['create-project-role']);
});

test('writes without the console header are refused and change nothing', async () => {
  const forged = await page.evaluate(`Promise.all([
      fetch('/api/v1/identities', { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'forged', organizationId: ${JSON.stringify(server.admin.orgId)} }) }),
      fetch('/api/v1/workspace/${projectId}/namespace-grants', { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ namespace: 'forged' }) }),
    ]).then((answers) => Promise.all(answers.map(async (answer) => ({ status: answer.status, code: (await answer.json()).code }))))`);
  expect(forged).toEqual([
    { status: 403, code: 'ConsoleHeaderMissing' },
    { status: 403, code: 'ConsoleHeaderMissing' },
  ]);
  const { body: identities } = await server.app.request('GET', '/api/v1/identities', { token: server.admin.token });
  expect(identities.identities.map((entry: any) => entry.identity.name).sort()).not.toContain('forged');
  const { body: grants } = await server.app.request('GET', `/api/v1/workspace/${projectId}/namespace-grants`, { token: server.admin.token });
  expect(grants.grants).toEqual([]);
});

test('a project member sees only the actions they may take, and a refusal as a message', async () => {
  const context = await browser.newContext();
  const bob = await context.newPage();
  await signIn(bob, BOB);
  await bob.goto(`${server.origin}/projects/${projectId}/access`);
  await bob.getByRole('heading', { name: 'Team: access' }).waitFor();
  await bob.getByRole('row', { name: /^bob@example.com member/ }).waitFor();
  await bob.getByRole('row', { name: /Secret reader/ }).waitFor();
  // a member may add members and manage the project's identities, and neither change members' roles, remove members, define roles nor grant namespaces
  await bob.getByRole('form', { name: 'Add a member' }).waitFor();
  await bob.getByLabel('Role of ci-deployer').waitFor();
  await bob.getByRole('button', { name: 'Remove ci-deployer' }).waitFor();
  for (const hidden of [
    bob.getByLabel(`Role of ${ADMIN.email}`),
    bob.getByRole('button', { name: `Remove ${ADMIN.email}` }),
    bob.getByRole('button', { name: 'New custom role' }),
    bob.getByRole('button', { name: /^Edit role/ }),
  ]) {
    expect(await hidden.count()).toBe(0);
  }
  expect(await bob.getByRole('form', { name: 'Grant a namespace' }).count()).toBe(0);
  await expectAccessible(bob, 'project access as a member');

  // inviting is an organization admin's: the API refuses, the page says so
  await orgLink(bob, 'Members').click();
  const invite = bob.getByRole('form', { name: 'Invite a user' });
  await invite.getByLabel('Email').fill('carol@example.com');
  await invite.getByRole('button', { name: 'Invite' }).click();
  await bob
    .getByRole('alert')
    .getByText(/^Not allowed: .*member/)
    .waitFor();
  await expectAccessible(bob, 'refusal shown');
  const { body } = await server.app.request('GET', `/api/v2/organizations/${server.admin.orgId}/memberships`, { token: server.admin.token });
  expect(body.users.map((user: any) => user.user.email ?? user.inviteEmail)).not.toContain('carol@example.com');
  await context.close();
});

test('a user of two organizations signs in to the one joined first and switches with the organization picker', async () => {
  const other = await otherOrganization(server.app, 'second');
  const invited = await server.app.request('POST', '/api/v1/invite-org/signup', {
    token: other.token,
    body: { inviteeEmails: [ADMIN.email], organizationId: other.orgId, organizationRoleSlug: 'admin' },
  });
  const accepted = await server.app.request('POST', '/api/v1/invite-org/accept', {
    body: { email: ADMIN.email, organizationId: other.orgId, inviteToken: invited.body.invites[0].inviteToken, password: ADMIN.password },
  });
  expect(accepted.status).toBe(200);

  const context = await browser.newContext();
  const twice = await context.newPage();
  await signIn(twice, ADMIN);
  const picker = twice.getByRole('combobox', { name: 'Organization', exact: true });
  expect(await picker.locator('option').allTextContents()).toEqual(['Acme', other.name]);
  expect(await picker.inputValue()).toBe(server.admin.orgId);
  await twice.getByRole('link', { name: 'Team' }).waitFor();
  await picker.selectOption({ label: other.name });
  await twice.getByText('No projects yet').waitFor();
  await orgLink(twice, 'Organization audit').click();
  await twice.getByRole('heading', { name: `${other.name}: audit log` }).waitFor();
  await expectAccessible(twice, 'second organization');
  await context.close();
});
