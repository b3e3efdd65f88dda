import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CONSOLE_CSP } from '../../src/http/console/console-files.ts';
import { ADMIN, startConsoleServer } from './console-server.ts';

/** What the browser downloads for the console's first screen, compressed (gzip) and not: the size budget. */
const BUDGET_GZIP_BYTES = 100 * 1024;
const BUDGET_RAW_BYTES = 350 * 1024;

let server: Awaited<ReturnType<typeof startConsoleServer>>;
beforeAll(async () => {
  server = await startConsoleServer();
});
afterAll(async () => server?.app.close());

const HTML = { accept: 'text/html,application/xhtml+xml' };
const CONSOLE = { 'x-coffer-console': '1' };

async function get(url: string, headers: Record<string, string> = {}) {
  return server.app.app.inject({ method: 'GET', url, headers });
}

async function signIn(): Promise<string> {
  const answer = await server.app.app.inject({ method: 'POST', url: '/api/v1/console/session', headers: CONSOLE, payload: ADMIN });
  expect(answer.statusCode).toBe(200);
  const cookie = String(answer.headers['set-cookie']);
  return cookie.split(';')[0]!;
}

async function sessionCount(): Promise<number> {
  const rows = await server.app.database.db.selectFrom('userSessions').select('id').where('isRevoked', '=', false).execute();
  return rows.length;
}

describe('serving the console', () => {
  test('content types, caching and CSP', async () => {
    const page = await get('/', HTML);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    // no inline script or style in the page: every script has a src, no <style> and no style attribute
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=/);
    const assets = [...page.body.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.some((asset) => asset.endsWith('.js'))).toBe(true);
    expect(assets.some((asset) => asset.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      const answer = await get(asset);
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toBe(asset.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(answer.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
    }
    expect((await get('/favicon.svg')).headers['content-type']).toBe('image/svg+xml');
    // an API client asking for `/` still gets the entry points
    expect((await get('/')).json()).toMatchObject({ name: 'coffer', docs: '/api/docs' });
  });

  test('a console path answers the page to a browser; an API path never does', async () => {
    const deep = await get('/projects/0b7d1d52-7f3c-4b39-9f0e-2c0d7f1b3a11?env=dev', HTML);
    expect(deep.statusCode).toBe(200);
    expect(deep.headers['content-type']).toBe('text/html; charset=utf-8');
    const api = await get('/api/v1/no-such-route', HTML);
    expect(api.statusCode).toBe(404);
    expect(api.json()).toMatchObject({ statusCode: 404, error: 'NotFound' });
    const post = await server.app.app.inject({ method: 'POST', url: '/projects', headers: HTML });
    expect(post.statusCode).toBe(404);
    expect(post.headers['content-type']).toMatch(/application\/json/);
  });

  test('an asset path outside the build answers 404', async () => {
    for (const url of ['/assets/no-such-file.js', '/assets/../package.json', '/assets/%2e%2e/package.json', '/assets/']) {
      expect((await get(url)).statusCode, url).toBe(404);
    }
  });

  test(`the browser downloads at most ${BUDGET_GZIP_BYTES / 1024} KiB compressed (${BUDGET_RAW_BYTES / 1024} KiB raw) for the console`, () => {
    const downloaded = [...server.files.values()];
    const raw = downloaded.reduce((sum, file) => sum + file.body.byteLength, 0);
    const gzipped = downloaded.reduce((sum, file) => sum + gzipSync(file.body).byteLength, 0);
    console.log(`console bundle: ${raw} bytes raw, ${gzipped} bytes gzip, ${downloaded.length} files`);
    expect(raw).toBeLessThanOrEqual(BUDGET_RAW_BYTES);
    expect(gzipped).toBeLessThanOrEqual(BUDGET_GZIP_BYTES);
  });
});

describe('the console session', () => {
  test('sign-in without the console header is refused and opens no session', async () => {
    const before = await sessionCount();
    const answer = await server.app.app.inject({ method: 'POST', url: '/api/v1/console/session', payload: ADMIN });
    expect(answer.statusCode).toBe(403);
    expect(answer.json()).toMatchObject({ code: 'ConsoleHeaderMissing' });
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(await sessionCount()).toBe(before);
  });

  test('sign-in sets an HttpOnly, SameSite=Strict cookie and answers no token', async () => {
    const answer = await server.app.app.inject({ method: 'POST', url: '/api/v1/console/session', headers: CONSOLE, payload: ADMIN });
    expect(answer.statusCode).toBe(200);
    expect(Object.keys(answer.json()).sort()).toEqual(['expiresIn', 'organizationId']);
    expect(String(answer.headers['set-cookie'])).toMatch(/^coffer_console=[\w.-]+; Path=\/api; Max-Age=864000; HttpOnly; SameSite=Strict$/);
    const wrong = await server.app.app.inject({ method: 'POST', url: '/api/v1/console/session', headers: CONSOLE, payload: { ...ADMIN, password: 'wrong password' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  // found by a hostile review: behind a TLS-terminating ingress the request arrives as http, and a sibling site of
  // the domain can set a second cookie of the name that the browser sends first
  test('the cookie is Secure unless the browser came over http to a loopback address; two session cookies are refused', async () => {
    const signInAt = (host: string) => server.app.app.inject({ method: 'POST', url: '/api/v1/console/session', headers: { ...CONSOLE, host }, payload: ADMIN });
    for (const host of ['coffer.example.com', 'coffer.example.com:8443', '10.1.2.3:8080']) {
      expect(String((await signInAt(host)).headers['set-cookie']), host).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    }
    for (const host of ['localhost:8080', '127.0.0.1:8080', '[::1]:8080']) {
      expect(String((await signInAt(host)).headers['set-cookie']), host).toMatch(/; HttpOnly; SameSite=Strict$/);
    }
    const cookie = await signIn();
    const planted = await get('/api/v1/console/session', { cookie: `coffer_console=planted.by.sibling; ${cookie}`, ...CONSOLE });
    expect(planted.statusCode).toBe(401);
    expect(planted.json()).toMatchObject({ code: 'ConsoleCookieAmbiguous' });
    expect((await get('/api/v1/console/session', { cookie, ...CONSOLE })).statusCode).toBe(200);
  });

  test('a write without the console header is refused and changes nothing', async () => {
    const cookie = await signIn();
    const list = async () => (await get('/api/v1/workspace', { cookie, ...CONSOLE })).json().workspaces.length as number;
    const before = await list();
    const forged = await server.app.app.inject({ method: 'POST', url: '/api/v2/workspace', headers: { cookie }, payload: { projectName: 'Forged' } });
    expect(forged.statusCode).toBe(403);
    expect(forged.json()).toMatchObject({ code: 'ConsoleHeaderMissing' });
    expect(await list()).toBe(before);
    // reads need it too: a page of another origin cannot send it
    expect((await get('/api/v1/workspace', { cookie })).statusCode).toBe(403);
    const made = await server.app.app.inject({ method: 'POST', url: '/api/v2/workspace', headers: { cookie, ...CONSOLE }, payload: { projectName: 'Made here' } });
    expect(made.statusCode).toBe(200);
    expect(await list()).toBe(before + 1);
  });

  test('a value read through the console is audited as reveal-secret; a masked listing reveals nothing', async () => {
    const cookie = await signIn();
    const headers = { cookie, ...CONSOLE };
    const { project } = (await server.app.app.inject({ method: 'POST', url: '/api/v2/workspace', headers, payload: { projectName: 'Reveals' } })).json();
    const place = { projectId: project.id, environment: 'dev', secretPath: '/' };
    const created = await server.app.app.inject({ method: 'POST', url: '/api/v4/secrets/TOKEN', headers, payload: { ...place, secretValue: 'shown-on-purpose-1' } });
    expect(created.statusCode).toBe(200);
    const listing = await server.app.app.inject({ method: 'GET', url: '/api/v4/secrets', headers, query: { ...place, viewSecretValue: 'false' } });
    expect(listing.body).not.toContain('shown-on-purpose-1');
    const revealed = await server.app.app.inject({ method: 'GET', url: '/api/v4/secrets/TOKEN', headers, query: { ...place, viewSecretValue: 'true' } });
    expect(revealed.json().secret.secretValue).toBe('shown-on-purpose-1');
    const audit = await get(`/api/v1/workspace/${project.id}/audit-logs?eventType=reveal-secret,get-secret`, headers);
    expect(audit.json().auditLogs.map((entry: any) => [entry.event.type, entry.event.metadata.secretKey])).toEqual([['reveal-secret', 'TOKEN']]);
    // the same read with a bearer token is an ordinary get
    await server.app.request('GET', '/api/v4/secrets/TOKEN', { token: server.admin.token, query: place });
    const after = await get(`/api/v1/workspace/${project.id}/audit-logs?eventType=get-secret`, headers);
    expect(after.json().auditLogs).toHaveLength(1);
  });

  test('sign-out ends the session and clears the cookie', async () => {
    const cookie = await signIn();
    const who = await get('/api/v1/console/session', { cookie, ...CONSOLE });
    expect(who.json()).toMatchObject({ user: { email: ADMIN.email }, organizationId: server.admin.orgId });
    const out = await server.app.app.inject({ method: 'DELETE', url: '/api/v1/console/session', headers: { cookie, ...CONSOLE } });
    expect(out.statusCode).toBe(200);
    expect(String(out.headers['set-cookie'])).toMatch(/^coffer_console=; Path=\/api; Max-Age=0; HttpOnly; SameSite=Strict$/);
    expect((await get('/api/v1/console/session', { cookie, ...CONSOLE })).statusCode).toBe(401);
  });

  test('switching organization opens a session there and ends the old one', async () => {
    const cookie = await signIn();
    const unknown = await server.app.app.inject({
      method: 'PUT',
      url: '/api/v1/console/session/organization',
      headers: { cookie, ...CONSOLE },
      payload: { organizationId: '0b7d1d52-7f3c-4b39-9f0e-2c0d7f1b3a11' },
    });
    expect(unknown.statusCode).toBe(401);
    expect((await get('/api/v1/console/session', { cookie, ...CONSOLE })).statusCode).toBe(200);
    const switched = await server.app.app.inject({
      method: 'PUT',
      url: '/api/v1/console/session/organization',
      headers: { cookie, ...CONSOLE },
      payload: { organizationId: server.admin.orgId },
    });
    expect(switched.statusCode).toBe(200);
    const next = String(switched.headers['set-cookie']).split(';')[0]!;
    expect((await get('/api/v1/console/session', { cookie: next, ...CONSOLE })).statusCode).toBe(200);
    expect((await get('/api/v1/console/session', { cookie, ...CONSOLE })).statusCode).toBe(401);
  });
});
