import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COFFER_BIN, type CofferProcess, callCoffer, startCoffer, stopCoffer } from '../support/coffer-process.ts';

/**
 * What a new user does: the built `coffer` binary with the embedded database,
 * then plain HTTP calls. Requires `npm run build` (the test script does it).
 */
const bin = COFFER_BIN;
const run = promisify(execFile);
type Server = CofferProcess;
const call = callCoffer;
const stopServer = stopCoffer;
const startServer = (dataDir: string) => startCoffer({ COFFER_DATA_DIR: dataDir, DATABASE_URL: '', COFFER_OPERATOR: 'false' });

describe('coffer serve on the embedded database', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'coffer-e2e-'));
  let server: Server;
  let token: string;

  beforeAll(async () => {
    if (!existsSync(join(import.meta.dirname, '../../dist/main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    server = await startServer(dataDir);
  });
  afterAll(async () => {
    if (server) await stopServer(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('generates its keys once into the data directory, mode 0600, with a warning', () => {
    const keys = join(dataDir, 'keys.json');
    expect(statSync(keys).mode & 0o777).toBe(0o600);
    expect(server.output.join('')).toContain('COFFER_ENCRYPTION_KEY / COFFER_AUTH_SECRET not set');
  });

  test('probes, status and docs answer', async () => {
    expect((await fetch(`${server.probes}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${server.probes}/readyz`)).json()).toEqual({ status: 'ready' });
    expect((await call(server, 'GET', '/api/status')).body).toEqual({ message: 'Ok' });
    const openapi = (await (await fetch(`${server.api}/api/docs/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(['/api/v2/workspace', '/api/v1/folders', '/api/v1/admin/bootstrap']));
    const docs = await fetch(`${server.api}/api/docs/`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toContain('text/html');
  });

  test('the start says the instance is not set up yet and how to set it up', () => {
    const output = server.output.join('');
    expect(output).toContain('this instance is not set up yet');
    expect(output).toContain(`npx coffer bootstrap --server ${server.api}`);
    expect(output).toContain(`POST ${server.api}/api/v1/admin/bootstrap`);
  });

  test('one JSON log line per request, with method, route, status, error code and duration', async () => {
    const answer = await fetch(`${server.api}/api/v1/workspace/not-a-project?token=abc123`);
    expect(answer.status).toBe(401);
    const reqId = answer.headers.get('x-request-id');
    const linesOf = () =>
      server.output
        .join('')
        .split('\n')
        .filter((line) => line.includes(reqId!));
    // written once the answer has gone out
    for (let waited = 0; linesOf().length === 0 && waited < 5_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    const lines = linesOf();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 30,
      reqId,
      method: 'GET',
      route: '/api/v1/workspace/:workspaceId',
      url: '/api/v1/workspace/not-a-project?token=[redacted]',
      statusCode: 401,
      errorCode: 'UnauthorizedError',
      durationMs: expect.any(Number),
      msg: expect.stringMatching(/^GET \/api\/v1\/workspace\/not-a-project 401 UnauthorizedError [\d.]+ ms$/),
    });
  });

  test('bootstrap → projects → environment → nested folder → updates', async () => {
    const boot = await call(server, 'POST', '/api/v1/admin/bootstrap', undefined, {
      email: 'ops@example.com',
      password: 'a long password',
      organization: 'Example',
    });
    expect(boot.status).toBe(200);
    token = boot.body.identity.credentials.token;

    const generated = await call(server, 'POST', '/api/v2/workspace', token, { projectName: 'Web Shop' });
    expect(generated.status).toBe(200);
    expect(generated.body.project.slug).toMatch(/^web-shop-[a-z0-9]{4}$/);
    const named = await call(server, 'POST', '/api/v2/workspace', token, { projectName: 'Payments', slug: 'payments' });
    expect(named.body.project).toMatchObject({ slug: 'payments', _id: named.body.project.id, environments: [{ slug: 'dev' }, { slug: 'staging' }, { slug: 'prod' }] });
    const projectId = named.body.project.id;

    const environment = await call(server, 'POST', `/api/v1/workspace/${projectId}/environments`, token, { name: 'Preview', slug: 'preview' });
    expect(environment.body).toMatchObject({ message: expect.any(String), workspace: projectId, environment: { slug: 'preview', position: 4 } });

    const folder = await call(server, 'POST', '/api/v1/folders', token, { workspaceId: projectId, environment: 'preview', name: 'db', path: '/services/api' });
    expect(folder.status).toBe(200);
    expect(folder.body.folder).toMatchObject({ name: 'db', version: 1 });

    const project = await call(server, 'PATCH', `/api/v1/workspace/${projectId}`, token, { name: 'Payments v2', autoCapitalization: false });
    expect(project.body.workspace).toMatchObject({ name: 'Payments v2', autoCapitalization: false });
    const moved = await call(server, 'PATCH', `/api/v1/workspace/${projectId}/environments/${environment.body.environment.id}`, token, { position: 1 });
    expect(moved.body.environment).toMatchObject({ slug: 'preview', position: 1 });
  });

  test('data and keys survive a restart; the token still works', async () => {
    expect(await stopServer(server)).toBe(0);
    server = await startServer(dataDir);
    expect(server.output.join('')).not.toContain('not set up yet');
    const projects = await call(server, 'GET', '/api/v1/workspace', token);
    expect(projects.status).toBe(200);
    expect(projects.body.workspaces.map((project: { slug: string }) => project.slug)).toContain('payments');
  });

  test('the logs never contain the token', () => {
    expect(server.output.join('')).not.toContain(token);
  });
});

describe('coffer CLI', () => {
  test('version, migrate and bootstrap without HTTP', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'coffer-cli-'));
    try {
      const env = { ...process.env, COFFER_DATA_DIR: dataDir, DATABASE_URL: '' };
      expect((await run(process.execPath, [bin, 'version'], { env })).stdout).toMatch(/^coffer \d+\.\d+\.\d+/);
      await run(process.execPath, [bin, 'migrate'], { env });
      const { stdout } = await run(
        process.execPath,
        [bin, 'bootstrap', '--email', 'cli@example.com', '--password', 'cli password', '--organization', 'CLI Org', '--json'],
        { env },
      );
      const result = JSON.parse(stdout);
      expect(result).toMatchObject({ organization: { name: 'CLI Org' }, user: { email: 'cli@example.com' }, identity: { credentials: { token: expect.any(String) } } });
      const again = await run(process.execPath, [bin, 'bootstrap', '--email', 'cli@example.com', '--password', 'cli password', '--organization', 'CLI Org'], {
        env,
      }).catch((error) => error);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('already been set up');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a bad setting fails fast naming it', async () => {
    const failure = await run(process.execPath, [bin, 'serve'], { env: { ...process.env, COFFER_PORT: 'http' } }).catch((error) => error);
    expect(failure.code).toBe(3);
    expect(failure.stderr).toContain('COFFER_PORT (--port)');
  });
});
