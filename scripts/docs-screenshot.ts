/**
 * Renders the API reference (/api/docs) of a fresh `coffer serve` in a real
 * browser and saves docs/api-reference.png. Needs `npm run build` (the npm
 * script does it) and Debian's Chromium (`apt-get install -y chromium`;
 * CHROMIUM_PATH to use another); playwright-core drives it and downloads nothing.
 *
 *   npm run docs:screenshot [-- --out docs/api-reference.png --tag Secrets --operation 'Create a secret']
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { startCoffer, stopCoffer } from '../test/support/coffer-process.ts';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: join(import.meta.dirname, '../docs/api-reference.png') },
    tag: { type: 'string', default: 'Secrets' },
    operation: { type: 'string', default: 'Create a secret' },
  },
});

// the flags this machine's Chromium needs as root, without a network beyond loopback (playwright adds
// --headless and a new empty profile of its own)
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const dataDir = mkdtempSync(join(tmpdir(), 'coffer-docs-'));
const server = await startCoffer({ COFFER_DATA_DIR: dataDir, DATABASE_URL: '', COFFER_OPERATOR: 'false', COFFER_LOG_LEVEL: 'warn' });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_FLAGS });
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(`${server.api}/api/docs`, { waitUntil: 'networkidle' });
  // open the tag in the sidebar, then the operation: the page scrolls to it
  const sidebar = page.locator('.t-doc__sidebar');
  await sidebar.getByText(values.tag!, { exact: true }).first().click();
  await sidebar.getByText(values.operation!, { exact: true }).first().click();
  await page.waitForTimeout(1_500);
  await page.screenshot({ path: values.out! });
  process.stdout.write(`${values.out} (${await page.title()})\n`);
} finally {
  await browser.close();
  await stopCoffer(server);
  rmSync(dataDir, { recursive: true, force: true });
}
