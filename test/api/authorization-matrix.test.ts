import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dropLeaseTarget, type MatrixFixture, matrixFixture, type Persona, REJECTED_PERSONAS, ROLE_PERSONAS } from '../support/matrix-fixture.ts';
import { dropRotatedRoles, type RouteEntry, routeTable } from '../support/route-table.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Every route the app registers × {no token, malformed, expired, revoked,
 * another organization's token, viewer, member, project admin, org admin}.
 * Routes come from the app itself, so a route added later without an entry
 * in the table fails here.
 */
const PUBLIC_ROUTES = new Set([
  'GET /',
  'GET /api/status',
  'POST /api/v1/admin/bootstrap',
  'POST /api/v1/auth/universal-auth/login',
  // the token in the body is the credential (test/api/jwt-auth.test.ts, test/api/kubernetes-auth.test.ts)
  'POST /api/v1/auth/kubernetes-auth/login',
  'POST /api/v1/auth/jwt-auth/login',
  'POST /api/v1/auth/login',
  'POST /api/v3/auth/login',
  'POST /api/v1/invite-org/accept',
  // the access token in the body authorizes these (test/api/client-contracts.test.ts)
  'POST /api/v1/auth/token/renew',
  'POST /api/v1/auth/token/revoke',
  // a user's login token authorizes these, never an identity's (test/clients/infisical-cli-login.test.ts)
  'POST /api/v3/auth/select-organization',
  'GET /api/v1/organization',
  // single sign-on: the provider's answer (and the single-use state) is the credential (test/api/sso-oidc.test.ts)
  'GET /api/v1/sso/oidc/login',
  'GET /api/v1/sso/oidc/callback',
  // a user's login token (or session) authorizes TOTP enrolment, never an identity's (test/api/mfa-sessions.test.ts)
  'GET /api/v1/auth/mfa',
  'POST /api/v1/auth/mfa/totp',
  'POST /api/v1/auth/mfa/totp/confirm',
  // the console's sign-in: the credentials in the body, as POST /api/v1/auth/login (test/console/console-server.test.ts)
  'POST /api/v1/console/session',
]);
const isPublic = (key: string) => PUBLIC_ROUTES.has(key) || / \/api\/docs(\/|$)/.test(key);

const app: TestApp = await startTestApp();
const routes = [...new Set(app.app.registeredRoutes.map((route) => `${route.method} ${route.url}`))].filter((key) => !isPublic(key));

let fx: MatrixFixture;
let table: Record<string, RouteEntry>;

beforeAll(async () => {
  fx = await matrixFixture(app);
  table = routeTable(fx);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await dropRotatedRoles();
  await dropLeaseTarget();
});

const REJECTED_STATUS: Record<(typeof REJECTED_PERSONAS)[number], number[]> = {
  noToken: [401],
  malformed: [403],
  expired: [403],
  revoked: [401],
  otherOrg: [403, 404],
};

async function call(method: string, entry: RouteEntry, persona: Persona) {
  const request = await entry.build(persona);
  const token = request.token ?? fx.tokens[persona];
  const response = await app.request(method, request.url, { token, body: request.body, query: request.query });
  return { ...response, request };
}

function describeCall(method: string, persona: Persona, response: { status: number; body: unknown; request: { url: string } }) {
  return `${persona}: ${method} ${response.request.url} → ${response.status} ${JSON.stringify(response.body)}`;
}

test('the table lists exactly the protected routes the app registers', () => {
  expect(routes.length).toBeGreaterThan(80);
  const missing = routes.filter((key) => !table[key]);
  expect(missing, 'routes without an entry in test/support/route-table.ts').toEqual([]);
  const stale = Object.keys(table).filter((key) => !routes.includes(key));
  expect(stale, 'entries for routes the app does not register').toEqual([]);
});

describe.each(routes)('%s', (key) => {
  const method = key.split(' ')[0]!;

  test('refuses bad tokens, other organizations and missing roles, changing nothing', async () => {
    const entry = table[key];
    expect(entry, `no entry for ${key} in test/support/route-table.ts`).toBeDefined();
    const denied = ROLE_PERSONAS.filter((persona) => !entry!.allow.includes(persona));
    const rejected: Persona[] = [...REJECTED_PERSONAS.filter((persona) => !(persona === 'otherOrg' && entry!.ownOrg)), ...denied];
    const requests = await Promise.all(rejected.map(async (persona) => ({ persona, request: await entry!.build(persona) })));
    const before = await snapshotDatabase(app.database);
    const outcomes = [];
    for (const { persona, request } of requests) {
      const response = await app.request(method, request.url, { token: request.token ?? fx.tokens[persona], body: request.body, query: request.query });
      outcomes.push({ persona, response: { ...response, request } });
    }
    expect(await snapshotDatabase(app.database), outcomes.map(({ persona, response }) => describeCall(method, persona, response)).join('\n')).toEqual(before);
    for (const { persona, response } of outcomes) {
      const expected = persona in REJECTED_STATUS ? REJECTED_STATUS[persona as keyof typeof REJECTED_STATUS] : entry!.notMember ? [404] : [403];
      expect(expected, describeCall(method, persona, response)).toContain(response.status);
      expect(response.body).toMatchObject({ statusCode: response.status, error: expect.any(String), reqId: expect.any(String) });
    }
  });

  test('serves the roles allowed to call it', async () => {
    const entry = table[key]!;
    if (entry.streams) return;
    for (const persona of entry.allow) {
      const response = await call(method, entry, persona);
      expect(response.status, describeCall(method, persona, response)).toBe(200);
    }
    if (entry.ownOrg) {
      const response = await call(method, entry, 'otherOrg');
      expect(response.status, describeCall(method, 'otherOrg', response)).toBe(200);
      const text = JSON.stringify(response.body);
      expect(text).not.toContain(fx.ids.projectId);
      expect(text).not.toContain(fx.ids.orgId);
    }
  });
});

describe('GET /api/v1/organization/audit-logs shows each persona only what it may read', () => {
  test('entries of projects whose audit log it may read, and organization entries (org role member or admin)', async () => {
    const foreign = await app.request('POST', '/api/v2/workspace', { token: fx.ids.token, body: { projectName: 'Matrix foreign' } });
    const foreignId: string = foreign.body.project.id;
    await app.request('POST', `/api/v3/secrets/raw/FOREIGN_ONLY`, {
      token: fx.ids.token,
      body: { workspaceId: foreignId, environment: 'dev', secretValue: 'foreign-value' },
    });
    for (const persona of ROLE_PERSONAS) {
      const exported = await app.request('GET', '/api/v1/organization/audit-logs', { token: fx.tokens[persona], query: { limit: '1000' } });
      expect(exported.status, persona).toBe(200);
      const seen = new Set<string | null>(exported.body.auditLogs.map((entry: { projectId: string | null }) => entry.projectId));
      expect(seen.has(null), `${persona} sees organization entries`).toBe(true);
      expect(seen.has(foreignId), `${persona} sees the project it is not in`).toBe(persona === 'orgAdmin');
      if (persona === 'orgAdmin') continue;
      const member = (await app.request('GET', '/api/v1/workspace', { token: fx.tokens[persona] })).body.workspaces.map((project: { id: string }) => project.id);
      for (const projectId of seen) if (projectId !== null) expect(member, `${persona} sees entries of ${projectId}`).toContain(projectId);
      expect(seen.has(fx.ids.projectId), `${persona} sees its own project`).toBe(true);
    }
  });
});
