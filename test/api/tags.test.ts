import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { requireTagsByIds, requireTagsBySlugs, setSecretTags, tagsOfSecrets } from '../../src/tags/tag-service.ts';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let token: string;
let identityId: string;
let projectId: string;
let otherProjectId: string;

const UNKNOWN_ID = '9d0f7c3e-1111-4111-8111-111111111111';

beforeAll(async () => {
  app = await startTestApp();
  ({ token, identityId } = await bootstrap(app));
  const createProject = async (projectName: string) => (await app.request('POST', '/api/v2/workspace', { token, body: { projectName } })).body.project.id as string;
  projectId = await createProject('Tags');
  otherProjectId = await createProject('Other tags');
});
afterAll(async () => app?.close());

const tagsUrl = (project = projectId) => `/api/v1/workspace/${project}/tags`;
const createTag = (body: unknown, project = projectId) => app.request('POST', tagsUrl(project), { token, body });

async function tagId(slug: string, project = projectId): Promise<string> {
  const tag = await app.database.db.selectFrom('secretTags').select('id').where('projectId', '=', project).where('slug', '=', slug).executeTakeFirstOrThrow();
  return tag.id;
}

async function lastAudit(type: string) {
  return app.database.db
    .selectFrom('auditLogs')
    .select(['eventType', 'eventMetadata', 'projectId', 'actor'])
    .where('eventType', '=', type)
    .orderBy('createdAt', 'desc')
    .executeTakeFirst();
}

async function expectUnchanged(send: () => Promise<{ status: number; body: any }>, status: number) {
  const before = await snapshotDatabase(app.database);
  const response = await send();
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({ statusCode: status, reqId: expect.any(String) });
  expect(await snapshotDatabase(app.database)).toEqual(before);
  return response;
}

describe('create tag', () => {
  test('trims and lower-cases the slug, ignores name, and answers in the reference shape', async () => {
    const response = await createTag({ slug: '  Backend ', color: '#ff0000', name: 'Something else' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      workspaceTag: {
        id: expect.any(String),
        slug: 'backend',
        name: 'backend',
        color: '#ff0000',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        createdBy: identityId,
        projectId,
        createdByActorType: 'identity',
      },
    });
    expect(await lastAudit('create-tag')).toEqual({
      eventType: 'create-tag',
      eventMetadata: { tagId: response.body.workspaceTag.id, slug: 'backend', color: '#ff0000' },
      projectId,
      actor: 'identity',
    });
  });

  test('the same slug is free in another project', async () => {
    expect((await createTag({ slug: 'backend', color: 'blue' }, otherProjectId)).status).toBe(200);
  });

  test.each([
    ['slug with spaces', 422, { slug: 'has space', color: 'red' }],
    ['slug with a trailing hyphen', 422, { slug: 'trailing-', color: 'red' }],
    ['empty slug', 422, { slug: '', color: 'red' }],
    ['slug of 65 characters', 422, { slug: 'a'.repeat(65), color: 'red' }],
    ['missing slug', 422, { color: 'red' }],
    ['missing color', 422, { slug: 'frontend' }],
    ['color over 32 characters', 422, { slug: 'frontend', color: 'c'.repeat(33) }],
    ['duplicate slug', 400, { slug: 'backend', color: 'red' }],
    ['duplicate slug after lower-casing', 400, { slug: 'BACKEND', color: 'red' }],
  ])('%s → %i, database unchanged', async (_name, status, body) => {
    const response = await expectUnchanged(() => createTag(body), status);
    if (status === 400) expect(response.body.message).toBe("Tag with slug 'backend' already exists");
  });

  test('a bad slug is named in the message', async () => {
    const response = await createTag({ slug: 'not valid', color: 'red' });
    expect(response.body).toMatchObject({ error: 'ValidationFailure', message: expect.stringContaining('slug must be lowercase letters') });
  });

  test('a slug of exactly 64 characters is accepted', async () => {
    const response = await createTag({ slug: 'b'.repeat(64), color: 'red' });
    expect(response.status).toBe(200);
    await app.request('DELETE', `${tagsUrl()}/${response.body.workspaceTag.id}`, { token });
  });

  test('unknown or non-UUID project → 404, database unchanged', async () => {
    for (const id of [UNKNOWN_ID, 'abc']) await expectUnchanged(() => createTag({ slug: 'x', color: 'red' }, id), 404);
  });
});

describe('list and get tags', () => {
  test('lists the project tags in byte order of slug', async () => {
    for (const slug of ['alphabet', 'alpha-beta', 'alpha']) expect((await createTag({ slug, color: 'green' })).status).toBe(200);
    const response = await app.request('GET', tagsUrl(), { token });
    expect(response.status).toBe(200);
    expect(response.body.workspaceTags.map((tag: { slug: string }) => tag.slug)).toEqual(['alpha', 'alpha-beta', 'alphabet', 'backend']);
    expect(response.body.workspaceTags.every((tag: { projectId: string }) => tag.projectId === projectId)).toBe(true);
  });

  test('by id and by slug give the same tag', async () => {
    const id = await tagId('backend');
    const byId = await app.request('GET', `${tagsUrl()}/${id}`, { token });
    expect(byId.status).toBe(200);
    expect(byId.body.workspaceTag).toMatchObject({ id, slug: 'backend', name: 'backend', color: '#ff0000', projectId });
    const bySlug = await app.request('GET', `${tagsUrl()}/slug/backend`, { token });
    expect(bySlug.body).toEqual(byId.body);
  });

  test('unknown, non-UUID and foreign tags → 404', async () => {
    const foreign = await tagId('backend', otherProjectId);
    for (const url of [
      `${tagsUrl()}/${UNKNOWN_ID}`,
      `${tagsUrl()}/not-a-uuid`,
      `${tagsUrl()}/${foreign}`,
      `${tagsUrl()}/slug/missing`,
      `${tagsUrl(UNKNOWN_ID)}`,
      `${tagsUrl('abc')}/slug/backend`,
    ]) {
      const response = await app.request('GET', url, { token });
      expect(response.status, url).toBe(404);
    }
    expect((await app.request('GET', `${tagsUrl(otherProjectId)}/${foreign}`, { token })).status).toBe(200);
  });
});

describe('update tag', () => {
  const update = async (slug: string, body: unknown) => app.request('PATCH', `${tagsUrl()}/${await tagId(slug)}`, { token, body });

  test('changes slug and color, and audits old and new values', async () => {
    const id = await tagId('alpha');
    const before = (await app.request('GET', `${tagsUrl()}/${id}`, { token })).body.workspaceTag;
    const response = await update('alpha', { slug: 'Gamma', color: 'purple' });
    expect(response.status).toBe(200);
    expect(response.body.workspaceTag).toEqual({ ...before, slug: 'gamma', name: 'gamma', color: 'purple', updatedAt: expect.any(String) });
    expect(await lastAudit('update-tag')).toMatchObject({
      eventMetadata: { tagId: id, oldSlug: 'alpha', newSlug: 'gamma', oldColor: 'green', newColor: 'purple' },
      projectId,
    });
  });

  test('colour alone, and the current slug again, are accepted', async () => {
    const response = await update('gamma', { slug: 'gamma', color: 'orange' });
    expect(response.status).toBe(200);
    expect(response.body.workspaceTag).toMatchObject({ slug: 'gamma', color: 'orange' });
    expect((await update('gamma', { color: 'teal' })).body.workspaceTag).toMatchObject({ slug: 'gamma', color: 'teal' });
  });

  test('an empty body → 200 with the tag unchanged', async () => {
    const current = (await app.request('GET', `${tagsUrl()}/slug/gamma`, { token })).body;
    const before = await snapshotDatabase(app.database);
    const response = await update('gamma', {});
    expect(response.status).toBe(200);
    expect(response.body).toEqual(current);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test.each([
    ['slug of another tag', 400, { slug: 'backend' }],
    ['invalid slug', 422, { slug: 'Not Valid' }],
    ['slug with a trailing hyphen', 422, { slug: 'gamma-' }],
    ['color of the wrong type', 422, { color: 7 }],
  ])('%s → %i, database unchanged', async (_name, status, body) => {
    const response = await expectUnchanged(() => update('gamma', body), status);
    if (status === 400) expect(response.body.message).toBe("Tag with slug 'backend' already exists");
  });

  test('unknown, non-UUID or foreign tag, or unknown project → 404, database unchanged', async () => {
    const foreign = await tagId('backend', otherProjectId);
    const own = await tagId('gamma');
    for (const url of [`${tagsUrl()}/${UNKNOWN_ID}`, `${tagsUrl()}/xyz`, `${tagsUrl()}/${foreign}`, `${tagsUrl(UNKNOWN_ID)}/${own}`]) {
      await expectUnchanged(() => app.request('PATCH', url, { token, body: { color: 'hijack' } }), 404);
    }
  });
});

async function insertSecret(key: string): Promise<string> {
  const root = await app.database.db
    .selectFrom('secretFolders')
    .innerJoin('projectEnvironments', 'projectEnvironments.id', 'secretFolders.envId')
    .select('secretFolders.id')
    .where('projectEnvironments.projectId', '=', projectId)
    .where('projectEnvironments.slug', '=', 'dev')
    .where('secretFolders.parentId', 'is', null)
    .executeTakeFirstOrThrow();
  const id = randomUUID();
  await app.database.db
    .insertInto('secrets')
    .values({ id, folderId: root.id, key, type: 'shared', encryptedValue: Buffer.from('x') })
    .execute();
  return id;
}

describe('tag helpers for the secrets service', () => {
  const notFound = { statusCode: 404, message: 'One or more tags not found' };

  test('requireTagsByIds dedupes and returns the tags in slug order', async () => {
    const [backend, gamma] = [await tagId('backend'), await tagId('gamma')];
    const tags = await requireTagsByIds(app.database.db, projectId, [gamma, backend, gamma]);
    expect(tags.map((tag) => tag.slug)).toEqual(['backend', 'gamma']);
    expect(await requireTagsByIds(app.database.db, projectId, [])).toEqual([]);
  });

  test('requireTagsByIds → 404 for unknown, non-UUID or foreign ids', async () => {
    const [backend, foreign] = [await tagId('backend'), await tagId('backend', otherProjectId)];
    for (const ids of [[backend, UNKNOWN_ID], [backend, 'nope'], [foreign]]) {
      await expect(requireTagsByIds(app.database.db, projectId, ids)).rejects.toMatchObject(notFound);
    }
  });

  test('requireTagsBySlugs finds by slug and → 404 for an unknown one', async () => {
    const tags = await requireTagsBySlugs(app.database.db, projectId, ['gamma', 'backend', 'backend']);
    expect(tags.map((tag) => tag.slug)).toEqual(['backend', 'gamma']);
    await expect(requireTagsBySlugs(app.database.db, projectId, ['backend', 'missing'])).rejects.toMatchObject(notFound);
    await expect(requireTagsBySlugs(app.database.db, otherProjectId, ['gamma'])).rejects.toMatchObject(notFound);
  });

  test('setSecretTags replaces the link set; tagsOfSecrets lists every secret', async () => {
    const { db } = app.database;
    const [tagged, untagged] = [await insertSecret('TAGGED'), await insertSecret('UNTAGGED')];
    const [backend, gamma, alphabet] = [await tagId('backend'), await tagId('gamma'), await tagId('alphabet')];
    await setSecretTags(db, tagged, [gamma, backend, gamma]);
    const summary = (slug: string, color: string) => ({ id: expect.any(String), slug, name: slug, color });
    expect(await tagsOfSecrets(db, [tagged, untagged])).toEqual(
      new Map([
        [tagged, [summary('backend', '#ff0000'), summary('gamma', 'teal')]],
        [untagged, []],
      ]),
    );
    await setSecretTags(db, tagged, [alphabet]);
    expect((await tagsOfSecrets(db, [tagged])).get(tagged)).toEqual([summary('alphabet', 'green')]);
    await setSecretTags(db, tagged, []);
    expect((await tagsOfSecrets(db, [tagged])).get(tagged)).toEqual([]);
    expect(await tagsOfSecrets(db, [])).toEqual(new Map());
  });
});

describe('delete tag', () => {
  test('returns the tag, removes its links to secrets and audits', async () => {
    const { db } = app.database;
    const secret = await insertSecret('TO_UNTAG');
    const [backend, gamma] = [await tagId('backend'), await tagId('gamma')];
    await setSecretTags(db, secret, [backend, gamma]);
    const response = await app.request('DELETE', `${tagsUrl()}/${gamma}`, { token });
    expect(response.status).toBe(200);
    expect(response.body.workspaceTag).toMatchObject({ id: gamma, slug: 'gamma', projectId });
    expect((await tagsOfSecrets(db, [secret])).get(secret)?.map((tag) => tag.slug)).toEqual(['backend']);
    expect(await lastAudit('delete-tag')).toMatchObject({ eventMetadata: { tagId: gamma, slug: 'gamma' }, projectId });
    expect((await app.request('GET', `${tagsUrl()}/${gamma}`, { token })).status).toBe(404);
  });

  test('unknown, non-UUID or foreign tag, or unknown project → 404, database unchanged', async () => {
    const foreign = await tagId('backend', otherProjectId);
    const own = await tagId('backend');
    for (const url of [`${tagsUrl()}/${UNKNOWN_ID}`, `${tagsUrl()}/xyz`, `${tagsUrl()}/${foreign}`, `${tagsUrl('abc')}/${own}`]) {
      await expectUnchanged(() => app.request('DELETE', url, { token }), 404);
    }
  });
});
