import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Backend, type ConformanceServer, startConformanceServer } from './conformance-server.ts';

/**
 * Infisical CLI 0.43.121 and 0.43.98 (packages/cmd/login.go, packages/cmd/init.go, packages/api/api.go):
 * the user login, as the real binaries send it (both versions take the same steps), against
 * `coffer serve` on each backend. `infisical login --email --password --organization-id` and
 * `infisical login -i`: POST /api/v3/auth/login (on an error it falls back to the SRP pair
 * login1/login2, which Coffer does not offer), GET /api/v1/organization to pick one (interactive),
 * POST /api/v3/auth/select-organization with the login token; `infisical init` then lists
 * GET /api/v1/workspace with the session token. Headers as resty sends them.
 */
const cli = { 'user-agent': 'cli', 'content-type': 'application/json', accept: 'application/json' };

describe.each<Backend>(['pglite', 'postgres'])('Infisical CLI 0.43.121 / 0.43.98 user login against coffer serve on %s', (backend) => {
  let server: ConformanceServer;
  const send = async (method: string, path: string, body?: unknown, bearer?: string) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...cli, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const login = async () => {
    const response = await send('POST', '/api/v3/auth/login', { email: server.email, password: server.password });
    expect(response.status).toBe(200);
    return response.body.accessToken as string;
  };

  beforeAll(async () => {
    server = await startConformanceServer(backend);
  });
  afterAll(async () => server?.stop());

  test('POST /api/v3/auth/login {email, password} → {accessToken}; a wrong password is 401', async () => {
    const response = await send('POST', '/api/v3/auth/login', { email: server.email, password: server.password });
    expect(response).toMatchObject({ status: 200, body: { accessToken: expect.stringMatching(/^eyJ/) } });
    const wrong = await send('POST', '/api/v3/auth/login', { email: server.email, password: 'not the password' });
    expect(wrong).toMatchObject({ status: 401, body: { statusCode: 401, error: expect.any(String), message: expect.any(String) } });
  });

  test('the login token only chooses an organization: other routes answer 401', async () => {
    const token = await login();
    const listing = await send('GET', `/api/v4/secrets?projectId=${server.projectId}&environment=dev`, undefined, token);
    expect(listing.status).toBe(401);
    expect(listing.body.message).toMatch(/select-organization/);
  });

  test('login -i / init: GET /api/v1/organization with the login token → {organizations: [{id, name}]}', async () => {
    const response = await send('GET', '/api/v1/organization', undefined, await login());
    expect(response).toMatchObject({ status: 200, body: { organizations: [{ id: server.orgId, name: 'Clients' }] } });
  });

  test('POST /api/v3/auth/select-organization {organizationId} → {token, isMfaEnabled: false}; the token reads secrets', async () => {
    const response = await send('POST', '/api/v3/auth/select-organization', { organizationId: server.orgId }, await login());
    expect(response).toMatchObject({ status: 200, body: { token: expect.stringMatching(/^eyJ/), isMfaEnabled: false } });
    const listing = await send('GET', `/api/v4/secrets?projectId=${server.projectId}&environment=dev&secretPath=/&includeImports=true`, undefined, response.body.token);
    expect(listing.status).toBe(200);
    expect(listing.body.secrets.map((secret: { secretKey: string }) => secret.secretKey)).toContain('BASE');
    expect((await server.auditEvents()).at(-2)).toBe('login-user');
  });

  test('select-organization: an organization the user has not joined is 401; no token is 401; an identity token is 403', async () => {
    const token = await login();
    const elsewhere = await send('POST', '/api/v3/auth/select-organization', { organizationId: '00000000-0000-4000-8000-000000000000' }, token);
    expect(elsewhere).toMatchObject({ status: 401, body: { message: 'User does not have access to the organization' } });
    expect((await send('POST', '/api/v3/auth/select-organization', { organizationId: server.orgId })).status).toBe(401);
    expect((await send('POST', '/api/v3/auth/select-organization', { organizationId: server.orgId }, server.adminToken)).status).toBe(403);
    expect((await send('POST', '/api/v3/auth/select-organization', { organizationId: 'not-an-id' }, token)).status).toBe(401);
    expect((await send('GET', '/api/v1/organization', undefined, 'garbage')).status).toBe(403);
  });

  test('init: GET /api/v1/workspace with the session token → workspaces with _id, name and orgId', async () => {
    const session = await send('POST', '/api/v3/auth/select-organization', { organizationId: server.orgId }, await login());
    const response = await send('GET', '/api/v1/workspace', undefined, session.body.token);
    expect(response.status).toBe(200);
    expect(response.body.workspaces).toContainEqual(expect.objectContaining({ _id: server.projectId, name: 'Client conformance', orgId: server.orgId }));
  });
});
