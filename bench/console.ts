/**
 * The console with 1,000 secrets in one folder: a fresh `coffer serve` (embedded PGlite) and Debian's chromium
 * (playwright-core). Measures, over several runs, the time from opening the secrets screen to all 1,000 rows
 * shown, from a keystroke in the key filter to the filtered table, and from a reveal's click to its value; the
 * page's longest main-thread task in each. Appends the medians to bench/RESULTS.md.
 *
 *   npm run bench:console [-- --runs 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium, type Page } from 'playwright-core';
import { startCoffer, stopCoffer } from '../test/support/coffer-process.ts';
import { CHROMIUM_FLAGS, seedProject, signIn } from '../test/support/console-demo.ts';
import { appendResults, loadAverage, log, machine, ms, percentile, table } from './common.ts';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '5' }, secrets: { type: 'string', default: '1000' } } });
const RUNS = Number(args.runs);
const COUNT = Number(args.secrets);

/** Collects the page's long tasks (over 50 ms) from now on; read them with `longestTask`. */
/** The number of rows the secrets table shows is `count` (a function: the console's CSP forbids evaluating strings). */
function rowsShown(count: number) {
  return page().waitForFunction((expected) => (globalThis as any).document.querySelectorAll('table.secrets tbody tr').length === expected, count, { polling: 'raf' });
}
let currentPage: Page | undefined;
const page = () => currentPage!;

const WATCH_LONG_TASKS = `window.__longest = 0; new PerformanceObserver((list) => { for (const entry of list.getEntries()) window.__longest = Math.max(window.__longest, entry.duration); }).observe({ type: 'longtask' });`;

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'coffer-bench-console-'));
  const server = await startCoffer({ COFFER_DATA_DIR: dataDir, DATABASE_URL: '', COFFER_OPERATOR: 'false', COFFER_LOG_LEVEL: 'warn' }, 300_000);
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_FLAGS });
  const samples = { open: [] as number[], filter: [] as number[], clear: [] as number[], reveal: [] as number[], longest: [] as number[] };
  try {
    log(`seeding ${COUNT} secrets`);
    const { projectId } = await seedProject(server, 'Bench', COUNT);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    currentPage = page;
    await signIn(page, server.api);
    const rows = page.locator('table.secrets tbody tr');
    for (let run = 0; run < RUNS; run++) {
      await page.goto(`${server.api}/`);
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      await page.evaluate(WATCH_LONG_TASKS);
      let started = Date.now();
      await page.getByRole('link', { name: 'Bench' }).click();
      await rowsShown(COUNT);
      samples.open.push(Date.now() - started);

      started = Date.now();
      await page.getByLabel('Filter by key').fill('SERVICE_0999');
      await rowsShown(1);
      samples.filter.push(Date.now() - started);
      started = Date.now();
      await page.getByLabel('Filter by key').fill('');
      await rowsShown(COUNT);
      samples.clear.push(Date.now() - started);

      started = Date.now();
      await rows
        .nth(500)
        .getByRole('button', { name: /^Reveal/ })
        .click();
      await rows.nth(500).locator('code.revealed').waitFor();
      samples.reveal.push(Date.now() - started);
      samples.longest.push(await page.evaluate('window.__longest'));
      log(`run ${run + 1}: open ${samples.open.at(-1)} ms, filter ${samples.filter.at(-1)} ms, reveal ${samples.reveal.at(-1)} ms`);
      void projectId;
    }
  } finally {
    await browser.close();
    await stopCoffer(server);
    rmSync(dataDir, { recursive: true, force: true });
  }
  const median = (values: number[]) =>
    ms(
      percentile(
        [...values].sort((a, b) => a - b),
        50,
      ),
    );
  const worst = (values: number[]) => ms(Math.max(...values));
  appendResults(`bench:console — ${COUNT} secrets in one folder, ${RUNS} runs`, [
    machine('embedded PGlite'),
    `Load average at the end: ${loadAverage()}. Wall-clock times from the driving process (playwright-core → chromium), so they include the server's answer where one is needed.`,
    '',
    ...table(
      ['step', 'median ms', 'worst ms'],
      [
        [`open the secrets screen → ${COUNT} rows shown (list answer + render)`, median(samples.open), worst(samples.open)],
        ['type a filter → 1 row shown', median(samples.filter), worst(samples.filter)],
        [`clear the filter → ${COUNT} rows shown`, median(samples.clear), worst(samples.clear)],
        ['click Reveal on row 500 → value shown (one audited read)', median(samples.reveal), worst(samples.reveal)],
        ['longest main-thread task in the run', median(samples.longest), worst(samples.longest)],
      ],
    ),
  ]);
}

await main();
