import { Writable } from 'node:stream';
import { request as httpRequest } from 'node:http';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loggerOptions } from '../../src/logger.ts';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

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

const documented = (statusCode: number, error: string) => ({ statusCode, error, message: expect.any(String), reqId: expect.stringMatching(/^req-/) });

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
});
