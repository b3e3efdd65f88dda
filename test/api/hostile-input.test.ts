import { afterAll, beforeAll, expect, test } from 'vitest';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The inputs that answered 500 (PostgreSQL refused them deep in a service):
 * NUL characters, integers past a 32-bit column, a duration past any date,
 * a malformed id in a filter. Each now gets a 4xx in the documented body
 * and changes nothing. (Route schemas will name the field; this is the
 * safety net below them.)
 */
let app: TestApp;
let fx: Awaited<ReturnType<typeof secretsFixture>>;
let identityId: string;

beforeAll(async () => {
  app = await startTestApp();
  fx = await secretsFixture(app);
  identityId = (await app.request('POST', '/api/v1/identities', { token: fx.token, body: { name: 'worker', organizationId: fx.orgId, role: 'member' } })).body.identity.id;
  expect((await app.request('POST', `/api/v2/workspace/${fx.projectId}/identity-memberships/${identityId}`, { token: fx.token, body: { role: 'viewer' } })).status).toBe(200);
});
afterAll(async () => app?.close());

const cases: [string, () => [string, string, Record<string, unknown>?, Record<string, string>?]][] = [
  ['a NUL in a batch secret name', () => ['POST', '/api/v3/secrets/batch/raw', { workspaceId: fx.projectId, environment: 'dev', secrets: [{ secretKey: 'A\u0000B', secretValue: 'v' }] }]],
  ['a NUL in a secret name (path parameter)', () => ['POST', '/api/v3/secrets/raw/A%00B', { workspaceId: fx.projectId, environment: 'dev', secretValue: 'v' }]],
  ['a NUL in an environment slug filter', () => ['GET', '/api/v3/secrets/raw', undefined, { workspaceId: fx.projectId, environment: 'd\u0000v' }]],
  ['a NUL in a project name', () => ['POST', '/api/v2/workspace', { projectName: 'P\u0000' }]],
  ['a NUL in an environment name', () => ['POST', `/api/v1/workspace/${fx.projectId}/environments`, { name: 'E\u0000', slug: 'nul-env' }]],
  ['an environment position past 2^31', () => ['POST', `/api/v1/workspace/${fx.projectId}/environments`, { name: 'Far', slug: 'far', position: 2 ** 40 }]],
  ['an access-token use limit past 2^31', () => ['POST', `/api/v1/auth/universal-auth/identities/${identityId}`, { accessTokenNumUsesLimit: 2 ** 40 }]],
  [
    'a temporary range of 999999999999d',
    () => [
      'PATCH',
      `/api/v2/workspace/${fx.projectId}/identity-memberships/${identityId}`,
      { roles: [{ role: 'viewer' }, { role: 'admin', isTemporary: true, temporaryMode: 'relative', temporaryRange: '999999999999d', temporaryAccessStartTime: new Date().toISOString() }] },
    ],
  ],
  ['a non-UUID projectId on the organization audit log', () => ['GET', '/api/v1/organization/audit-logs', undefined, { projectId: 'not-a-uuid' }]],
];

test.each(cases)('%s → 4xx in the documented body, nothing written', async (_name, build) => {
  const [method, url, body, query] = build();
  const before = await snapshotDatabase(app.database);
  const response = await app.request(method, url, { token: fx.token, body, query });
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(response.status).toBeLessThan(500);
  expect(response.body).toEqual({ statusCode: response.status, error: expect.any(String), message: expect.any(String), reqId: expect.any(String), ...(response.body.details ? { details: expect.anything() } : {}) });
  const after = await snapshotDatabase(app.database);
  // reads are audited; nothing else may change
  expect({ ...after, audit_logs: [] }).toEqual({ ...before, audit_logs: [] });
});
