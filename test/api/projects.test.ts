import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let token: string;
let orgId: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ token, orgId } = await bootstrap(app));
});
afterAll(async () => app?.close());

const projectShape = {
  id: expect.any(String),
  name: expect.any(String),
  slug: expect.any(String),
  autoCapitalization: true,
  orgId: expect.any(String),
  createdAt: expect.any(String),
  updatedAt: expect.any(String),
  version: 3,
  upgradeStatus: null,
  pitVersionLimit: 10,
  kmsCertificateKeyId: null,
  auditLogsRetentionDays: null,
};

describe('create project (POST /api/v2/workspace)', () => {
  test('without a slug: generated slug, default environments, seed shape', async () => {
    const response = await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Billing Service' } });
    expect(response.status).toBe(200);
    const { project } = response.body;
    expect(project).toEqual({
      ...projectShape,
      name: 'Billing Service',
      orgId,
      _id: project.id,
      environments: [
        { name: 'Development', slug: 'dev', id: expect.any(String) },
        { name: 'Staging', slug: 'staging', id: expect.any(String) },
        { name: 'Production', slug: 'prod', id: expect.any(String) },
      ],
    });
    expect(project.slug).toMatch(/^billing-service-[a-z0-9]{4}$/);
    const positions = await app.database.db
      .selectFrom('projectEnvironments')
      .select(['slug', 'position'])
      .where('projectId', '=', project.id)
      .orderBy('position')
      .execute();
    expect(positions).toEqual([
      { slug: 'dev', position: 1 },
      { slug: 'staging', position: 2 },
      { slug: 'prod', position: 3 },
    ]);
    const roots = await app.database.db
      .selectFrom('secretFolders')
      .innerJoin('projectEnvironments', 'projectEnvironments.id', 'secretFolders.envId')
      .select(['secretFolders.name', 'secretFolders.parentId'])
      .where('projectEnvironments.projectId', '=', project.id)
      .execute();
    expect(roots).toEqual(Array(3).fill({ name: 'root', parentId: null }));
  });

  test('with a slug of length 5 and 36', async () => {
    for (const slug of ['abcde', 'a'.repeat(36)]) {
      const response = await app.request('POST', '/api/v2/workspace', { token, body: { projectName: `P ${slug.length}`, slug } });
      expect(response.status).toBe(200);
      expect(response.body.project.slug).toBe(slug);
    }
  });

  test('the creating identity becomes a project admin', async () => {
    const response = await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Membership check' } });
    const roles = await app.database.db
      .selectFrom('identityProjectMemberships as m')
      .innerJoin('projectMembershipRoles as r', 'r.identityProjectMembershipId', 'm.id')
      .select(['r.role'])
      .where('m.projectId', '=', response.body.project.id)
      .execute();
    expect(roles).toEqual([{ role: 'admin' }]);
  });

  test.each([
    ['missing projectName', {}, 422],
    ['projectName of the wrong type', { projectName: 42 }, 422],
    ['empty projectName', { projectName: '   ' }, 422],
    ['projectName of 65 characters', { projectName: 'n'.repeat(65) }, 422],
    ['slug of length 4', { projectName: 'x', slug: 'abcd' }, 422],
    ['slug of length 37', { projectName: 'x', slug: 'a'.repeat(37) }, 422],
    ['slug with capitals', { projectName: 'x', slug: 'Hello-World' }, 422],
    ['slug with a trailing hyphen', { projectName: 'x', slug: 'hello-' }, 422],
    ['slug already taken', { projectName: 'x', slug: 'abcde' }, 400],
  ])('%s %j → %i, database unchanged', async (_name, body, status) => {
    const before = await snapshotDatabase(app.database);
    const response = await app.request('POST', '/api/v2/workspace', { token, body });
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, message: expect.any(String), error: expect.any(String), reqId: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('malformed JSON → 400', async () => {
    const response = await app.app.inject({
      method: 'POST',
      url: '/api/v2/workspace',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: '{"projectName": ',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ statusCode: 400, error: 'BadRequest' });
  });
});

describe('read, update and delete projects', () => {
  let projectId: string;

  beforeAll(async () => {
    const response = await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Lifecycle', slug: 'lifecycle' } });
    projectId = response.body.project.id;
  });

  test('list and get include the environments', async () => {
    const list = await app.request('GET', '/api/v1/workspace', { token });
    expect(list.status).toBe(200);
    expect(list.body.workspaces.map((project: { slug: string }) => project.slug)).toContain('lifecycle');
    const get = await app.request('GET', `/api/v1/workspace/${projectId}`, { token });
    expect(get.status).toBe(200);
    expect(get.body.workspace).toMatchObject({ id: projectId, _id: projectId, slug: 'lifecycle' });
    expect(get.body.workspace.environments.map((environment: { slug: string }) => environment.slug)).toEqual(['dev', 'staging', 'prod']);
  });

  test('update name and autoCapitalization (PATCH /api/v1/workspace/{id})', async () => {
    const response = await app.request('PATCH', `/api/v1/workspace/${projectId}`, {
      token,
      body: { name: 'n'.repeat(64), autoCapitalization: false },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ workspace: { ...projectShape, id: projectId, orgId, slug: 'lifecycle', name: 'n'.repeat(64), autoCapitalization: false } });
    expect(response.body.workspace).not.toHaveProperty('environments');
    const empty = await app.request('PATCH', `/api/v1/workspace/${projectId}`, { token, body: {} });
    expect(empty.status).toBe(200);
    expect(empty.body.workspace.name).toBe('n'.repeat(64));
  });

  test.each([
    ['name of 65 characters', 'PROJECT', { name: 'n'.repeat(65) }, 422],
    ['autoCapitalization of the wrong type', 'PROJECT', { autoCapitalization: 'yes' }, 422],
    ['unknown project id', '3f1c2d4e-0000-4000-8000-000000000000', { name: 'x' }, 404],
    ['non-UUID project id', 'not-a-uuid', { name: 'x' }, 404],
  ])('update with %s (%s, %j) → %i, database unchanged', async (_name, id, body, status) => {
    const before = await snapshotDatabase(app.database);
    const response = await app.request('PATCH', `/api/v1/workspace/${id === 'PROJECT' ? projectId : id}`, { token, body });
    expect(response.status).toBe(status);
    expect(response.body.statusCode).toBe(status);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('unknown and non-UUID ids → 404 on get and delete', async () => {
    for (const id of ['3f1c2d4e-0000-4000-8000-000000000000', 'nope']) {
      expect((await app.request('GET', `/api/v1/workspace/${id}`, { token })).status).toBe(404);
      expect((await app.request('DELETE', `/api/v1/workspace/${id}`, { token })).status).toBe(404);
    }
  });

  test('delete removes the project with its environments and folders', async () => {
    const response = await app.request('DELETE', `/api/v1/workspace/${projectId}`, { token });
    expect(response.status).toBe(200);
    expect(response.body.workspace).toMatchObject({ id: projectId, slug: 'lifecycle' });
    expect((await app.request('GET', `/api/v1/workspace/${projectId}`, { token })).status).toBe(404);
    const environments = await app.database.db.selectFrom('projectEnvironments').select('id').where('projectId', '=', projectId).execute();
    expect(environments).toEqual([]);
    const changes = await app.database.db.selectFrom('changeLog').select('kind').where('projectId', '=', projectId).execute();
    expect(changes).toEqual([{ kind: 'project-deleted' }]);
  });
});
