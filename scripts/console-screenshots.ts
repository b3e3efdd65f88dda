/**
 * Screenshots of the web console's main screens in docs/console/, from a fresh `coffer serve` (embedded PGlite)
 * in Debian's chromium driven by playwright-core. Needs `npm run build` (the npm script does it).
 *
 *   npm run docs:console
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { callCoffer, startCoffer, stopCoffer } from '../test/support/coffer-process.ts';
import { CHROMIUM_FLAGS, seedProject, signIn } from '../test/support/console-demo.ts';
import { playedClusters } from '../test/support/console-where-demo.ts';

const OUT = join(import.meta.dirname, '../docs/console');
mkdirSync(OUT, { recursive: true });
const dataDir = mkdtempSync(join(tmpdir(), 'coffer-console-docs-'));
const server = await startCoffer({ COFFER_DATA_DIR: dataDir, DATABASE_URL: '', COFFER_OPERATOR: 'false', COFFER_LOG_LEVEL: 'warn' }, 300_000);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_FLAGS });
try {
  const { projectId, token, orgId } = await seedProject(server, 'Payments', 12);
  // where the secrets go: three Integrations in two clusters, one of them failing (their operators played over HTTP)
  const clusters = await playedClusters(server, { token, orgId }, projectId, ['eu-west', 'us-east']);
  const root = { environment: 'dev', secretPath: '/' };
  const integrations = {
    euApi: await clusters.record('eu-west', 'payments', 'api', 'payments-env', root),
    usApi: await clusters.record('us-east', 'payments', 'api', 'payments-env', root),
    usWorker: await clusters.record('us-east', 'batch', 'worker', 'worker-env', root),
  };
  const seeded = await callCoffer(server, 'PATCH', '/api/v4/secrets/SERVICE_0002_URL', token, { projectId, ...root, secretValue: 'https://service-0002.internal:8443' });
  const seededRevision = Number(seeded.headers.get('coffer-revision'));
  // what each Secret holds of the folder and which workloads read it, as their operators report it
  const services = Array.from({ length: 12 }, (_, index) => ({ key: `SERVICE_${String(index).padStart(4, '0')}_URL` }));
  const holding = (readers: { name: string; keys: string[] | null }[]) => ({
    carried: [{ environment: 'dev', path: '/', keys: services }],
    templated: 0,
    carriedTruncated: false,
    readers: readers.map((reader) => ({ kind: 'Deployment', namespace: 'payments', ...reader })),
    readersTruncated: false,
  });
  const euKeys = holding([
    { name: 'checkout', keys: ['SERVICE_0001_URL', 'SERVICE_0002_URL'] },
    { name: 'ledger', keys: null },
  ]);
  const usKeys = holding([{ name: 'checkout', keys: ['SERVICE_0000_URL'] }]);
  await clusters.syncResult('eu-west', integrations.euApi, { isSynced: true, syncMessage: null, syncedRevision: seededRevision, targetKeys: euKeys });
  await clusters.syncResult('us-east', integrations.usApi, { isSynced: true, syncMessage: null, syncedRevision: seededRevision, targetKeys: usKeys });
  await clusters.syncResult('us-east', integrations.usWorker, {
    isSynced: false,
    syncMessage: 'Secret batch/worker-env exists and is not managed by this Integration; use creationPolicy Merge to add keys to it',
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const shot = async (name: string) => {
    await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: false });
    process.stdout.write(`docs/console/${name}.png\n`);
  };
  await page.goto(`${server.api}/`);
  await page.getByRole('heading', { name: 'Sign in to Coffer' }).waitFor();
  await shot('sign-in');
  await signIn(page, server.api);
  await shot('projects');
  await page.goto(`${server.api}/projects/${projectId}?env=dev&path=/`);
  await page.getByRole('row', { name: /SERVICE_0000_URL/ }).waitFor();
  await page.getByRole('button', { name: 'Reveal SERVICE_0001_URL' }).click();
  await page.locator('code.revealed').waitFor();
  await shot('secrets');
  await page.getByRole('link', { name: 'Compare' }).click();
  await page.getByRole('row', { name: /SERVICE_0000_URL/ }).waitFor();
  await page.getByRole('button', { name: 'Reveal SERVICE_0000_URL in Production' }).click();
  await page.locator('code.revealed').waitFor();
  await shot('compare');
  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.locator('td.event').first().waitFor();
  await shot('audit-log');
  await page.getByRole('link', { name: 'Access' }).click();
  await page.getByRole('heading', { name: 'Payments: access' }).waitFor();
  // the seeding identity made the project: it is the member listed
  await page.locator('table').first().waitFor();
  const grant = page.getByRole('form', { name: 'Grant a namespace' });
  await grant.getByLabel('Namespace').fill('payments');
  await grant.getByRole('button', { name: 'Grant namespace' }).click();
  await page.getByRole('row', { name: /^payments local/ }).waitFor();
  await shot('access');
  await page.getByRole('button', { name: 'New custom role' }).click();
  const role = page.getByRole('form', { name: 'New custom role' });
  await role.getByLabel('Slug', { exact: true }).fill('secret-reader');
  await role.getByLabel('Name', { exact: true }).fill('Secret reader');
  await role.getByLabel('read secrets', { exact: true }).check();
  await role.getByLabel('Environment of secrets').fill('prod');
  await role.getByLabel('Path of secrets').fill('/payments/**');
  await role.scrollIntoViewIfNeeded();
  await shot('role-editor');
  await page.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name: 'Identities' }).click();
  await page.getByRole('form', { name: 'Create an identity' }).getByLabel('Name').fill('ci-deployer');
  await page.getByRole('button', { name: 'Create identity' }).click();
  const auth = page.getByRole('region', { name: 'Universal auth of ci-deployer' });
  await auth.getByLabel('Description').fill('GitHub Actions');
  await auth.getByRole('button', { name: 'Create client secret' }).click();
  await page.getByRole('region', { name: 'New client secret of ci-deployer' }).waitFor();
  await shot('identities');
  await page.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name: 'Members' }).click();
  await page.getByRole('form', { name: 'Invite a user' }).getByLabel('Email').fill('dev@example.com');
  await page.getByRole('button', { name: 'Invite' }).click();
  await page.getByRole('row', { name: /dev@example.com/ }).waitFor();
  await page.getByRole('button', { name: 'I have saved it' }).click();
  await shot('organization-members');
  await page.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name: 'Organization audit' }).click();
  await page.locator('td.event').first().waitFor();
  await shot('organization-audit-log');
  await page.goto(`${server.api}/projects/${projectId}?env=dev&path=/`);
  await page.getByRole('button', { name: 'Personal value of SERVICE_0002_URL' }).click();
  await page.getByRole('region', { name: 'Personal value of SERVICE_0002_URL' }).getByLabel('Personal value', { exact: true }).fill('http://localhost:8080');
  await page.getByRole('button', { name: 'Set personal value' }).click();
  await page.getByRole('row', { name: /SERVICE_0002_URL.*personal value set/ }).waitFor();
  await shot('personal-value');
  // an edit, followed to the clusters: one reached, one on its way, one failing
  await page.getByRole('link', { name: 'Secrets' }).click();
  await page.getByRole('button', { name: 'Edit SERVICE_0001_URL' }).click();
  const edit = page.getByRole('form', { name: 'Edit SERVICE_0001_URL' });
  await edit.getByLabel('New value (empty keeps it)').fill('https://service-0001.internal:8443');
  await edit.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved SERVICE_0001_URL').waitFor();
  await page.getByRole('button', { name: 'Where SERVICE_0001_URL goes' }).click();
  const delivery = page.getByRole('region', { name: /^Your save of SERVICE_0001_URL, revision \d+$/ });
  const saved = Number(/(\d+)$/.exec((await delivery.getAttribute('aria-label'))!)![1]);
  await clusters.syncResult('eu-west', integrations.euApi, { isSynced: true, syncMessage: null, syncedRevision: saved, targetKeys: euKeys });
  await delivery.getByText(`eu-west / payments / api: Reached (at revision ${saved})`).waitFor();
  await shot('where-it-goes');
  await page.getByRole('link', { name: 'Secrets', exact: true }).click();
  await page.getByRole('button', { name: 'Dark theme' }).click();
  await page.getByRole('row', { name: /SERVICE_0000_URL/ }).waitFor();
  await shot('secrets-dark');
} finally {
  await browser.close();
  await stopCoffer(server);
  rmSync(dataDir, { recursive: true, force: true });
}
