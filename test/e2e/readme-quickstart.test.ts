import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type CofferProcess, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import { bash, markedBlocks, outputAfter } from '../support/readme.ts';

/**
 * README "Quick start", run as a reader pastes it: every block marked
 * `<!-- quickstart:run -->`, in order, in one bash (so the variables one block
 * sets are there for the next), against a fresh `coffer serve` on the embedded
 * database; what each block prints must be the `<!-- quickstart:output -->`
 * block after it. The one change: the server listens on a free port, so the
 * blocks' `127.0.0.1:8080` is replaced by its address. The start block itself
 * (`npm start`: build, then `coffer serve`) is checked, not run: the suite has
 * built already, and a second build would rewrite dist/ under the other e2e tests.
 */

const blocks = markedBlocks();
const runs = blocks.filter((block) => block.marker === 'quickstart:run');
const SEPARATOR = '@@quickstart-block-end@@';

let server: CofferProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'coffer-readme-'));
  // as `npm start` starts it: defaults, embedded database (COFFER_OPERATOR=false: no cluster here)
  server = await startCoffer({ COFFER_DATA_DIR: dataDir, DATABASE_URL: '', COFFER_OPERATOR: 'false', COFFER_ENCRYPTION_KEY: '', COFFER_AUTH_SECRET: '' });
});
afterAll(async () => {
  if (server) await stopCoffer(server);
  rmSync(dataDir, { recursive: true, force: true });
});

test('the quick start has a start block, run blocks and their outputs', () => {
  const start = blocks.filter((block) => block.marker === 'quickstart:start');
  expect(start).toHaveLength(1);
  expect(start[0]!.code).toMatch(/^npm ci\b/m);
  expect(start[0]!.code).toMatch(/^npm start\b/m);
  expect(runs.length).toBeGreaterThanOrEqual(5);
  for (const block of runs) expect(block.language, `README.md:${block.line}`).toBe('sh');
});

test('the quick start runs top to bottom as pasted and prints what the README shows', async () => {
  // "It also says that the instance is not set up yet"
  expect(server.output.join('')).toContain('this instance is not set up yet');
  const script = runs.map((block) => `${block.code.replaceAll('127.0.0.1:8080', new URL(server.api).host)}\necho ${SEPARATOR}`).join('\n');
  const { code, stdout, stderr } = await bash(script, join(import.meta.dirname, '../..'));
  expect(code, `bash exited ${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`).toBe(0);
  const printed = stdout.split(`${SEPARATOR}\n`).slice(0, runs.length);
  expect(printed).toHaveLength(runs.length);
  runs.forEach((block, index) => {
    const expected = outputAfter(blocks, block, 'quickstart:output');
    if (expected !== undefined) expect(printed[index]!.trimEnd(), `output of the block at README.md:${block.line}`).toBe(expected);
  });
  // what the reader did is really there: the secret's current value, read back through the API
  expect(stdout).toContain('n3w-s3cr3t');
}, 120_000);
