import { Writable } from 'node:stream';
import { request as httpRequest } from 'node:http';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loggerOptions } from '../../src/logger.ts';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/** What Fastify and Node's HTTP parser reject themselves answers in the documented body too; logs carry no bind parameters. */
let app: TestApp;
let fixture: Awaited<ReturnType<typeof secretsFixture>>;
let port: number;

beforeAll(async () => {
  app = await startTestApp();
  fixture = await secretsFixture(app);
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.app.server.address() as { port: number }).port;
});
afterAll(async () => app?.close());

/** The error body: `error` Infisical's name for the kind of failure, `code` Coffer's specific one (the same when none is more specific). */
const documented = (statusCode: number, error: string, code = error) => ({ statusCode, error, code, message: expect.any(String), reqId: expect.stringMatching(/^req-/) });

/** A raw HTTP exchange on a real socket (inject() skips Node's parser). */
function rawRequest(path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, headers }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('rejections made before any route runs', () => {
  test('a malformed percent-encoding → 400 in the documented body', async () => {
    const response = await app.app.inject({ method: 'GET', url: '/api/v3/secrets/raw/%E0%A4%A', headers: { authorization: `Bearer ${fixture.token}` } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(documented(400, 'BadRequest'));
  });

  test('a path parameter over the length limit → 414 in the documented body', async () => {
    const response = await app.app.inject({ method: 'GET', url: `/api/v3/secrets/raw/${'A'.repeat(5000)}`, headers: { authorization: `Bearer ${fixture.token}` } });
    expect(response.statusCode).toBe(414);
    expect(response.json()).toEqual(documented(414, 'URITooLong'));
  });

  test('headers over 16 KiB (refused by the HTTP parser) → 431 in the documented body', async () => {
    const response = await rawRequest('/api/status', { 'x-padding': 'p'.repeat(20 * 1024) });
    expect(response.status).toBe(431);
    expect(response.body).toEqual(documented(431, 'RequestHeaderFieldsTooLarge'));
  });

  test('the same server still answers afterwards', async () => {
    const response = await rawRequest('/api/status', {});
    expect(response.status).toBe(200);
  });
});

describe("a request that breaks a rule answers 400 `BadRequest`, as Infisical does, with Coffer's specific name in `code`", () => {
  const project = () => ({ workspaceId: fixture.projectId, environment: 'dev' });
  /** [what, the request that makes the rule apply (sent first, must succeed), the request refused, its code] */
  const cases: [string, (() => [string, string, unknown?]) | null, () => [string, string, unknown?], string][] = [
    [
      'an environment slug taken',
      null,
      () => ['POST', `/api/v1/workspace/${fixture.projectId}/environments`, { name: 'Dev again', slug: 'dev' }],
      'DuplicateEnvironmentSlug',
    ],
    [
      'a tag slug taken',
      () => ['POST', `/api/v1/workspace/${fixture.projectId}/tags`, { slug: 'taken-tag', color: '#00ff00' }],
      () => ['POST', `/api/v1/workspace/${fixture.projectId}/tags`, { slug: 'taken-tag', color: '#00ff00' }],
      'DuplicateTagSlug',
    ],
    [
      'a role slug taken',
      () => ['POST', `/api/v1/workspace/${fixture.projectId}/roles`, { slug: 'taken-role', name: 'Taken', permissions: [] }],
      () => ['POST', `/api/v1/workspace/${fixture.projectId}/roles`, { slug: 'taken-role', name: 'Taken', permissions: [] }],
      'DuplicateRoleSlug',
    ],
    [
      'a secret that exists',
      () => ['POST', '/api/v3/secrets/raw/TAKEN', { ...project(), secretValue: 'v' }],
      () => ['POST', '/api/v3/secrets/raw/TAKEN', { ...project(), secretValue: 'v' }],
      'SecretExists',
    ],
    [
      'a personal secret from a machine identity',
      null,
      () => ['POST', '/api/v3/secrets/raw/MINE', { ...project(), secretValue: 'v', type: 'personal' }],
      'PersonalSecretRequiresUser',
    ],
    ['a folder importing itself', null, () => ['POST', '/api/v1/secret-imports', { ...project(), path: '/', import: { environment: 'dev', path: '/' } }], 'SelfImport'],
    [
      'secret replication',
      null,
      () => ['POST', '/api/v1/secret-imports', { ...project(), path: '/', import: { environment: 'prod', path: '/' }, isReplication: true }],
      'ReplicationNotSupported',
    ],
    [
      'a role with a built-in slug',
      null,
      () => ['POST', `/api/v1/workspace/${fixture.projectId}/roles`, { slug: 'admin', name: 'Admin', permissions: [] }],
      'ReservedRoleSlug',
    ],
    ['adding nobody to a project', null, () => ['POST', `/api/v2/workspace/${fixture.projectId}/memberships`, {}], 'NoUsers'],
    [
      'a second bootstrap',
      null,
      () => ['POST', '/api/v1/admin/bootstrap', { email: 'again@example.com', password: 'correct horse battery', organization: 'Again' }],
      'BootstrapError',
    ],
  ];

  test.each(cases)('%s: 400 BadRequest, its code, nothing changed', async (_what, setup, refused, code) => {
    const send = ([method, url, body]: [string, string, unknown?]) => app.request(method, url, { token: fixture.token, body });
    if (setup) expect((await send(setup())).status).toBe(200);
    const before = await snapshotDatabase(app.database);
    const response = await send(refused());
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body).toEqual(documented(400, 'BadRequest', code));
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test("other statuses keep Infisical's names: 404 NotFound, 403 PermissionDenied, 422 ValidationFailure, each with a code", async () => {
    const missing = await app.request('GET', '/api/v3/secrets/raw/NOPE', { token: fixture.token, query: { workspaceId: fixture.projectId, environment: 'dev' } });
    expect(missing.body).toEqual(documented(404, 'NotFound'));
    const invalid = await app.request('POST', '/api/v2/workspace', { token: fixture.token, body: { projectName: 42 } });
    expect(invalid.body).toEqual({ ...documented(422, 'ValidationFailure'), details: expect.any(Array) });
    const route = await app.request('GET', '/api/v1/no-such-route', { token: fixture.token });
    expect(route.body).toEqual(documented(404, 'NotFound'));
  });
});

describe('error logs', () => {
  test('a failing statement logs where it failed, never its bind parameters or the value', async () => {
    const marker = 'not-a-number-3f9c1e';
    const lines: string[] = [];
    const logger = pino(loggerOptions('debug'), new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) }));
    const failure = await sql`SELECT ${marker}::int AS n`.execute(app.database.db).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    logger.error({ err: failure }, 'request failed');
    logger.error({ err: new Error('wrapped', { cause: failure }) }, 'request failed');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).not.toContain(marker);
      expect(JSON.parse(line).err).toMatchObject({ message: expect.any(String) });
    }
    expect(JSON.parse(lines[0]!).err).toMatchObject({ code: '22P02' });
  });

  test('a request the database refuses answers 4xx and its log lines hold no value of the request', async () => {
    const marker = 'MARKER_7d1be0';
    const before = app.logs.length;
    // in the body (request URLs are logged; bodies never are)
    const response = await app.request('POST', '/api/v3/secrets/batch/raw', {
      token: fixture.token,
      body: { workspaceId: fixture.projectId, environment: 'dev', secrets: [{ secretKey: `${marker}\u0000X`, secretValue: 'value' }] },
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(app.logs.slice(before).join('\n')).not.toContain(marker);
  });

  test("a 4xx request's log line names its error code and the caller's kind and id, never the token", async () => {
    const before = app.logs.length;
    const response = await app.request('GET', '/api/v3/secrets/raw/NO_SUCH_SECRET', {
      token: fixture.token,
      query: { workspaceId: fixture.projectId, environment: 'dev' },
    });
    expect(response.status).toBe(404);
    const lines = app.logs
      .slice(before)
      .map((line) => JSON.parse(line))
      .filter((line) => line.reqId === response.body.reqId && line.statusCode === 404);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ errorCode: response.body.code, caller: { kind: 'identity', id: expect.any(String), orgId: expect.any(String) } });
    expect(lines[0].msg).toContain(`404 ${response.body.code}`);
    expect(JSON.stringify(lines[0])).not.toContain(fixture.token);
  });
});
