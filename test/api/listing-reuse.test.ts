import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { currentBackend, startReplica, startTestApp, type TestApp } from '../support/test-app.ts';

// Machine callers' listings are reused while the project's change-feed revision
// stays the same: every change that alters a listing must show in the next one.

let app: TestApp;
let fx: Awaited<ReturnType<typeof secretsFixture>>;

type Listed = { secretKey: string; secretValue: string; secretPath: string; environment: string; secretComment: string; tags: { slug: string; color: string }[] };

beforeAll(async () => {
  app = await startTestApp();
  fx = await secretsFixture(app, 'reuse-project');
  await fx.createFolder('/', 'svc');
  await fx.createTag('pci');
});
afterAll(async () => app?.close());

async function listed(query: Record<string, string> = {}, target: TestApp = app): Promise<Listed[]> {
  const response = await target.request('GET', '/api/v3/secrets/raw', { token: fx.token, query: { workspaceId: fx.projectId, environment: 'dev', ...query } });
  expect(response.status).toBe(200);
  return response.body.secrets;
}

const valueOf = (secrets: Listed[], key: string) => secrets.find((secret) => secret.secretKey === key)?.secretValue;

describe('a listing shows every change made since the previous one', () => {
  let key: string;
  let counter = 0;
  beforeEach(async () => {
    key = `KEY_${++counter}`;
    expect((await fx.createSecret(key, { secretValue: 'first-value' })).status).toBe(200);
    await listed();
    await listed();
  });

  test('value, comment and key updates', async () => {
    await fx.updateSecret(key, { secretValue: 'second-value', secretComment: 'why' });
    const after = await listed();
    expect(valueOf(after, key)).toBe('second-value');
    expect(after.find((secret) => secret.secretKey === key)?.secretComment).toBe('why');
    await fx.updateSecret(key, { newSecretName: `${key}_RENAMED` });
    expect(valueOf(await listed(), `${key}_RENAMED`)).toBe('second-value');
  });

  test('create and delete', async () => {
    await fx.createSecret(`${key}_NEW`, { secretValue: 'new-value' });
    expect(valueOf(await listed(), `${key}_NEW`)).toBe('new-value');
    await fx.deleteSecret(key);
    expect(valueOf(await listed(), key)).toBeUndefined();
  });

  test('batch update', async () => {
    const response = await app.request('PATCH', '/api/v3/secrets/batch/raw', {
      token: fx.token,
      body: { workspaceId: fx.projectId, environment: 'dev', secretPath: '/', secrets: [{ secretKey: key, secretValue: 'batch-value' }] },
    });
    expect(response.status).toBe(200);
    expect(valueOf(await listed(), key)).toBe('batch-value');
  });

  test('tags attached, renamed, recoloured, detached and deleted', async () => {
    const tagBody = { projectSlug: fx.projectSlug, environment: 'dev', tagSlugs: ['pci'] };
    expect((await app.request('POST', `/api/v3/secrets/tags/${key}`, { token: fx.token, body: tagBody })).status).toBe(200);
    const tagsOf = async () => (await listed()).find((secret) => secret.secretKey === key)!.tags.map((tag) => `${tag.slug}/${tag.color}`);
    expect(await tagsOf()).toEqual(['pci/#ff0000']);
    const tag = (await app.request('GET', `/api/v1/workspace/${fx.projectId}/tags/slug/pci`, { token: fx.token })).body.workspaceTag;
    expect(
      (await app.request('PATCH', `/api/v1/workspace/${fx.projectId}/tags/${tag.id}`, { token: fx.token, body: { slug: 'pci-dss', color: '#00ff00' } })).status,
    ).toBe(200);
    expect(await tagsOf()).toEqual(['pci-dss/#00ff00']);
    expect((await app.request('DELETE', `/api/v3/secrets/tags/${key}`, { token: fx.token, body: { ...tagBody, tagSlugs: ['pci-dss'] } })).status).toBe(200);
    expect(await tagsOf()).toEqual([]);
    expect((await app.request('POST', `/api/v3/secrets/tags/${key}`, { token: fx.token, body: { ...tagBody, tagSlugs: ['pci-dss'] } })).status).toBe(200);
    expect((await app.request('DELETE', `/api/v1/workspace/${fx.projectId}/tags/${tag.id}`, { token: fx.token })).status).toBe(200);
    expect(await tagsOf()).toEqual([]);
    await fx.createTag('pci');
  });

  test('a folder renamed: recursive listings show the new path', async () => {
    await fx.createSecret(`${key}_IN_FOLDER`, { secretPath: '/svc', secretValue: 'in-folder' });
    const before = await listed({ recursive: 'true' });
    const folderPath = before.find((secret) => secret.secretKey === `${key}_IN_FOLDER`)!.secretPath;
    const name = folderPath.slice(1);
    const folders = await app.request('GET', '/api/v1/folders', { token: fx.token, query: { workspaceId: fx.projectId, environment: 'dev', path: '/' } });
    const folder = folders.body.folders.find((candidate: { name: string }) => candidate.name === name);
    const renamed = `${name}-${counter}`;
    const response = await app.request('PATCH', `/api/v1/folders/${folder.id}`, {
      token: fx.token,
      body: { workspaceId: fx.projectId, environment: 'dev', path: '/', name: renamed },
    });
    expect(response.status).toBe(200);
    const after = await listed({ recursive: 'true' });
    expect(after.find((secret) => secret.secretKey === `${key}_IN_FOLDER`)!.secretPath).toBe(`/${renamed}`);
  });

  test('the environment renamed: the listing shows its new slug', async () => {
    const project = (await app.request('GET', `/api/v1/workspace/${fx.projectId}`, { token: fx.token })).body.workspace;
    const dev = project.environments.find((environment: { slug: string }) => environment.slug === 'dev');
    const rename = (slug: string) => app.request('PATCH', `/api/v1/workspace/${fx.projectId}/environments/${dev.id}`, { token: fx.token, body: { slug } });
    expect((await rename('development')).status).toBe(200);
    expect((await listed({ environment: 'development' })).every((secret) => secret.environment === 'development')).toBe(true);
    expect((await rename('dev')).status).toBe(200);
    expect((await listed()).every((secret) => secret.environment === 'dev')).toBe(true);
  });

  test('references are expanded on each request, not reused from an earlier expansion', async () => {
    await fx.createSecret(`${key}_REF`, { secretValue: `\${${key}}-suffix` });
    expect(valueOf(await listed({ expandSecretReferences: 'true' }), `${key}_REF`)).toBe('first-value-suffix');
    expect(valueOf(await listed(), `${key}_REF`)).toBe(`\${${key}}-suffix`);
    await fx.updateSecret(key, { secretValue: 'changed-value' });
    expect(valueOf(await listed({ expandSecretReferences: 'true' }), `${key}_REF`)).toBe('changed-value-suffix');
  });
});

// The embedded database belongs to one process: there is no other replica.
test.skipIf(currentBackend() === 'pglite')(
  'on PostgreSQL only (PGlite has no second replica): a change written through another replica shows in the next listing of this one at once',
  async () => {
    const replica = await startReplica(app);
    try {
      await fx.createSecret('SHARED_ACROSS', { secretValue: 'from-this-replica' });
      expect(valueOf(await listed(), 'SHARED_ACROSS')).toBe('from-this-replica');
      for (let round = 1; round <= 5; round++) {
        const value = `from-replica-${round}`;
        const response = await replica.request('PATCH', '/api/v3/secrets/raw/SHARED_ACROSS', {
          token: fx.token,
          body: { workspaceId: fx.projectId, environment: 'dev', secretValue: value },
        });
        expect(response.status).toBe(200);
        expect(valueOf(await listed(), 'SHARED_ACROSS')).toBe(value);
        expect(valueOf(await listed({}, replica), 'SHARED_ACROSS')).toBe(value);
      }
    } finally {
      await replica.close();
    }
  },
);

test('a repeated plain listing answers the same JSON, and each one is audited', async () => {
  await fx.createSecret('AUDITED_REUSE', { secretValue: 'audited-value' });
  const countReads = async () =>
    Number(
      (
        await app.database.db
          .selectFrom('auditLogs')
          .select((eb) => eb.fn.countAll().as('count'))
          .where('eventType', '=', 'get-secrets')
          .where('projectId', '=', fx.projectId)
          .executeTakeFirstOrThrow()
      ).count,
    );
  const before = await countReads();
  const query = { workspaceId: fx.projectId, environment: 'dev' };
  const responses = await Promise.all(
    Array.from({ length: 5 }, () => app.app.inject({ method: 'GET', url: '/api/v3/secrets/raw', query, headers: { authorization: `Bearer ${fx.token}` } })),
  );
  for (const response of responses) {
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toBe(responses[0]!.body);
  }
  expect(valueOf(JSON.parse(responses[0]!.body).secrets, 'AUDITED_REUSE')).toBe('audited-value');
  expect(await countReads()).toBe(before + 5);
});
