import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MAX_SUBTREE_FOLDERS } from '../../src/folders/folder-lookup.ts';
import { MAX_PATH_DEPTH, MAX_PATH_LENGTH } from '../../src/folders/secret-path.ts';
import { MAX_IMPORT_DEPTH } from '../../src/imports/import-schema.ts';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { type ApiResponse, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * One small request must not buy unbounded work: each limit is refused
 * before the work (or as soon as its budget runs out), in the documented
 * body, and another client's request made at the same time is answered.
 */
let app: TestApp;
let fx: Awaited<ReturnType<typeof secretsFixture>>;

beforeAll(async () => {
  app = await startTestApp();
  fx = await secretsFixture(app);
});
afterAll(async () => app?.close());

/** The error body of a refusal: `error` is Infisical's name for the status, `code` Coffer's specific one. */
const refused = (status: number, code: string) => ({
  statusCode: status,
  error: status === 400 ? 'BadRequest' : 'ValidationFailure',
  code,
  message: expect.any(String),
  reqId: expect.any(String),
});

/** Runs `heavy` with another client's small request alongside; both must be answered. */
async function withProbe(heavy: () => Promise<ApiResponse>): Promise<ApiResponse> {
  const [response, probe] = await Promise.all([heavy(), app.request('GET', '/api/v1/workspace', { token: fx.token })]);
  expect(probe.status).toBe(200);
  return response;
}

describe('paths and folder nesting', () => {
  test('a folder path of 20,000 segments (40 KB) is refused before any folder is made', async () => {
    const before = await snapshotDatabase(app.database);
    const path = Array.from({ length: 20_000 }, () => 'a').join('/');
    const response = await withProbe(() => fx.createFolder(path, 'x'));
    // the route's input rules refuse it (a path is at most MAX_PATH_LENGTH characters), naming the field
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject(refused(422, 'ValidationFailure'));
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test(`a path longer than ${MAX_PATH_LENGTH} characters is refused, also on reads`, async () => {
    const path = `/${'b'.repeat(MAX_PATH_LENGTH)}`;
    expect((await fx.listSecrets({ secretPath: path })).body).toMatchObject(refused(422, 'ValidationFailure'));
    expect((await fx.createSecret('LONG', { secretPath: path })).body).toMatchObject(refused(422, 'ValidationFailure'));
  });

  test(`folders nest at most ${MAX_PATH_DEPTH} deep`, async () => {
    const parent = Array.from({ length: MAX_PATH_DEPTH - 1 }, (_, index) => `n${index}`).join('/');
    expect((await fx.createFolder(parent, 'last')).status).toBe(200);
    const before = await snapshotDatabase(app.database);
    const tooDeep = await fx.createFolder(`${parent}/last`, 'over');
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body).toEqual(refused(400, 'InvalidPath'));
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test(`a recursive read over more than ${MAX_SUBTREE_FOLDERS} folders is refused before any secret is read`, async () => {
    expect((await fx.createFolder('/', 'wide')).status).toBe(200);
    const wide = await app.database.db.selectFrom('secretFolders').select(['id', 'envId']).where('name', '=', 'wide').executeTakeFirstOrThrow();
    await sql`INSERT INTO secret_folders (env_id, parent_id, name)
      SELECT ${wide.envId}, ${wide.id}, 'f' || n FROM generate_series(1, ${MAX_SUBTREE_FOLDERS}) AS n`.execute(app.database.db);
    const response = await withProbe(() => fx.listSecrets({ secretPath: '/wide', recursive: 'true' }));
    expect(response.status).toBe(422);
    expect(response.body).toEqual(refused(422, 'ListingTooLarge'));
    expect((await fx.listSecrets({ secretPath: '/wide/f1', recursive: 'true' })).status).toBe(200);
  });
});

describe('imports', () => {
  test(`an import chain longer than ${MAX_IMPORT_DEPTH} is refused when the import is made`, async () => {
    for (let link = 0; link <= MAX_IMPORT_DEPTH; link++) expect((await fx.createFolder('/chain', `c${link}`)).status).toBe(200);
    for (let link = 0; link < MAX_IMPORT_DEPTH; link++) {
      expect((await fx.createImport(`/chain/c${link}`, { environment: 'dev', path: `/chain/c${link + 1}` })).status).toBe(200);
    }
    expect((await fx.createFolder('/chain', 'head')).status).toBe(200);
    const before = await snapshotDatabase(app.database);
    const tooLong = await fx.createImport('/chain/head', { environment: 'dev', path: '/chain/c0' });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toEqual(refused(400, 'ImportChainTooDeep'));
    expect(await snapshotDatabase(app.database)).toEqual(before);
    // from the far end, a chain still fits
    expect((await fx.createImport('/chain/head', { environment: 'dev', path: `/chain/c${MAX_IMPORT_DEPTH}` })).status).toBe(200);
  });

  test('imports that share sources at every level (1,554 chains to follow) are refused, not resolved', async () => {
    const width = 6;
    for (let layer = 1; layer <= 4; layer++) {
      for (let index = 0; index < width; index++) expect((await fx.createFolder('/lattice', `l${layer}_${index}`)).status).toBe(200);
    }
    await fx.createSecret('SHARED', { secretPath: '/lattice/l4_0', secretValue: 'bottom' });
    expect((await fx.createFolder('/lattice', 'top')).status).toBe(200);
    for (let index = 0; index < width; index++) expect((await fx.createImport('/lattice/top', { environment: 'dev', path: `/lattice/l1_${index}` })).status).toBe(200);
    for (let layer = 1; layer < 4; layer++) {
      for (let from = 0; from < width; from++) {
        for (let to = 0; to < width; to++) {
          expect((await fx.createImport(`/lattice/l${layer}_${from}`, { environment: 'dev', path: `/lattice/l${layer + 1}_${to}` })).status).toBe(200);
        }
      }
    }
    const response = await withProbe(() => fx.listSecrets({ secretPath: '/lattice/top', include_imports: 'true' }));
    expect(response.status).toBe(422);
    expect(response.body).toEqual(refused(422, 'ImportLimitExceeded'));
    // one layer down the same graph resolves
    const smaller = await fx.listSecrets({ secretPath: '/lattice/l2_0', include_imports: 'true' });
    expect(smaller.status).toBe(200);
  });
});

describe('secret references', () => {
  test('ten secrets that reference each other five times each are refused, not expanded to 19.5 million characters', async () => {
    expect((await fx.createFolder('/', 'bomb')).status).toBe(200);
    for (let index = 0; index < 10; index++) {
      const value = index === 9 ? 'x'.repeat(10) : `\${S${index + 1}}`.repeat(5);
      expect((await fx.createSecret(`S${index}`, { secretPath: '/bomb', secretValue: value })).status).toBe(200);
    }
    const response = await withProbe(() => fx.listSecrets({ secretPath: '/bomb', expandSecretReferences: 'true' }));
    expect(response.status).toBe(422);
    expect(response.body).toEqual(refused(422, 'ReferenceExpansionTooLarge'));
    const single = await fx.getSecret('S0', { secretPath: '/bomb', expandSecretReferences: 'true' });
    expect(single.body).toEqual(refused(422, 'ReferenceExpansionTooLarge'));
    // unexpanded, and a small corner of it expanded, still read
    expect((await fx.listSecrets({ secretPath: '/bomb' })).status).toBe(200);
    expect((await fx.getSecret('S8', { secretPath: '/bomb', expandSecretReferences: 'true' })).body.secret.secretValue).toBe('x'.repeat(50));
  });
});

describe('response size', () => {
  test('a listing larger than 32 MiB is refused before its secrets are decrypted', async () => {
    expect((await fx.createFolder('/', 'big')).status).toBe(200);
    const value = 'v'.repeat(1_000_000);
    for (let index = 0; index < 34; index++) expect((await fx.createSecret(`BIG_${index}`, { secretPath: '/big', secretValue: value })).status).toBe(200);
    const response = await withProbe(() => fx.listSecrets({ secretPath: '/big' }));
    expect(response.status).toBe(422);
    expect(response.body).toEqual(refused(422, 'ListingTooLarge'));
    expect((await fx.getSecret('BIG_0', { secretPath: '/big' })).body.secret.secretValue).toHaveLength(1_000_000);
  }, 180_000); // 34 MB of writes first: on a loaded 2-core machine PGlite takes over the default 30 s
});
