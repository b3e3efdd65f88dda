import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let fx: AccessFixture;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app);
  const secret = (name: string, secretPath: string, environment = 'dev') =>
    fx.call('POST', `/api/v3/secrets/raw/${name}`, { workspaceId: fx.projectId, environment, secretPath, secretValue: `value-of-${name}` });
  await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/', name: 'app' });
  await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/app', name: 'db' });
  await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/', name: 'ops' });
  await secret('ROOT', '/');
  await secret('APP', '/app');
  await secret('DB', '/app/db');
  await secret('OPS', '/ops');
  await secret('PROD', '/', 'prod');
});
afterAll(async () => app?.close());

const listSecrets = (token: string, query: Record<string, string> = {}) =>
  app.request('GET', '/api/v3/secrets/raw', { token, query: { workspaceId: fx.projectId, environment: 'dev', ...query } });
const keys = (response: { body: { secrets: { secretKey: string }[] } }) => response.body.secrets.map((secret) => secret.secretKey).sort();

describe('identities', () => {
  test('create, list, get, update and delete, each audited', async () => {
    const created = await app.request('POST', '/api/v1/identities', { token: fx.token, body: { name: 'ci', organizationId: fx.orgId } });
    expect(created.status).toBe(200);
    expect(created.body.identity).toMatchObject({ name: 'ci', authMethod: null });
    const id = created.body.identity.id;
    const listed = await app.request('GET', '/api/v1/identities', { token: fx.token, query: { orgId: fx.orgId } });
    expect(listed.body.identities).toContainEqual(expect.objectContaining({ identityId: id, role: 'no-access', orgId: fx.orgId }));
    const got = await app.request('GET', `/api/v1/identities/${id}`, { token: fx.token });
    expect(got.body.identity).toMatchObject({ identityId: id, identity: { id, name: 'ci' } });
    const updated = await app.request('PATCH', `/api/v1/identities/${id}`, { token: fx.token, body: { name: 'ci-2', role: 'member' } });
    expect(updated.body.identity.name).toBe('ci-2');
    expect((await app.request('GET', `/api/v1/identities/${id}`, { token: fx.token })).body.identity.role).toBe('member');
    expect((await app.request('DELETE', `/api/v1/identities/${id}`, { token: fx.token })).status).toBe(200);
    expect((await app.request('GET', `/api/v1/identities/${id}`, { token: fx.token })).status).toBe(404);
    const events = await app.database.db
      .selectFrom('auditLogs')
      .select('eventType')
      .where('eventMetadata', '@>', JSON.stringify({ identityId: id }))
      .execute();
    expect(events.map((event) => event.eventType).sort()).toEqual(['create-identity', 'delete-identity', 'update-identity']);
  });

  test.each([
    ['no name', { organizationId: 'ORG' }, 422],
    ['an unknown org role', { name: 'x', organizationId: 'ORG', role: 'owner' }, 422],
    ['another organization', { name: 'x', organizationId: '00000000-0000-0000-0000-000000000000' }, 403],
  ])('creating an identity with %s is refused and changes nothing', async (_name, body, status) => {
    const before = await snapshotDatabase(app.database);
    const payload = { ...body, organizationId: body.organizationId === 'ORG' ? fx.orgId : body.organizationId };
    expect((await app.request('POST', '/api/v1/identities', { token: fx.token, body: payload })).status).toBe(status);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('an org member cannot create, promote or manage an org admin identity', async () => {
    const member = await fx.identity('org-member');
    const before = await snapshotDatabase(app.database);
    const create = await app.request('POST', '/api/v1/identities', { token: member.token, body: { name: 'boss', organizationId: fx.orgId, role: 'admin' } });
    expect(create.status).toBe(403);
    expect(create.body).toMatchObject({ error: 'PermissionBoundaryError', code: 'PrivilegeEscalation' });
    expect((await app.request('PATCH', `/api/v1/identities/${member.id}`, { token: member.token, body: { role: 'admin' } })).status).toBe(403);
    expect((await app.request('DELETE', `/api/v1/identities/${fx.identityId}`, { token: member.token })).status).toBe(403);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('built-in project roles', () => {
  test('viewer reads, member writes secrets, neither deletes the project, no-access sees nothing', async () => {
    const viewer = await fx.identity('viewer', 'member', 'viewer');
    const member = await fx.identity('member', 'member', 'member');
    const none = await fx.identity('nobody', 'member', 'no-access');
    const create = (token: string, name: string) =>
      app.request('POST', `/api/v3/secrets/raw/${name}`, { token, body: { workspaceId: fx.projectId, environment: 'dev', secretValue: 'x' } });
    expect(keys(await listSecrets(viewer.token))).toEqual(['ROOT']);
    const denied = await create(viewer.token, 'BY_VIEWER');
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ error: 'PermissionDenied', message: 'You are not allowed to create on secrets' });
    expect((await create(member.token, 'BY_MEMBER')).status).toBe(200);
    expect((await app.request('DELETE', `/api/v1/workspace/${fx.projectId}`, { token: member.token })).status).toBe(403);
    expect((await listSecrets(none.token)).status).toBe(403);
    const outsider = await fx.identity('outsider');
    // an organization member in no role of the project is not told it exists (test/api/project-existence.test.ts)
    expect((await listSecrets(outsider.token)).body).toMatchObject({ statusCode: 404, error: 'NotFound', code: 'ProjectNotFound', message: 'Project not found' });
    expect((await app.request('GET', '/api/v1/workspace', { token: outsider.token })).body.workspaces).toEqual([]);
  });
});

describe('custom roles with conditions', () => {
  let token: string;

  beforeAll(async () => {
    const role = await app.request('POST', `/api/v1/workspace/${fx.projectSlug}/roles`, {
      token: fx.token,
      body: {
        slug: 'app-reader',
        name: 'App reader',
        permissions: [
          { subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } },
          { subject: 'workspace', action: 'read' },
        ],
      },
    });
    expect(role.status).toBe(200);
    expect(role.body.role).toMatchObject({ slug: 'app-reader', isBuiltIn: false, permissions: expect.any(Array) });
    ({ token } = await fx.identity('app-reader', 'member', 'app-reader'));
  });

  test('the glob grants its paths only; a recursive listing silently leaves out the rest', async () => {
    expect(keys(await listSecrets(token, { secretPath: '/app' }))).toEqual(['APP']);
    expect(keys(await listSecrets(token, { secretPath: '/app/db' }))).toEqual(['DB']);
    expect((await listSecrets(token, { secretPath: '/' })).status).toBe(403);
    expect((await listSecrets(token, { secretPath: '/ops' })).status).toBe(403);
    expect((await listSecrets(token, { environment: 'prod', secretPath: '/app' })).status).toBe(403);
    expect(keys(await listSecrets(token, { secretPath: '/', recursive: 'true' }))).toEqual(['APP', 'DB']);
    const single = await app.request('GET', '/api/v3/secrets/raw/OPS', { token, query: { workspaceId: fx.projectId, environment: 'dev', secretPath: '/ops' } });
    expect(single.status).toBe(403);
  });

  test('roles are listed with the built-in ones, found by slug, updated and deleted only when unassigned', async () => {
    const listed = await app.request('GET', `/api/v1/workspace/${fx.projectId}/roles`, { token: fx.token });
    expect(listed.body.roles.map((role: { slug: string }) => role.slug)).toEqual(['admin', 'member', 'viewer', 'no-access', 'k8s-operator', 'app-reader']);
    const bySlug = await app.request('GET', `/api/v1/workspace/${fx.projectSlug}/roles/slug/app-reader`, { token: fx.token });
    const roleId = bySlug.body.role.id;
    const renamed = await app.request('PATCH', `/api/v1/workspace/${fx.projectId}/roles/${roleId}`, { token: fx.token, body: { name: 'Readers' } });
    expect(renamed.body.role.name).toBe('Readers');
    const before = await snapshotDatabase(app.database);
    expect((await app.request('DELETE', `/api/v1/workspace/${fx.projectId}/roles/${roleId}`, { token: fx.token })).status).toBe(400);
    expect((await app.request('POST', `/api/v1/workspace/${fx.projectId}/roles`, { token: fx.token, body: { slug: 'admin', name: 'x', permissions: [] } })).status).toBe(
      400,
    );
    const badRule = { slug: 'bad', name: 'x', permissions: [{ subject: 'tags', action: 'read', conditions: { environment: 'dev' } }] };
    expect((await app.request('POST', `/api/v1/workspace/${fx.projectId}/roles`, { token: fx.token, body: badRule })).status).toBe(422);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('memberships and temporary roles', () => {
  test('op 11 replaces roles; at least one permanent role; unknown roles 404; nothing changes on refusal', async () => {
    const target = await fx.identity('tmp-target', 'member', 'viewer');
    const url = `/api/v2/workspace/${fx.projectId}/identity-memberships/${target.id}`;
    const before = await snapshotDatabase(app.database);
    const onlyTemporary = [{ role: 'member', isTemporary: true, temporaryMode: 'relative', temporaryRange: '1h', temporaryAccessStartTime: new Date().toISOString() }];
    expect((await app.request('PATCH', url, { token: fx.token, body: { roles: onlyTemporary } })).status).toBe(422);
    expect((await app.request('PATCH', url, { token: fx.token, body: { roles: [] } })).status).toBe(422);
    expect((await app.request('PATCH', url, { token: fx.token, body: { roles: [{ role: 'ghost' }] } })).status).toBe(404);
    const badRange = [{ role: 'viewer' }, { ...onlyTemporary[0], temporaryRange: 'soon' }];
    expect((await app.request('PATCH', url, { token: fx.token, body: { roles: badRange } })).status).toBe(422);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('a temporary role stops granting access when it expires, without a restart', async () => {
    const target = await fx.identity('tmp-expiring', 'member', 'no-access');
    expect((await listSecrets(target.token)).status).toBe(403);
    const start = new Date(Date.now() - 500).toISOString();
    const patched = await app.request('PATCH', `/api/v2/workspace/${fx.projectId}/identity-memberships/${target.id}`, {
      token: fx.token,
      body: { roles: [{ role: 'no-access' }, { role: 'viewer', isTemporary: true, temporaryMode: 'relative', temporaryRange: '2s', temporaryAccessStartTime: start }] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.roles).toEqual([
      expect.objectContaining({ role: 'no-access', isTemporary: false, temporaryRange: null }),
      expect.objectContaining({
        role: 'viewer',
        isTemporary: true,
        temporaryMode: 'relative',
        temporaryRange: '2s',
        temporaryAccessEndTime: new Date(Date.parse(start) + 2000).toISOString(),
      }),
    ]);
    expect((await listSecrets(target.token)).status).toBe(200);
    // fixed sleep: the 2-s temporary role must end on the server's clock, with the permission it cached
    await sleep(1700);
    expect((await listSecrets(target.token)).status).toBe(403);
  });

  test('nobody grants or manages above their own permissions', async () => {
    const member = await fx.identity('escalator', 'member', 'member');
    const victim = await fx.identity('victim', 'member', 'viewer');
    const admin = await fx.identity('project-admin', 'member', 'admin');
    const before = await snapshotDatabase(app.database);
    const attempts = [
      app.request('PATCH', `/api/v2/workspace/${fx.projectId}/identity-memberships/${victim.id}`, { token: member.token, body: { roles: [{ role: 'admin' }] } }),
      app.request('PATCH', `/api/v2/workspace/${fx.projectId}/identity-memberships/${member.id}`, { token: member.token, body: { roles: [{ role: 'admin' }] } }),
      app.request('DELETE', `/api/v2/workspace/${fx.projectId}/identity-memberships/${admin.id}`, { token: member.token }),
      app.request('POST', '/api/v1/additional-privilege/identity/permanent', {
        token: member.token,
        body: { identityId: victim.id, projectSlug: fx.projectSlug, permissions: [{ subject: 'role', action: ['create'] }] },
      }),
      app.request('POST', `/api/v1/workspace/${fx.projectId}/roles`, { token: admin.token, body: { slug: 'ok', name: 'ok', permissions: [] } }),
    ];
    const [grant, self, removeAdmin, privilege] = await Promise.all(attempts.slice(0, 4));
    for (const response of [grant, self, removeAdmin, privilege]) {
      expect(response!.status).toBe(403);
      expect(response!.body).toMatchObject({ error: 'PermissionBoundaryError', code: 'PrivilegeEscalation' });
    }
    expect((await attempts[4])!.status).toBe(200);
    const after = await snapshotDatabase(app.database);
    expect(after.project_roles).toHaveLength(before.project_roles!.length + 1);
    // the role created moved the permissions cache's version
    expect({ ...after, project_roles: [], audit_logs: [], cache_versions: [] }).toEqual({ ...before, project_roles: [], audit_logs: [], cache_versions: [] });
  });
});

describe('additional privileges', () => {
  test('a privilege is merged into the identity permissions until deleted (op 17 reads it)', async () => {
    const target = await fx.identity('privileged', 'member', 'no-access');
    expect((await listSecrets(target.token, { environment: 'prod' })).status).toBe(403);
    const created = await app.request('POST', '/api/v1/additional-privilege/identity/permanent', {
      token: fx.token,
      body: {
        identityId: target.id,
        projectSlug: fx.projectSlug,
        slug: 'prod-read',
        privilegePermission: { actions: ['read'], subject: 'secrets', conditions: { environment: 'prod' } },
      },
    });
    expect(created.status).toBe(200);
    expect(keys(await listSecrets(target.token, { environment: 'prod' }))).toEqual(['PROD']);
    expect((await listSecrets(target.token)).status).toBe(403);
    const got = await app.request('GET', '/api/v1/additional-privilege/identity/prod-read', {
      token: fx.token,
      query: { identityId: target.id, projectSlug: fx.projectSlug },
    });
    expect(got.body.privilege).toMatchObject({
      slug: 'prod-read',
      isTemporary: false,
      permissions: [{ subject: 'secrets', action: ['read'], conditions: { environment: 'prod' } }],
      projectMembershipId: expect.any(String),
    });
    const listed = await app.request('GET', '/api/v1/additional-privilege/identity', { token: fx.token, query: { identityId: target.id, projectSlug: fx.projectSlug } });
    expect(listed.body.privileges).toHaveLength(1);
    const body = { privilegeSlug: 'prod-read', identityId: target.id, projectSlug: fx.projectSlug };
    const updated = await app.request('PATCH', '/api/v1/additional-privilege/identity', {
      token: fx.token,
      body: { ...body, privilegeDetails: { permissions: [{ subject: 'secrets', action: ['read'], conditions: { environment: 'dev' } }] } },
    });
    expect(updated.status).toBe(200);
    expect((await listSecrets(target.token, { environment: 'prod' })).status).toBe(403);
    expect((await app.request('DELETE', '/api/v1/additional-privilege/identity', { token: fx.token, body })).status).toBe(200);
    expect((await listSecrets(target.token)).status).toBe(403);
    const missing = await app.request('GET', '/api/v1/additional-privilege/identity/prod-read', {
      token: fx.token,
      query: { identityId: target.id, projectSlug: fx.projectSlug },
    });
    expect(missing.status).toBe(404);
  });

  test('a temporary privilege expires on its own', async () => {
    const target = await fx.identity('briefly-privileged', 'member', 'no-access');
    const response = await app.request('POST', '/api/v1/additional-privilege/identity/temporary', {
      token: fx.token,
      body: {
        identityId: target.id,
        projectSlug: fx.projectSlug,
        permissions: [{ subject: 'secrets', action: 'read' }],
        temporaryMode: 'relative',
        temporaryRange: '1s',
        temporaryAccessStartTime: new Date().toISOString(),
      },
    });
    expect(response.status).toBe(200);
    expect(response.body.privilege.slug).toMatch(/^[a-z0-9]{12}$/);
    expect((await listSecrets(target.token)).status).toBe(200);
    // fixed sleep: the 1-s temporary privilege must end on the server's clock, with the permission it cached
    await sleep(1100);
    expect((await listSecrets(target.token)).status).toBe(403);
  });

  test('requests without rules are refused with 422 and change nothing', async () => {
    const target = await fx.identity('no-rules', 'member', 'viewer');
    const before = await snapshotDatabase(app.database);
    const response = await app.request('POST', '/api/v1/additional-privilege/identity/permanent', {
      token: fx.token,
      body: { identityId: target.id, projectSlug: fx.projectSlug },
    });
    expect(response.status).toBe(422);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});
