import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let token: string;
let projectId: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ token } = await bootstrap(app));
  projectId = (await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Folders', slug: 'folders-project' } })).body.project.id;
});
afterAll(async () => app?.close());

const createFolder = (body: Record<string, unknown>) => app.request('POST', '/api/v1/folders', { token, body: { workspaceId: projectId, environment: 'dev', ...body } });
const listFolders = (path: string, environment = 'dev') => app.request('GET', '/api/v1/folders', { token, query: { workspaceId: projectId, environment, path } });
const names = (response: { body: { folders: { name: string }[] } }) => response.body.folders.map((folder) => folder.name);

describe('create folder (POST /api/v1/folders)', () => {
  test('creates missing parents and answers the seed shape', async () => {
    const response = await createFolder({ name: 'c', path: '/a/b' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      folder: {
        id: expect.any(String),
        name: 'c',
        version: 1,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        envId: expect.any(String),
        parentId: expect.any(String),
        isReserved: false,
      },
    });
    expect(names(await listFolders('/'))).toEqual(['a']);
    expect(names(await listFolders('/a'))).toEqual(['b']);
    expect(names(await listFolders('/a/b'))).toEqual(['c']);
  });

  test('defaults to the root and accepts paths without a leading slash or with a trailing one', async () => {
    expect((await createFolder({ name: 'top' })).status).toBe(200);
    expect((await createFolder({ name: 'd', path: 'a/b/' })).status).toBe(200);
    expect(names(await listFolders('/'))).toEqual(['a', 'top']);
    expect(names(await listFolders('a/b/'))).toEqual(['c', 'd']);
  });

  test('an existing folder is returned unchanged', async () => {
    const first = await createFolder({ name: 'same', path: '/a' });
    const before = await snapshotDatabase(app.database);
    const again = await createFolder({ name: 'same', path: '/a' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // Only the audit log grows (the reference records create-folder here too).
    const after = await snapshotDatabase(app.database);
    expect({ ...after, audit_logs: [] }).toEqual({ ...before, audit_logs: [] });
    expect(after.audit_logs).toHaveLength(before.audit_logs!.length + 1);
  });

  test('accepts the deprecated directory field', async () => {
    expect((await createFolder({ name: 'legacy', directory: '/a' })).status).toBe(200);
    expect(names(await listFolders('/a'))).toContain('legacy');
  });

  test.each([
    ['a name with a slash', { name: 'x/y' }, 400],
    ['a name with a space', { name: 'has space' }, 400],
    ['a path with an invalid segment', { name: 'ok', path: '/bad seg/x' }, 400],
    ['a path with a dot segment', { name: 'ok', path: '/../x' }, 400],
    ['a missing name', { name: undefined }, 422],
    ['a name of the wrong type', { name: 7 }, 422],
    ['an unknown environment', { name: 'ok', environment: 'nope' }, 404],
    ['an unknown project', { name: 'ok', workspaceId: '0b4a3c2d-3333-4333-8333-333333333333' }, 404],
    ['a non-UUID project id', { name: 'ok', workspaceId: 'project' }, 404],
  ])('%s %j → %i, database unchanged', async (_name, body, status) => {
    const before = await snapshotDatabase(app.database);
    const response = await createFolder(body);
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, error: expect.any(String), message: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('concurrent creation of the same nested folder yields one folder', async () => {
    const responses = await Promise.all(Array.from({ length: 8 }, () => createFolder({ name: 'race', path: '/p/q' })));
    expect(responses.map((response) => response.status)).toEqual(Array(8).fill(200));
    expect(new Set(responses.map((response) => response.body.folder.id)).size).toBe(1);
    expect(names(await listFolders('/p'))).toEqual(['q']);
  });

  test('records one change per folder created', async () => {
    const before = await app.database.db.selectFrom('changeLog').select('revision').execute();
    await createFolder({ name: 'z', path: '/x/y' });
    const after = await app.database.db
      .selectFrom('changeLog')
      .select(['secretPath', 'kind', 'environmentSlug'])
      .where('revision', '>', Math.max(0, ...before.map((row) => row.revision)))
      .orderBy('revision')
      .execute();
    expect(after).toEqual([
      { secretPath: '/x', kind: 'folder', environmentSlug: 'dev' },
      { secretPath: '/x/y', kind: 'folder', environmentSlug: 'dev' },
      { secretPath: '/x/y/z', kind: 'folder', environmentSlug: 'dev' },
    ]);
  });
});

describe('list, get, rename and delete folders', () => {
  test('listing a missing path is empty; an unknown environment is 404', async () => {
    expect(await listFolders('/does/not/exist')).toMatchObject({ status: 200, body: { folders: [] } });
    expect((await listFolders('/', 'nope')).status).toBe(404);
  });

  test('get by id returns the path and environment', async () => {
    const created = await createFolder({ name: 'leaf', path: '/g/h' });
    const response = await app.request('GET', `/api/v1/folders/${created.body.folder.id}`, { token });
    expect(response.status).toBe(200);
    expect(response.body.folder).toMatchObject({
      id: created.body.folder.id,
      name: 'leaf',
      path: '/g/h/leaf',
      projectId,
      environment: { envSlug: 'dev', envName: 'Development', envId: created.body.folder.envId },
    });
    expect((await app.request('GET', '/api/v1/folders/ab7e1c2d-4444-4444-8444-444444444444', { token })).status).toBe(404);
  });

  test('rename by id and by name', async () => {
    const created = await createFolder({ name: 'old', path: '/r' });
    const byId = await app.request('PATCH', `/api/v1/folders/${created.body.folder.id}`, {
      token,
      body: { workspaceId: projectId, environment: 'dev', path: '/r', name: 'new' },
    });
    expect(byId.status).toBe(200);
    expect(byId.body.folder).toMatchObject({ id: created.body.folder.id, name: 'new' });
    const byName = await app.request('PATCH', '/api/v1/folders/new', {
      token,
      body: { workspaceId: projectId, environment: 'dev', path: '/r', name: 'newer' },
    });
    expect(byName.status).toBe(200);
    expect(names(await listFolders('/r'))).toEqual(['newer']);
  });

  test.each([
    ['a name clash', 'sibling', { name: 'taken' }, 400],
    ['an invalid name', 'sibling', { name: 'bad name' }, 400],
    ['an unknown folder', 'ghost', { name: 'x' }, 404],
    ['a wrong parent path', 'sibling', { name: 'x', path: '/elsewhere' }, 404],
  ])('rename with %s (%s, %j) → %i, database unchanged', async (_name, folder, body, status) => {
    await createFolder({ name: 'sibling', path: '/s' });
    await createFolder({ name: 'taken', path: '/s' });
    const before = await snapshotDatabase(app.database);
    const response = await app.request('PATCH', `/api/v1/folders/${folder}`, {
      token,
      body: { workspaceId: projectId, environment: 'dev', path: '/s', ...body },
    });
    expect(response.status).toBe(status);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('delete removes the folder and everything below it', async () => {
    await createFolder({ name: 'deep', path: '/del/me' });
    const response = await app.request('DELETE', '/api/v1/folders/me', { token, body: { workspaceId: projectId, environment: 'dev', path: '/del' } });
    expect(response.status).toBe(200);
    expect(response.body.folder.name).toBe('me');
    expect(names(await listFolders('/del'))).toEqual([]);
    expect((await listFolders('/del/me')).body.folders).toEqual([]);
    const again = await app.request('DELETE', '/api/v1/folders/me', { token, body: { workspaceId: projectId, environment: 'dev', path: '/del' } });
    expect(again.status).toBe(404);
  });
});
