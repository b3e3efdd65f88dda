import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OPERATOR_NEEDS, OPERATOR_ROLE_SLUG } from '../../src/permissions/operator-role.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

// Least privilege for operators: the built-in project role `k8s-operator` grants exactly what a sync uses, and
// GET /api/v1/workspace/{id}/effective-permissions tells a caller what it may do itself (the operator asks it at start).

let app: TestApp;
let fx: AccessFixture;

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app, 'operator-role');
  await fx.call('POST', '/api/v3/secrets/raw/SYNCED', { workspaceId: fx.projectId, environment: 'dev', secretValue: 'value' });
});
afterAll(async () => app?.close());

const effective = (token: string, projectId = fx.projectId) => app.request('GET', `/api/v1/workspace/${projectId}/effective-permissions`, { token });

const record = (token: string, name: string) =>
  app.request('PUT', '/api/v1/operator/integrations', {
    token,
    body: {
      cluster: 'role-cluster',
      managedBy: `shop/${name}`,
      projectId: fx.projectId,
      environment: 'dev',
      secretPath: '/',
      app: name,
      owner: 'shop',
      targetEnvironment: 'shop',
    },
  });

describe(`the built-in project role ${OPERATOR_ROLE_SLUG}`, () => {
  test('is listed with the built-in roles, and no custom role may take its slug', async () => {
    const roles = await app.request('GET', `/api/v1/workspace/${fx.projectId}/roles`, { token: fx.token });
    expect(roles.status).toBe(200);
    const listed = JSON.stringify(roles.body);
    expect(listed).toContain(`"slug":"${OPERATOR_ROLE_SLUG}"`);
    const taken = await app.request('POST', `/api/v1/workspace/${fx.projectId}/roles`, {
      token: fx.token,
      body: { name: 'Mine', slug: OPERATOR_ROLE_SLUG, permissions: [] },
    });
    expect(taken.status).toBe(400);
    expect(taken.body).toMatchObject({ code: 'ReservedRoleSlug' });
  });

  test('grants exactly what a sync uses: reads secrets, keeps integration records; writes nothing else', async () => {
    const { id, token } = await fx.identity('role-operator', 'member', OPERATOR_ROLE_SLUG);
    await fx.bindToCluster(id, 'role-cluster');
    const answer = await effective(token);
    expect(answer.status).toBe(200);
    expect(answer.body.permissions).toEqual(OPERATOR_NEEDS.map(({ subject, actions }) => ({ subject, actions })));

    const listing = await app.request('GET', '/api/v3/secrets/raw', { token, query: { workspaceId: fx.projectId, environment: 'dev' } });
    expect(listing.status).toBe(200);
    expect(listing.body.secrets.map((secret: { secretKey: string }) => secret.secretKey)).toContain('SYNCED');
    const recorded = await record(token, 'app');
    expect(recorded.status, JSON.stringify(recorded.body)).toBe(200);

    const write = await app.request('POST', '/api/v3/secrets/raw/NOT_MINE', { token, body: { workspaceId: fx.projectId, environment: 'dev', secretValue: 'x' } });
    expect(write.status).toBe(403);
    const grant = await app.request('POST', `/api/v1/workspace/${fx.projectId}/namespace-grants`, { token, body: { namespace: 'shop', cluster: 'role-cluster' } });
    expect(grant.status).toBe(403);
  });
});

describe('GET /api/v1/workspace/{id}/effective-permissions', () => {
  test("answers the caller's own permissions, by subject, with the rules they come from", async () => {
    const { token } = await fx.identity('role-viewer', 'member', 'viewer');
    const answer = await effective(token);
    expect(answer.status).toBe(200);
    const integrations = answer.body.permissions.find((permission: { subject: string }) => permission.subject === 'integrations');
    expect(integrations).toEqual({ subject: 'integrations', actions: ['read'] });
    expect(answer.body.rules).toContainEqual({ subject: 'secrets', action: ['read'] });

    const none = await fx.identity('role-none', 'member', 'no-access');
    expect((await effective(none.token)).body).toEqual({ permissions: [], rules: [] });
  });

  test('a caller who is no member of the project, or of its organization, is told it does not exist', async () => {
    const outsider = await fx.identity('role-outsider', 'member');
    expect((await effective(outsider.token)).status).toBe(404);
    const foreign = await fx.foreignAdmin('role-foreign');
    expect((await effective(foreign)).status).toBe(404);
    expect((await effective(fx.token, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await effective(fx.token, 'not-an-id')).status).toBe(404);
  });
});
