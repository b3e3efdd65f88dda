import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type CofferProcess, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import { markedBlocks } from '../support/readme.ts';

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
  const { code, stdout, stderr } = await bash(script);
  expect(code, `bash exited ${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`).toBe(0);
  const printed = stdout.split(`${SEPARATOR}\n`).slice(0, runs.length);
  expect(printed).toHaveLength(runs.length);
  runs.forEach((block, index) => {
    const expected = expectedOutput(block);
    if (expected !== undefined) expect(printed[index]!.trimEnd(), `output of the block at README.md:${block.line}`).toBe(expected);
  });
  // what the reader did is really there: the secret's current value, read back through the API
  expect(stdout).toContain('n3w-s3cr3t');
}, 120_000);

/** The text block marked as the output of `block`, if one follows it. */
function expectedOutput(block: { line: number }): string | undefined {
  const next = blocks[blocks.findIndex((candidate) => candidate.line === block.line) + 1];
  return next?.marker === 'quickstart:output' ? next.code.trimEnd() : undefined;
}

function bash(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // -e and pipefail: a failing curl (-f) anywhere fails the run; a reader's shell would show the error
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: join(import.meta.dirname, '../..'), env: { ...process.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
