import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort } from '../support/free-port.ts';

/**
 * What a new user does: the built `coffer` binary with the embedded database,
 * then plain HTTP calls. Requires `npm run build` (the test script does it).
 */
const bin = join(import.meta.dirname, '../../bin/coffer.js');
const run = promisify(execFile);

interface Server {
  process: ChildProcess;
  output: string[];
  api: string;
  probes: string;
}

async function startServer(dataDir: string): Promise<Server> {
  const [port, probePort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { ...process.env, COFFER_DATA_DIR: dataDir, COFFER_PORT: String(port), COFFER_PROBE_PORT: String(probePort), DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout!.on('data', (chunk) => output.push(String(chunk)));
  child.stderr!.on('data', (chunk) => output.push(String(chunk)));
  const probes = `http://127.0.0.1:${probePort}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`coffer serve exited with ${child.exitCode}:\n${output.join('')}`);
    const ready = await fetch(`${probes}/readyz`).then((response) => response.ok).catch(() => false);
    if (ready) return { process: child, output, api: `http://127.0.0.1:${port}`, probes };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`coffer serve was not ready within 60 s:\n${output.join('')}`);
}

async function stopServer(server: Server): Promise<number | null> {
  if (server.process.exitCode !== null) return server.process.exitCode;
  const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
  server.process.kill('SIGTERM');
  return exited;
}

async function call(server: Server, method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(`${server.api}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

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
      const { stdout } = await run(process.execPath, [bin, 'bootstrap', '--email', 'cli@example.com', '--password', 'cli password', '--organization', 'CLI Org', '--json'], { env });
      const result = JSON.parse(stdout);
      expect(result).toMatchObject({ organization: { name: 'CLI Org' }, user: { email: 'cli@example.com' }, identity: { credentials: { token: expect.any(String) } } });
      const again = await run(process.execPath, [bin, 'bootstrap', '--email', 'cli@example.com', '--password', 'cli password', '--organization', 'CLI Org'], { env }).catch((error) => error);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('already been set up');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a bad setting fails fast naming it', async () => {
    const failure = await run(process.execPath, [bin, 'serve'], { env: { ...process.env, COFFER_PORT: 'http' } }).catch((error) => error);
    expect(failure.code).toBe(1);
    expect(failure.stderr).toContain('COFFER_PORT (--port)');
  });
});
