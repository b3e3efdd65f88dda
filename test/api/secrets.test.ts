import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let fx: Awaited<ReturnType<typeof secretsFixture>>;

beforeAll(async () => {
  app = await startTestApp();
  fx = await secretsFixture(app);
});
afterAll(async () => app?.close());

const rawShape = {
  id: expect.any(String),
  _id: expect.any(String),
  workspace: expect.any(String),
  environment: 'dev',
  version: expect.any(Number),
  type: 'shared',
  secretKey: expect.any(String),
  secretValue: expect.any(String),
  secretComment: expect.any(String),
  secretReminderNote: null,
  secretReminderRepeatDays: null,
  skipMultilineEncoding: false,
  createdAt: expect.any(String),
  updatedAt: expect.any(String),
  tags: [],
};

describe('create, get, update, delete', () => {
  test('create with defaults answers the seed shape', async () => {
    const response = await fx.createSecret('DATABASE_URL', { secretValue: 'postgres://db/1' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      secret: { ...rawShape, workspace: fx.projectId, version: 1, secretKey: 'DATABASE_URL', secretValue: 'postgres://db/1', secretComment: '' },
    });
    expect(response.body.secret._id).toBe(response.body.secret.id);
  });

  test('values are trimmed, keeping one trailing newline', async () => {
    expect((await fx.createSecret('PADDED', { secretValue: '  x  ' })).body.secret.secretValue).toBe('x');
    expect((await fx.createSecret('CERT', { secretValue: 'line1\nline2\n\n' })).body.secret.secretValue).toBe('line1\nline2\n');
  });

  test('get returns the current value; update increments the version; ?version=N returns that version', async () => {
    await fx.createSecret('API_KEY', { secretValue: 'one', secretComment: 'first' });
    const updated = await fx.updateSecret('API_KEY', { secretValue: 'two' });
    expect(updated.status).toBe(200);
    expect(updated.body.secret).toMatchObject({ version: 2, secretValue: 'two', secretComment: 'first' });
    await fx.updateSecret('API_KEY', { secretComment: 'third' });
    expect((await fx.getSecret('API_KEY')).body.secret).toMatchObject({ version: 3, secretValue: 'two', secretComment: 'third' });
    expect((await fx.getSecret('API_KEY', { version: '1' })).body.secret).toMatchObject({ version: 1, secretValue: 'one', secretComment: 'first' });
    expect((await fx.getSecret('API_KEY', { version: '2' })).body.secret).toMatchObject({ version: 2, secretValue: 'two' });
    expect((await fx.getSecret('API_KEY', { version: '9' })).status).toBe(404);
  });

  test('rename with newSecretName keeps history', async () => {
    await fx.createSecret('OLD_NAME', { secretValue: 'kept' });
    const renamed = await fx.updateSecret('OLD_NAME', { newSecretName: 'NEW_NAME' });
    expect(renamed.body.secret).toMatchObject({ secretKey: 'NEW_NAME', secretValue: 'kept', version: 2 });
    expect((await fx.getSecret('OLD_NAME')).status).toBe(404);
    expect((await fx.getSecret('NEW_NAME', { version: '1' })).body.secret).toMatchObject({ secretKey: 'OLD_NAME', secretValue: 'kept' });
  });

  test('delete (JSON body) answers the deleted secret and removes it', async () => {
    await fx.createSecret('TO_DELETE', { secretValue: 'bye' });
    const response = await fx.deleteSecret('TO_DELETE');
    expect(response.status).toBe(200);
    expect(response.body.secret).toMatchObject({ secretKey: 'TO_DELETE', secretValue: 'bye' });
    expect((await fx.getSecret('TO_DELETE')).status).toBe(404);
  });

  test('create in a nested folder, by path', async () => {
    await fx.createFolder('/', 'backend');
    const response = await fx.createSecret('NESTED', { secretPath: '/backend/', secretValue: 'deep' });
    expect(response.status).toBe(200);
    expect((await fx.getSecret('NESTED', { secretPath: '/backend' })).body.secret.secretValue).toBe('deep');
  });

  test('tags on create and update (tagIds)', async () => {
    const tag = (await fx.createTag('critical')).body.workspaceTag;
    const created = await fx.createSecret('TAGGED', { tagIds: [tag.id] });
    expect(created.body.secret.tags).toEqual([{ id: tag.id, slug: 'critical', name: 'critical', color: '#ff0000' }]);
    const cleared = await fx.updateSecret('TAGGED', { tagIds: [] });
    expect(cleared.body.secret.tags).toEqual([]);
    expect(cleared.body.secret.version).toBe(2);
  });
});

describe('error table: 4xx and the database unchanged', () => {
  const unknownId = '5e6f7a8b-9999-4999-8999-999999999999';

  test.each([
    ['unknown project', 'create', { workspaceId: unknownId }, 404],
    ['non-UUID project', 'create', { workspaceId: 'nope' }, 404],
    ['unknown environment', 'create', { environment: 'nope' }, 404],
    ['unknown folder', 'create', { secretPath: '/missing' }, 404],
    ['invalid path segment', 'create', { secretPath: '/bad segment' }, 400],
    ['duplicate key', 'create-duplicate', {}, 400],
    ['personal secret by an identity', 'create', { type: 'personal' }, 400],
    ['unknown tag id', 'create', { tagIds: [unknownId] }, 404],
    ['missing secretValue', 'create', { secretValue: undefined }, 422],
    ['wrong type of secretValue', 'create', { secretValue: 42 }, 422],
    ['unknown type', 'create', { type: 'global' }, 422],
    ['key longer than 500 characters', 'create-long', {}, 422],
    ['update of an unknown secret', 'update', {}, 404],
    ['delete of an unknown secret', 'delete', {}, 404],
    ['rename onto an existing key', 'rename', {}, 400],
    ['get of an unknown secret', 'get', {}, 404],
  ])('%s (%s) → %i', async (_name, operation, body, status) => {
    await fx.createSecret('EXISTING', { secretValue: 'x' });
    await fx.createSecret('EXISTING_2', { secretValue: 'y' });
    const before = await snapshotDatabase(app.database);
    const response = await (async () => {
      switch (operation) {
        case 'create-duplicate':
          return fx.createSecret('EXISTING');
        case 'create-long':
          return fx.createSecret('K'.repeat(501));
        case 'update':
          return fx.updateSecret('NOT_THERE', { secretValue: 'x' });
        case 'delete':
          return fx.deleteSecret('NOT_THERE');
        case 'rename':
          return fx.updateSecret('EXISTING', { newSecretName: 'EXISTING_2' });
        case 'get':
          return fx.getSecret('NOT_THERE');
        default:
          return fx.createSecret('NEW_KEY', body);
      }
    })();
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, error: expect.any(String), message: expect.any(String), reqId: expect.any(String) });
    if (operation !== 'get') {
      expect(await snapshotDatabase(app.database)).toEqual(before);
    }
  });

  test('a key of exactly 500 characters is accepted', async () => {
    expect((await fx.createSecret('K'.repeat(500))).status).toBe(200);
  });
});

describe('personal secrets (users only)', () => {
  test('need a shared secret, are returned to their owner beside the shared one, and go with it', async () => {
    const user = fx.userActor();
    const location = { projectId: fx.projectId, environment: 'dev', secretPath: '/' };
    await expect(app.services.secrets.create(user, { ...location, secretName: 'PERSONAL_ONLY', secretValue: 'x', type: 'personal' })).rejects.toMatchObject({
      statusCode: 400,
    });
    await fx.createSecret('OVERRIDDEN', { secretValue: 'shared-value' });
    const personal = await app.services.secrets.create(user, { ...location, secretName: 'OVERRIDDEN', secretValue: 'mine', type: 'personal' });
    expect(personal).toMatchObject({ type: 'personal', secretValue: 'mine' });

    const asUser = await app.services.secretReader.list(user, { ...location, recursive: false, includeImports: false, expandSecretReferences: false });
    expect(asUser.secrets.filter((secret) => secret.secretKey === 'OVERRIDDEN').map((secret) => [secret.type, secret.secretValue])).toEqual([
      ['shared', 'shared-value'],
      ['personal', 'mine'],
    ]);
    const asIdentity = await fx.listSecrets();
    expect(asIdentity.body.secrets.filter((secret: { secretKey: string }) => secret.secretKey === 'OVERRIDDEN')).toHaveLength(1);
    expect(JSON.stringify(asIdentity.body)).not.toContain('mine');

    await fx.deleteSecret('OVERRIDDEN');
    const rows = await app.database.db.selectFrom('secrets').select('type').where('key', '=', 'OVERRIDDEN').execute();
    expect(rows).toEqual([]);
  });
});

describe('batch (all or nothing)', () => {
  const batch = (method: string, body: Record<string, unknown>) =>
    app.request(method, '/api/v3/secrets/batch/raw', { token: fx.token, body: { workspaceId: fx.projectId, environment: 'dev', ...body } });

  test('create, update and delete several secrets', async () => {
    const created = await batch('POST', {
      secrets: [
        { secretKey: 'B1', secretValue: '1' },
        { secretKey: 'B2', secretValue: '2' },
      ],
    });
    expect(created.status).toBe(200);
    expect(created.body.secrets.map((secret: { secretKey: string }) => secret.secretKey)).toEqual(['B1', 'B2']);
    const updated = await batch('PATCH', {
      secrets: [
        { secretKey: 'B1', secretValue: '1b' },
        { secretKey: 'B2', newSecretName: 'B3' },
      ],
    });
    expect(updated.body.secrets).toMatchObject([
      { secretKey: 'B1', secretValue: '1b', version: 2 },
      { secretKey: 'B3', secretValue: '2', version: 2 },
    ]);
    const bySlug = await app.request('DELETE', '/api/v3/secrets/batch/raw', {
      token: fx.token,
      body: { projectSlug: fx.projectSlug, environment: 'dev', secrets: [{ secretKey: 'B1' }, { secretKey: 'B3' }] },
    });
    expect(bySlug.status).toBe(200);
    expect((await fx.getSecret('B1')).status).toBe(404);
  });

  test.each([
    [
      'create with one existing key',
      'POST',
      {
        secrets: [
          { secretKey: 'FRESH', secretValue: '1' },
          { secretKey: 'EXISTING', secretValue: '2' },
        ],
      },
      400,
    ],
    [
      'create with a repeated key',
      'POST',
      {
        secrets: [
          { secretKey: 'R', secretValue: '1' },
          { secretKey: 'R', secretValue: '2' },
        ],
      },
      400,
    ],
    [
      'update with one missing key',
      'PATCH',
      {
        secrets: [
          { secretKey: 'EXISTING', secretValue: 'z' },
          { secretKey: 'MISSING', secretValue: 'z' },
        ],
      },
      404,
    ],
    ['delete with one missing key', 'DELETE', { secrets: [{ secretKey: 'EXISTING' }, { secretKey: 'MISSING' }] }, 404],
    ['an empty batch', 'POST', { secrets: [] }, 422],
  ])('%s (%s) → %i, nothing written', async (_name, method, body, status) => {
    const before = await snapshotDatabase(app.database);
    const response = await batch(method, body);
    expect(response.status).toBe(status);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('tags attach and detach', () => {
  test('answer the encrypted form with the tags', async () => {
    await fx.createTag('pci');
    await fx.createTag('gdpr');
    await fx.createSecret('CARD_KEY', { secretValue: 'card' });
    const body = { projectSlug: fx.projectSlug, environment: 'dev', tagSlugs: ['pci', 'gdpr'] };
    const attached = await app.request('POST', '/api/v3/secrets/tags/CARD_KEY', { token: fx.token, body });
    expect(attached.status).toBe(200);
    const secret = attached.body.secret;
    expect(secret).toMatchObject({ type: 'shared', version: 2, algorithm: 'aes-256-gcm', keyEncoding: 'base64', folderId: expect.any(String) });
    for (const field of ['secretKey', 'secretValue', 'secretComment']) {
      for (const part of ['Ciphertext', 'IV', 'Tag']) expect(typeof secret[`${field}${part}`]).toBe('string');
    }
    expect(Buffer.from(secret.secretValueIV, 'base64')).toHaveLength(12);
    expect(secret.tags.map((tag: { slug: string }) => tag.slug)).toEqual(['gdpr', 'pci']);
    expect(JSON.stringify(secret)).not.toContain('card');

    const detached = await app.request('DELETE', '/api/v3/secrets/tags/CARD_KEY', { token: fx.token, body: { ...body, tagSlugs: ['pci'] } });
    expect(detached.body.secret.tags.map((tag: { slug: string }) => tag.slug)).toEqual(['gdpr']);
  });

  test.each([
    ['empty tagSlugs', { tagSlugs: [] }, 422],
    ['an unknown tag', { tagSlugs: ['nope'] }, 404],
    ['an unknown secret', { tagSlugs: ['gdpr'], secret: 'NOPE' }, 404],
    ['a tag already attached', { tagSlugs: ['gdpr'] }, 400],
    ['an unknown project slug', { tagSlugs: ['gdpr'], projectSlug: 'no-such-project' }, 404],
  ])('attach with %s → %i, database unchanged', async (_name, overrides, status) => {
    const { secret = 'CARD_KEY', ...body } = overrides as Record<string, unknown> & { secret?: string };
    const before = await snapshotDatabase(app.database);
    const response = await app.request('POST', `/api/v3/secrets/tags/${secret}`, {
      token: fx.token,
      body: { projectSlug: fx.projectSlug, environment: 'dev', ...body },
    });
    expect(response.status).toBe(status);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('storage', () => {
  test('a raw dump of the secrets tables contains none of the values or comments', async () => {
    await fx.createSecret('DUMP_CHECK', { secretValue: 'sentinel-value-8c1f', secretComment: 'sentinel-comment-77aa' });
    await fx.updateSecret('DUMP_CHECK', { secretValue: 'sentinel-value-2b9e' });
    const dump = JSON.stringify(await snapshotDatabase(app.database));
    expect(dump).toContain('DUMP_CHECK');
    for (const value of ['sentinel-value-8c1f', 'sentinel-comment-77aa', 'sentinel-value-2b9e', 'postgres://db/1']) {
      expect(dump).not.toContain(value);
      expect(dump).not.toContain(Buffer.from(value).toString('hex'));
    }
  });

  test('20 concurrent updates of one secret leave versions 1..21 without gaps or lost updates', async () => {
    await fx.createSecret('COUNTER', { secretValue: '0' });
    const responses = await Promise.all(Array.from({ length: 20 }, (_, index) => fx.updateSecret('COUNTER', { secretValue: `v${index + 1}` })));
    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
    const id = responses[0]!.body.secret.id;
    const versions = await app.database.db.selectFrom('secretVersions').select('version').where('secretId', '=', id).orderBy('version').execute();
    expect(versions.map((row) => row.version)).toEqual(Array.from({ length: 21 }, (_, index) => index + 1));
    expect(new Set(responses.map((response) => response.body.secret.version)).size).toBe(20);
    const final = await fx.getSecret('COUNTER');
    expect(final.body.secret.version).toBe(21);
    const last = responses.find((response) => response.body.secret.version === 21)!;
    expect(final.body.secret.secretValue).toBe(last.body.secret.secretValue);
  });

  test('every shared mutation recorded a change row for its path', async () => {
    const rows = await sql<{ kind: string; n: number }>`SELECT kind, count(*)::int AS n FROM change_log WHERE kind = 'secret' GROUP BY kind`.execute(app.database.db);
    expect(rows.rows[0]!.n).toBeGreaterThan(20);
  });
});
