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
import { startCoffer, stopCoffer } from '../test/support/coffer-process.ts';
import { CHROMIUM_FLAGS, seedProject, signIn } from '../test/support/console-demo.ts';

const OUT = join(import.meta.dirname, '../docs/console');
mkdirSync(OUT, { recursive: true });
const dataDir = mkdtempSync(join(tmpdir(), 'coffer-console-docs-'));
const server = await startCoffer({ COFFER_DATA_DIR: dataDir, DATABASE_URL: '', COFFER_OPERATOR: 'false', COFFER_LOG_LEVEL: 'warn' }, 300_000);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_FLAGS });
try {
  const { projectId } = await seedProject(server, 'Payments', 12);
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
  await shot('access');
  await page.getByRole('link', { name: 'Secrets' }).click();
  await page.getByRole('button', { name: 'Dark theme' }).click();
  await page.getByRole('row', { name: /SERVICE_0000_URL/ }).waitFor();
  await shot('secrets-dark');
} finally {
  await browser.close();
  await stopCoffer(server);
  rmSync(dataDir, { recursive: true, force: true });
}
