import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let token: string;
let projectId: string;
const envIds: Record<string, string> = {};

beforeAll(async () => {
  app = await startTestApp();
  ({ token } = await bootstrap(app));
  projectId = (await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Imports', slug: 'imports-project' } })).body.project.id;
  const environments = await app.database.db.selectFrom('projectEnvironments').select(['id', 'slug']).where('projectId', '=', projectId).execute();
  for (const environment of environments) envIds[environment.slug] = environment.id;
});
afterAll(async () => app?.close());

async function makeFolder(path: string, environment = 'dev'): Promise<string> {
  const segments = path.split('/').filter(Boolean);
  const response = await app.request('POST', '/api/v1/folders', {
    token,
    body: { workspaceId: projectId, environment, name: segments.at(-1), path: `/${segments.slice(0, -1).join('/')}` },
  });
  expect(response.status).toBe(200);
  return response.body.folder.id;
}

const createImport = (body: Record<string, unknown>) =>
  app.request('POST', '/api/v1/secret-imports', { token, body: { workspaceId: projectId, environment: 'dev', ...body } });
const importInto = (destination: string, source: string) => {
  const [environment, path] = destination.split(':');
  const [sourceEnvironment, sourcePath] = source.split(':');
  return createImport({ environment, path, import: { environment: sourceEnvironment, path: sourcePath } });
};
const updateImport = (id: string, body: Record<string, unknown>) =>
  app.request('PATCH', `/api/v1/secret-imports/${id}`, { token, body: { workspaceId: projectId, environment: 'dev', ...body } });
const deleteImport = (id: string, body: Record<string, unknown>) =>
  app.request('DELETE', `/api/v1/secret-imports/${id}`, { token, body: { workspaceId: projectId, environment: 'dev', ...body } });
const listImports = (path?: string, environment = 'dev') =>
  app.request('GET', '/api/v1/secret-imports', { token, query: { workspaceId: projectId, environment, ...(path === undefined ? {} : { path }) } });
const order = async (path: string) =>
  (await listImports(path)).body.secretImports.map((item: { importPath: string; position: number }) => `${item.position}:${item.importPath}`);

async function auditMetadata(eventType: string): Promise<Record<string, unknown>[]> {
  const rows = await app.database.db.selectFrom('auditLogs').select('eventMetadata').where('eventType', '=', eventType).execute();
  return rows.map((row) => row.eventMetadata as Record<string, unknown>);
}

async function expectUnchanged(call: () => Promise<{ status: number; body: any }>, status: number) {
  const before = await snapshotDatabase(app.database);
  const response = await call();
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({ statusCode: status, error: expect.any(String), message: expect.any(String) });
  expect(await snapshotDatabase(app.database)).toEqual(before);
  return response;
}

describe('create secret import (POST /api/v1/secret-imports)', () => {
  test('imports into the root by default, in the seed shape; the source folder need not exist', async () => {
    const root = await app.database.db.selectFrom('secretFolders').select('id').where('envId', '=', envIds.dev!).where('parentId', 'is', null).executeTakeFirstOrThrow();
    const response = await createImport({ import: { environment: 'staging', path: 'not/yet/' } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      message: 'Successfully created secret import',
      secretImport: {
        id: expect.any(String),
        version: 1,
        importPath: '/not/yet',
        importEnv: { name: 'Staging', slug: 'staging', id: envIds.staging },
        position: 1,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        folderId: root.id,
        isReplication: false,
        isReplicationSuccess: null,
        replicationStatus: null,
        lastReplicated: null,
        isReserved: false,
      },
    });
    expect((await createImport({ path: '/', import: { environment: 'prod', path: '/' }, isReplication: false })).body.secretImport.position).toBe(2);
    expect(await order('/')).toEqual(['1:/not/yet', '2:/']);
  });

  test('concurrent creates get distinct positions', async () => {
    await makeFolder('/concurrent');
    const responses = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => importInto('dev:/concurrent', `staging:/s${n}`)));
    expect(responses.map((response) => response.status)).toEqual(Array(6).fill(200));
    expect(responses.map((response) => response.body.secretImport.position).sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  test('records the audit event and a change for the destination', async () => {
    const folderId = await makeFolder('/audited/in');
    const response = await importInto('dev:/audited/in/', 'prod:/from/');
    expect(response.status).toBe(200);
    expect(await auditMetadata('create-secret-import')).toContainEqual({
      secretImportId: response.body.secretImport.id,
      folderId,
      importFromEnvironment: 'prod',
      importFromSecretPath: '/from',
      importToEnvironment: 'dev',
      importToSecretPath: '/audited/in',
    });
    const last = await app.database.db.selectFrom('changeLog').selectAll().orderBy('revision', 'desc').executeTakeFirstOrThrow();
    expect(last).toMatchObject({ projectId, environmentId: envIds.dev, environmentSlug: 'dev', secretPath: '/audited/in', kind: 'import' });
  });
});

describe('create errors leave the database unchanged', () => {
  beforeAll(async () => {
    await makeFolder('/err');
    expect((await importInto('dev:/err', 'staging:/dup')).status).toBe(200);
  });
  const source = { environment: 'staging', path: '/elsewhere' };

  test.each([
    ['an unknown project', { workspaceId: '0b4a3c2d-3333-4333-8333-333333333333', path: '/err', import: source }, 404],
    ['a non-UUID project id', { workspaceId: 'project', path: '/err', import: source }, 404],
    ['an unknown environment', { environment: 'nope', path: '/err', import: source }, 404],
    ['a missing destination folder', { path: '/err/missing', import: source }, 404],
    ['an unknown source environment', { path: '/err', import: { environment: 'nope', path: '/' } }, 404],
    ['an invalid destination path segment', { path: '/err/bad seg', import: source }, 400],
    ['an invalid source path segment', { path: '/err', import: { environment: 'staging', path: '/../x' } }, 400],
    ['replication', { path: '/err', import: source, isReplication: true }, 400],
    ['a duplicate source', { path: '/err', import: { environment: 'staging', path: 'dup/' } }, 400],
    ['a self import', { path: '/err', import: { environment: 'dev', path: 'err/' } }, 400],
    ['a missing import', { path: '/err' }, 422],
    ['a missing source path', { path: '/err', import: { environment: 'staging' } }, 422],
    ['a source path of the wrong type', { path: '/err', import: { environment: 'staging', path: 5 } }, 422],
    ['a missing workspaceId', { workspaceId: undefined, path: '/err', import: source }, 422],
    ['isReplication of the wrong type', { path: '/err', import: source, isReplication: 'no' }, 422],
  ])('%s → %i', async (_name, body, status) => {
    await expectUnchanged(() => createImport(body), status);
  });

  test('replication is refused with a clear message', async () => {
    const response = await createImport({ path: '/err', import: source, isReplication: true });
    expect(response.body).toMatchObject({ statusCode: 400, message: 'Secret replication is not supported' });
  });
});

describe('cycles', () => {
  test('a 2-cycle is rejected', async () => {
    await makeFolder('/cyc2-a');
    await makeFolder('/cyc2-b');
    expect((await importInto('dev:/cyc2-a', 'dev:/cyc2-b')).status).toBe(200);
    const response = await expectUnchanged(() => importInto('dev:/cyc2-b', 'dev:/cyc2-a'), 400);
    expect(response.body.message).toBe('Cyclic import not allowed: dev:/cyc2-b → dev:/cyc2-a → dev:/cyc2-b');
  });

  test('a 3-cycle across environments is rejected', async () => {
    await makeFolder('/c3', 'dev');
    await makeFolder('/c3', 'staging');
    await makeFolder('/c3', 'prod');
    expect((await importInto('dev:/c3', 'staging:/c3')).status).toBe(200);
    expect((await importInto('staging:/c3', 'prod:/c3')).status).toBe(200);
    const response = await expectUnchanged(() => importInto('prod:/c3', 'dev:/c3'), 400);
    expect(response.body.message).toMatch(/^Cyclic import not allowed: prod:\/c3 → dev:\/c3 → staging:\/c3 → prod:\/c3$/);
  });

  test('a cycle made by changing a source is rejected', async () => {
    await makeFolder('/cp-a');
    await makeFolder('/cp-b');
    expect((await importInto('dev:/cp-a', 'dev:/cp-b')).status).toBe(200);
    const other = await importInto('dev:/cp-b', 'prod:/cp');
    await expectUnchanged(() => updateImport(other.body.secretImport.id, { path: '/cp-b', import: { environment: 'dev', path: '/cp-a' } }), 400);
  });

  test('a diamond is not a cycle', async () => {
    for (const name of ['/dm-a', '/dm-b', '/dm-c']) await makeFolder(name);
    const results = await Promise.all([
      importInto('dev:/dm-a', 'dev:/dm-b'),
      importInto('dev:/dm-a', 'dev:/dm-c'),
      importInto('dev:/dm-b', 'dev:/dm-d'),
      importInto('dev:/dm-c', 'dev:/dm-d'),
    ]);
    expect(results.map((result) => result.status)).toEqual([200, 200, 200, 200]);
  });
});

describe('list and get', () => {
  test('list orders by position, defaults to the root, and audits', async () => {
    const response = await listImports();
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ message: 'Successfully fetched secret imports', secretImports: expect.any(Array) });
    expect(response.body.secretImports.map((item: { position: number }) => item.position)).toEqual([1, 2]);
    const folderId = response.body.secretImports[0].folderId;
    expect(await auditMetadata('get-secret-imports')).toContainEqual({ environment: 'dev', folderId, numberOfImports: 2 });
  });

  test('get by id returns the import and audits', async () => {
    const [first] = (await listImports('/')).body.secretImports;
    const response = await app.request('GET', `/api/v1/secret-imports/${first.id}`, { token });
    expect(response).toMatchObject({ status: 200, body: { secretImport: first } });
    expect(await auditMetadata('get-secret-import')).toContainEqual({ secretImportId: first.id, folderId: first.folderId });
  });

  test.each([
    ['a missing folder', () => listImports('/nowhere'), 404],
    ['an unknown environment', () => listImports('/', 'nope'), 404],
    ['an invalid path', () => listImports('/bad seg'), 400],
    ['a missing environment', () => app.request('GET', '/api/v1/secret-imports', { token, query: { workspaceId: projectId } }), 422],
    ['an unknown import id', () => app.request('GET', '/api/v1/secret-imports/0b4a3c2d-3333-4333-8333-333333333333', { token }), 404],
    ['a non-UUID import id', () => app.request('GET', '/api/v1/secret-imports/nope', { token }), 404],
    ['no token', () => app.request('GET', '/api/v1/secret-imports', { query: { workspaceId: projectId, environment: 'dev' } }), 401],
  ])('%s → %i', async (_name, call, status) => {
    expect((await call()).status).toBe(status);
  });
});

describe('update secret import (PATCH /api/v1/secret-imports/:id)', () => {
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    await makeFolder('/order');
    for (const name of ['o1', 'o2', 'o3', 'o4']) ids[name] = (await importInto('dev:/order', `staging:/${name}`)).body.secretImport.id;
  });
  const move = (name: string, position: number) => updateImport(ids[name]!, { path: '/order', import: { position } });

  test('moves down and up, shifting the imports in between; clamps beyond the last', async () => {
    const response = await move('o1', 3);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ message: 'Successfully updated secret import', secretImport: { id: ids.o1, position: 3 } });
    expect(await order('/order')).toEqual(['1:/o2', '2:/o3', '3:/o1', '4:/o4']);
    expect((await move('o4', 1)).status).toBe(200);
    expect(await order('/order')).toEqual(['1:/o4', '2:/o2', '3:/o3', '4:/o1']);
    expect((await move('o2', 99)).body.secretImport.position).toBe(4);
    expect(await order('/order')).toEqual(['1:/o4', '2:/o3', '3:/o1', '4:/o2']);
  });

  test('changes the source, audits and records a change', async () => {
    const response = await updateImport(ids.o3!, { path: 'order/', import: { environment: 'prod', path: 'moved/' } });
    expect(response.status).toBe(200);
    expect(response.body.secretImport).toMatchObject({ id: ids.o3, importPath: '/moved', importEnv: { slug: 'prod', name: 'Production', id: envIds.prod }, position: 2 });
    expect(await auditMetadata('update-secret-import')).toContainEqual({
      secretImportId: ids.o3,
      folderId: response.body.secretImport.folderId,
      position: 2,
      importToEnvironment: 'dev',
      importToSecretPath: '/order',
      importFromEnvironment: 'prod',
      importFromSecretPath: '/moved',
    });
    const last = await app.database.db.selectFrom('changeLog').selectAll().orderBy('revision', 'desc').executeTakeFirstOrThrow();
    expect(last).toMatchObject({ environmentSlug: 'dev', secretPath: '/order', kind: 'import' });
  });

  test('an empty import object changes nothing', async () => {
    const before = await snapshotDatabase(app.database);
    const current = (await app.request('GET', `/api/v1/secret-imports/${ids.o1}`, { token })).body.secretImport;
    const response = await updateImport(ids.o1!, { path: '/order', import: {} });
    expect(response).toMatchObject({ status: 200, body: { secretImport: current } });
    const after = await snapshotDatabase(app.database);
    expect({ ...after, audit_logs: [] }).toEqual({ ...before, audit_logs: [] });
  });

  test('defaults the path to the root', async () => {
    const [first] = (await listImports()).body.secretImports;
    expect((await updateImport(first.id, { import: { position: 1 } })).status).toBe(200);
  });

  test.each([
    ['an unknown import id', '0b4a3c2d-3333-4333-8333-333333333333', { path: '/order', import: { position: 1 } }, 404],
    ['a non-UUID import id', 'nope', { path: '/order', import: { position: 1 } }, 404],
    ['an import of another folder', 'o1', { path: '/', import: { position: 1 } }, 404],
    ['a missing destination folder', 'o1', { path: '/gone', import: { position: 1 } }, 404],
    ['an unknown project', 'o1', { workspaceId: '0b4a3c2d-3333-4333-8333-333333333333', path: '/order', import: {} }, 404],
    ['an unknown source environment', 'o1', { path: '/order', import: { environment: 'nope' } }, 404],
    ['a duplicate source', 'o1', { path: '/order', import: { environment: 'staging', path: '/o2' } }, 400],
    ['a self import', 'o1', { path: '/order', import: { environment: 'dev', path: '/order' } }, 400],
    ['an invalid source path', 'o1', { path: '/order', import: { path: '/a b' } }, 400],
    ['position 0', 'o1', { path: '/order', import: { position: 0 } }, 422],
    ['a position of the wrong type', 'o1', { path: '/order', import: { position: '2' } }, 422],
    ['a missing import object', 'o1', { path: '/order' }, 422],
  ])('%s → %i, database unchanged', async (_name, id, body, status) => {
    await expectUnchanged(() => updateImport(ids[id] ?? id, body), status);
  });
});

describe('delete secret import (DELETE /api/v1/secret-imports/:id)', () => {
  test('deletes, re-packs the positions after it, audits and records a change', async () => {
    const folderId = await makeFolder('/del');
    const created = [];
    for (const name of ['d1', 'd2', 'd3']) created.push((await importInto('dev:/del', `prod:/${name}`)).body.secretImport);
    const middle: { id: string } = created[1];
    const response = await deleteImport(middle.id, { path: '/del' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ message: 'Successfully deleted secret import', secretImport: middle });
    expect(await order('/del')).toEqual(['1:/d1', '2:/d3']);
    expect(await auditMetadata('delete-secret-import')).toContainEqual({
      secretImportId: middle.id,
      folderId,
      importFromEnvironment: 'prod',
      importFromSecretPath: '/d2',
      importToEnvironment: 'dev',
      importToSecretPath: '/del',
    });
    const last = await app.database.db.selectFrom('changeLog').selectAll().orderBy('revision', 'desc').executeTakeFirstOrThrow();
    expect(last).toMatchObject({ environmentSlug: 'dev', secretPath: '/del', kind: 'import' });
    await expectUnchanged(() => deleteImport(middle.id, { path: '/del' }), 404);
  });

  test('defaults the path to the root', async () => {
    const [first] = (await listImports()).body.secretImports;
    expect((await deleteImport(first.id, {})).status).toBe(200);
    expect((await listImports()).body.secretImports.map((item: { position: number }) => item.position)).toEqual([1]);
  });

  test.each([
    ['an unknown import id', '0b4a3c2d-3333-4333-8333-333333333333', {}, 404],
    ['a non-UUID import id', 'nope', {}, 404],
    ['an import of another folder', 'root', { path: '/del' }, 404],
    ['an unknown environment', 'root', { environment: 'nope' }, 404],
    ['a missing environment', 'root', { environment: undefined }, 422],
  ])('%s → %i, database unchanged', async (_name, id, body, status) => {
    const importId = id === 'root' ? (await listImports()).body.secretImports[0].id : id;
    await expectUnchanged(() => deleteImport(importId, body), status);
  });
});
