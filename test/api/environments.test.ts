import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let token: string;
let projectId: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ token } = await bootstrap(app));
  projectId = (await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Envs', slug: 'envs-project' } })).body.project.id;
});
afterAll(async () => app?.close());

async function order(): Promise<string[]> {
  const response = await app.request('GET', `/api/v1/workspace/${projectId}`, { token });
  return response.body.workspace.environments.map((environment: { slug: string }) => environment.slug);
}

async function positions(): Promise<Record<string, number>> {
  const rows = await app.database.db.selectFrom('projectEnvironments').select(['slug', 'position']).where('projectId', '=', projectId).execute();
  return Object.fromEntries(rows.map((row) => [row.slug, row.position]));
}

const createEnvironment = (body: unknown) => app.request('POST', `/api/v1/workspace/${projectId}/environments`, { token, body });

describe('create environment', () => {
  test('appends after the last position, with a root folder, in the seed shape', async () => {
    const response = await createEnvironment({ name: 'QA', slug: 'qa' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      message: 'Successfully created new environment',
      workspace: projectId,
      environment: {
        id: expect.any(String),
        name: 'QA',
        slug: 'qa',
        position: 4,
        projectId,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    const root = await app.database.db.selectFrom('secretFolders').selectAll().where('envId', '=', response.body.environment.id).execute();
    expect(root).toMatchObject([{ name: 'root', parentId: null }]);
  });

  test('at an occupied position shifts the others up', async () => {
    const response = await createEnvironment({ name: 'Test', slug: 'test', position: 2 });
    expect(response.status).toBe(200);
    expect(await positions()).toEqual({ dev: 1, test: 2, staging: 3, prod: 4, qa: 5 });
    expect(await order()).toEqual(['dev', 'test', 'staging', 'prod', 'qa']);
  });

  test.each([
    ['missing name', { slug: 'x1' }, 422],
    ['missing slug', { name: 'X' }, 422],
    ['slug with spaces', { name: 'X', slug: 'has space' }, 422],
    ['slug with capitals', { name: 'X', slug: 'Prod2' }, 422],
    ['position 0', { name: 'X', slug: 'x2', position: 0 }, 422],
    ['position of the wrong type', { name: 'X', slug: 'x3', position: 'first' }, 422],
    ['duplicate slug', { name: 'Dev again', slug: 'dev' }, 400],
  ])('%s %j → %i, database unchanged', async (_name, body, status) => {
    const before = await snapshotDatabase(app.database);
    const response = await createEnvironment(body);
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, reqId: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('unknown or non-UUID project → 404, database unchanged', async () => {
    const before = await snapshotDatabase(app.database);
    for (const id of ['9d0f7c3e-1111-4111-8111-111111111111', 'abc']) {
      const response = await app.request('POST', `/api/v1/workspace/${id}/environments`, { token, body: { name: 'X', slug: 'xx' } });
      expect(response.status).toBe(404);
    }
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('update environment', () => {
  const environmentId = async (slug: string) =>
    (await app.database.db.selectFrom('projectEnvironments').select('id').where('projectId', '=', projectId).where('slug', '=', slug).executeTakeFirstOrThrow()).id;
  const update = async (slug: string, body: unknown) => app.request('PATCH', `/api/v1/workspace/${projectId}/environments/${await environmentId(slug)}`, { token, body });

  test('rename and change slug', async () => {
    const response = await update('qa', { name: 'Quality', slug: 'quality' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      message: 'Successfully updated environment',
      workspace: projectId,
      environment: { name: 'Quality', slug: 'quality', position: 5, projectId },
    });
  });

  test('moving down and up shifts the environments in between', async () => {
    expect((await update('dev', { position: 4 })).status).toBe(200);
    expect(await order()).toEqual(['test', 'staging', 'prod', 'dev', 'quality']);
    expect((await update('quality', { position: 1 })).status).toBe(200);
    expect(await order()).toEqual(['quality', 'test', 'staging', 'prod', 'dev']);
    expect(await positions()).toEqual({ quality: 1, test: 2, staging: 3, prod: 4, dev: 5 });
  });

  test('moving to a free position beyond the last leaves a gap', async () => {
    expect((await update('test', { position: 9 })).status).toBe(200);
    expect(await positions()).toMatchObject({ test: 9 });
    expect((await update('test', { position: 2 })).status).toBe(200);
  });

  test.each([
    ['slug of another environment', 'dev', { slug: 'prod' }, 400],
    ['invalid slug', 'dev', { slug: 'Not Valid' }, 422],
    ['empty name', 'dev', { name: '' }, 422],
    ['unknown environment id', null, { name: 'x' }, 404],
  ])('%s (%s, %j) → %i, database unchanged', async (_name, slug, body, status) => {
    const before = await snapshotDatabase(app.database);
    const response =
      slug === null
        ? await app.request('PATCH', `/api/v1/workspace/${projectId}/environments/7a1b2c3d-2222-4222-8222-222222222222`, { token, body })
        : await update(slug, body);
    expect(response.status).toBe(status);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('an environment of another project is not found through this project', async () => {
    const other = (await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Other' } })).body.project;
    const before = await snapshotDatabase(app.database);
    const response = await app.request('PATCH', `/api/v1/workspace/${projectId}/environments/${other.environments[0].id}`, { token, body: { name: 'hijack' } });
    expect(response.status).toBe(404);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('get and delete environment', () => {
  test('get by project and by id alone', async () => {
    const id = (await app.request('GET', `/api/v1/workspace/${projectId}`, { token })).body.workspace.environments[0].id;
    const scoped = await app.request('GET', `/api/v1/workspace/${projectId}/environments/${id}`, { token });
    expect(scoped.status).toBe(200);
    expect(scoped.body.environment).toMatchObject({ id, projectId });
    const direct = await app.request('GET', `/api/v1/workspace/environments/${id}`, { token });
    expect(direct.body).toEqual(scoped.body);
    expect((await app.request('GET', '/api/v1/workspace/environments/zzz', { token })).status).toBe(404);
  });

  test('delete removes it and records a change', async () => {
    const id = (await app.request('GET', `/api/v1/workspace/${projectId}`, { token })).body.workspace.environments.find(
      (environment: { slug: string }) => environment.slug === 'quality',
    ).id;
    const response = await app.request('DELETE', `/api/v1/workspace/${projectId}/environments/${id}`, { token });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ message: 'Successfully deleted environment', environment: { id, slug: 'quality' } });
    expect(await order()).not.toContain('quality');
    const change = await app.database.db
      .selectFrom('changeLog')
      .select(['kind', 'environmentSlug'])
      .where('environmentId', '=', id)
      .orderBy('revision', 'desc')
      .executeTakeFirst();
    expect(change).toEqual({ kind: 'environment-deleted', environmentSlug: 'quality' });
    expect((await app.request('DELETE', `/api/v1/workspace/${projectId}/environments/${id}`, { token })).status).toBe(404);
  });
});
