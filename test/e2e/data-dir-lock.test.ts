import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, test } from 'vitest';
import { COFFER_BIN, type CofferProcess, callCoffer, startCoffer, stopCoffer } from '../support/coffer-process.ts';

/**
 * One embedded data directory, one process: a second `coffer serve`, `coffer
 * migrate` or `coffer bootstrap` on a directory in use never opens it beside
 * the holder; a holder killed with SIGKILL does not block the next start.
 */
const run = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), 'coffer-lock-'));
const env = { ...process.env, COFFER_DATA_DIR: dataDir, DATABASE_URL: '', COFFER_OPERATOR: 'false' };
const start = () => startCoffer({ COFFER_DATA_DIR: dataDir, DATABASE_URL: '', COFFER_OPERATOR: 'false' });
const bootstrapArgs = ['bootstrap', '--email', 'lock@example.com', '--password', 'lock test password', '--organization', 'Lock Org', '--json'];
let server: CofferProcess | undefined;

async function coffer(args: string[], extraEnv: Record<string, string> = {}) {
  return run(process.execPath, [COFFER_BIN, ...args], { env: { ...env, ...extraEnv }, timeout: 30_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

afterAll(async () => {
  if (server) await stopCoffer(server);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('an embedded data directory in use', () => {
  test('a second coffer serve fails at once, naming the holder (pid, host, since when)', async () => {
    if (!existsSync(join(import.meta.dirname, '../../dist/main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    server = await start();
    const second = await coffer(['serve'], { COFFER_PORT: '0', COFFER_PROBE_PORT: '0' });
    expect(second.code).toBe(4);
    expect(second.stderr).toMatch(new RegExp(`is in use by coffer serve \\(pid ${server.process.pid} on host ${hostname()}, since \\d{4}-\\d\\d-\\d\\dT`));
  });

  test('coffer migrate says so and changes nothing', async () => {
    const migrate = await coffer(['migrate']);
    expect(migrate.code).toBe(4);
    expect(migrate.stderr).toContain(`in use by coffer serve (pid ${server!.process.pid}`);
    expect(migrate.stderr).toContain('stop it to run coffer migrate');
  });

  test('coffer bootstrap goes through the running server: the token it prints works there', async () => {
    const boot = await coffer(bootstrapArgs);
    expect(boot.code, boot.stderr).toBe(0);
    expect(boot.stderr).toContain('bootstrapping through its API at http://127.0.0.1:');
    const token = JSON.parse(boot.stdout).identity.credentials.token;
    expect((await callCoffer(server!, 'GET', '/api/v1/workspace', token)).status).toBe(200);
    const again = await coffer(bootstrapArgs);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already been set up');
  });

  test('the server is unharmed: ready, and a SIGTERM stops it cleanly', async () => {
    expect((await fetch(`${server!.probes}/readyz`)).status).toBe(200);
    expect(await stopCoffer(server!)).toBe(0);
    server = undefined;
    expect(existsSync(join(dataDir, 'coffer.lock'))).toBe(false);
  });

  test('after kill -9 the directory is free at once, and the data is intact', async () => {
    server = await start();
    await stopCoffer(server, 'SIGKILL');
    server = undefined;
    expect(existsSync(join(dataDir, 'coffer.lock')), 'the killed server left its lock').toBe(true);
    // migrate does not wait: it succeeds only if the dead holder's lock is recognised as stale
    const migrate = await coffer(['migrate']);
    expect(migrate.code, migrate.stderr).toBe(0);
    server = await start();
    const boot = await coffer(bootstrapArgs);
    expect(boot.stderr).toContain('already been set up');
  });
});
