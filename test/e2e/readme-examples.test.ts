import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type CofferProcess, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import { bash, markedBlocks, matchesShown, outputAfter } from '../support/readme.ts';

/**
 * The README's examples beyond the quick start (revision barrier, project grants, a machine identity for
 * a program and the Node SDK with it, universal auth, setting up a remote cluster's identity), run as a reader pastes them
 * after the quick start: every `<!-- readme:run -->` block, in order, in the same bash as the quick-start
 * blocks (their variables: API, AUTH, TOKEN, PROJECT_ID, json), against a fresh `coffer serve` on the
 * embedded database. Each block's printed lines must match its `<!-- readme:output -->` block. What is
 * changed: the server's address (`127.0.0.1:8080` and `localhost:8080`: the port-forward of the
 * Kubernetes path), and `node app.mjs` runs the `<!-- readme:node -->` block saved as app.mjs in a
 * directory where @infisical/sdk is installed.
 */
const ROOT = join(import.meta.dirname, '../..');
const blocks = markedBlocks();
const quickstart = blocks.filter((block) => block.marker === 'quickstart:run');
const examples = blocks.filter((block) => block.marker === 'readme:run');
const program = blocks.filter((block) => block.marker === 'readme:node');
const SEPARATOR = '@@readme-block-end@@';

let server: CofferProcess;
let dataDir: string;
let appDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'coffer-readme-examples-'));
  appDir = mkdtempSync(join(tmpdir(), 'coffer-readme-app-'));
  // the reader's `npm install @infisical/sdk`: this repository's copy (a dev dependency)
  symlinkSync(join(ROOT, 'node_modules'), join(appDir, 'node_modules'));
  writeFileSync(join(appDir, 'app.mjs'), `${program[0]!.code}\n`);
  server = await startCoffer({ COFFER_DATA_DIR: dataDir, DATABASE_URL: '', COFFER_OPERATOR: 'false', COFFER_ENCRYPTION_KEY: '', COFFER_AUTH_SECRET: '' });
});
afterAll(async () => {
  if (server) await stopCoffer(server);
  for (const dir of [dataDir, appDir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the examples are marked: the barrier, the grants, the identity and SDK, the remote identity; one program', () => {
  expect(program).toHaveLength(1);
  const all = examples.map((block) => block.code).join('\n');
  for (const call of ['coffer wait', 'namespace-grants', 'identity-memberships', 'node app.mjs', 'ORG_ID=']) expect(all, call).toContain(call);
  for (const block of examples) {
    expect(block.language, `README.md:${block.line}`).toBe('sh');
    // a failing call must say why: curl -sf prints nothing on an HTTP error (-sS or -sSf do)
    expect(block.code, `README.md:${block.line}`).not.toMatch(/curl -sf\b/);
  }
});

test('after the quick start, every example runs as pasted and prints what the README shows', async () => {
  const host = new URL(server.api).host;
  const localise = (code: string) =>
    code
      .replaceAll('127.0.0.1:8080', host)
      .replaceAll('localhost:8080', host)
      .replaceAll('node app.mjs', `node ${join(appDir, 'app.mjs')}`);
  const script = [...quickstart, ...examples].map((block) => `${localise(block.code)}\necho ${SEPARATOR}`).join('\n');
  const { code, stdout, stderr } = await bash(script, ROOT);
  expect(code, `bash exited ${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`).toBe(0);
  const printed = stdout.split(`${SEPARATOR}\n`).slice(quickstart.length, quickstart.length + examples.length);
  expect(printed).toHaveLength(examples.length);
  examples.forEach((block, index) => {
    const shown = outputAfter(blocks, block, 'readme:output');
    if (shown !== undefined) expect(matchesShown(printed[index]!.trimEnd(), shown), `output of README.md:${block.line}:\n${printed[index]}\nshown:\n${shown}`).toBe(true);
  });
}, 120_000);
