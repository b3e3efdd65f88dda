import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { COFFER_BIN, type CofferProcess, callCoffer, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import { freePort } from '../support/free-port.ts';

/**
 * `coffer bootstrap --server <url>`: the Helm chart's post-install job bootstraps a running
 * instance through its API, waiting for it to come up. (--store-secret, which writes the result
 * into a Kubernetes Secret, is tested against the real apiserver in test/cluster/packaging.test.ts.)
 */
interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `coffer bootstrap`; `onStderr` hears its standard error as it comes (to act on a line it printed). */
function bootstrap(args: string[], env: Record<string, string> = {}, onStderr?: (stderr: string) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [COFFER_BIN, 'bootstrap', ...args], {
      env: {
        ...process.env,
        KUBECONFIG: '',
        COFFER_BOOTSTRAP_EMAIL: 'admin@example.com',
        COFFER_BOOTSTRAP_PASSWORD: 'a long password',
        COFFER_BOOTSTRAP_ORGANIZATION: 'Remote Org',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      onStderr?.(stderr);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const work = mkdtempSync(join(tmpdir(), 'coffer-bootstrap-server-'));
let server: CofferProcess | undefined;

afterAll(async () => {
  if (server) await stopCoffer(server);
  rmSync(work, { recursive: true, force: true });
});

describe('coffer bootstrap --server', () => {
  test('a server that never answers: gives up after --timeout with the reason', async () => {
    const port = await freePort();
    const run = await bootstrap(['--server', `http://127.0.0.1:${port}`, '--timeout', '2s']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`http://127.0.0.1:${port} did not answer the bootstrap within 2 s \\(\\d+ attempts; last: ECONNREFUSED\\)`));
    expect(run.stderr).toContain('retrying in');
  });

  test('bad flags are refused before anything is sent', async () => {
    expect((await bootstrap(['--server', 'not a url'])).stderr).toContain('--server must be a URL');
    expect((await bootstrap(['--server', 'ftp://example.com'])).stderr).toContain('--server must be an http:// or https:// URL');
    expect((await bootstrap(['--server', 'http://127.0.0.1:1', '--timeout', 'soon'])).stderr).toContain('--timeout must be a duration');
    const badEmail = await bootstrap(['--server', 'http://127.0.0.1:1'], { COFFER_BOOTSTRAP_EMAIL: 'nope' });
    expect(badEmail.code).toBe(2);
    expect(badEmail.stderr).toContain('--email must be an email address');
  });

  test('started before the server: waits for it, then bootstraps once; --if-needed makes a rerun a no-op', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let refusedOnce!: () => void;
    const waiting = new Promise<void>((resolve) => (refusedOnce = resolve));
    const pending = bootstrap(['--server', `${url}/`, '--timeout', '60s', '--json'], {}, (stderr) => {
      if (stderr.includes(`waiting for ${url} (ECONNREFUSED)`)) refusedOnce();
    });
    // the server starts only once the command has found it absent
    await waiting;
    server = await startCoffer({ COFFER_DATA_DIR: join(work, 'data'), DATABASE_URL: '', COFFER_OPERATOR: 'false', COFFER_PORT: String(port) });
    const run = await pending;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`waiting for ${url} (ECONNREFUSED)`);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({
      message: 'Successfully bootstrapped instance',
      user: { email: 'admin@example.com' },
      organization: { name: 'Remote Org' },
      identity: { name: expect.any(String), credentials: { token: expect.any(String) } },
    });
    // the printed token is the admin identity's
    // (startCoffer's `api` names the port it picked; COFFER_PORT overrode it)
    expect((await callCoffer({ ...server, api: url }, 'GET', '/api/v1/workspace', result.identity.credentials.token)).status).toBe(200);

    const again = await bootstrap(['--server', url, '--if-needed']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe('The instance is already set up; nothing to do.\n');

    const refused = await bootstrap(['--server', url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('coffer bootstrap: This instance has already been set up (--if-needed makes this not an error)\n');
  });

  test('--if-needed also applies to the local (database) bootstrap', async () => {
    // the server above holds the embedded database; a second instance on its own data dir
    const dataDir = join(work, 'local');
    const env = { COFFER_DATA_DIR: dataDir, DATABASE_URL: '' };
    const first = await bootstrap([], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("Bootstrapped organization 'Remote Org'");
    const again = await bootstrap(['--if-needed'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('already set up');
    expect((await bootstrap([], env)).code).toBe(1);
  });
});
