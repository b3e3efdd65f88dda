import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let fx: Awaited<ReturnType<typeof secretsFixture>>;

beforeAll(async () => {
  app = await startTestApp();
  fx = await secretsFixture(app, 'listing-project');
});
afterAll(async () => app?.close());

type Listed = { secretKey: string; secretValue: string; secretPath: string };
const byKey = (secrets: Listed[]) => Object.fromEntries(secrets.map((secret) => [secret.secretKey, secret.secretValue]));

describe('list (GET /api/v3/secrets/raw)', () => {
  beforeAll(async () => {
    await fx.createSecret('ROOT_KEY', { secretValue: 'root' });
    for (const [path, name] of [
      ['/', 'app'],
      ['/', 'apple'],
      ['/app', 'api'],
      ['/app/api', 'v1'],
    ] as const)
      await fx.createFolder(path, name);
    await fx.createSecret('APP_KEY', { secretPath: '/app', secretValue: 'app' });
    await fx.createSecret('APPLE_KEY', { secretPath: '/apple', secretValue: 'apple' });
    await fx.createSecret('API_KEY', { secretPath: '/app/api', secretValue: 'api' });
    await fx.createSecret('V1_KEY', { secretPath: '/app/api/v1', secretValue: 'v1' });
  });

  test('defaults: the root folder only, each item with its secretPath, no imports key', async () => {
    const response = await fx.listSecrets();
    expect(response.status).toBe(200);
    expect(response.body.secrets).toEqual([expect.objectContaining({ secretKey: 'ROOT_KEY', secretValue: 'root', secretPath: '/', environment: 'dev' })]);
    expect(response.body).not.toHaveProperty('imports');
  });

  test('recursive listing matches whole path segments: /app never includes /apple', async () => {
    const response = await fx.listSecrets({ secretPath: '/app', recursive: 'true' });
    expect(response.status).toBe(200);
    expect(response.body.secrets.map((secret: Listed) => [secret.secretPath, secret.secretKey])).toEqual([
      ['/app', 'APP_KEY'],
      ['/app/api', 'API_KEY'],
      ['/app/api/v1', 'V1_KEY'],
    ]);
    const everything = await fx.listSecrets({ recursive: 'true' });
    expect(everything.body.secrets).toHaveLength(5);
  });

  test('recursive listing stops at depth 20', async () => {
    let path = '/deep';
    await fx.createFolder('/', 'deep');
    for (let depth = 1; depth <= 22; depth++) {
      await fx.createFolder(path, `d${depth}`);
      path = `${path}/d${depth}`;
      await fx.createSecret(`AT_${depth}`, { secretPath: path, secretValue: String(depth) });
    }
    const response = await fx.listSecrets({ secretPath: '/deep', recursive: 'true' });
    expect(response.body.secrets.map((secret: Listed) => secret.secretKey).sort()).toEqual(Array.from({ length: 20 }, (_, index) => `AT_${index + 1}`).sort());
  });

  test('by workspaceSlug, by tag, and 404s for unknown project, environment, folder and tag', async () => {
    const bySlug = await app.request('GET', '/api/v3/secrets/raw', { token: fx.token, query: { workspaceSlug: fx.projectSlug, environment: 'dev' } });
    expect(bySlug.body.secrets.map((secret: Listed) => secret.secretKey)).toEqual(['ROOT_KEY']);
    const tag = (await fx.createTag('db')).body.workspaceTag;
    await fx.updateSecret('APP_KEY', { secretPath: '/app', tagIds: [tag.id] });
    const tagged = await fx.listSecrets({ recursive: 'true', tagSlugs: 'db, DB' });
    expect(tagged.body.secrets.map((secret: Listed) => secret.secretKey)).toEqual(['APP_KEY']);
    expect((await fx.listSecrets({ workspaceId: '1a2b3c4d-5555-4555-8555-555555555555' })).status).toBe(404);
    expect((await fx.listSecrets({ environment: 'nope' })).status).toBe(404);
    expect((await fx.listSecrets({ secretPath: '/nope' })).status).toBe(404);
    expect((await fx.listSecrets({ tagSlugs: 'nope' })).status).toBe(404);
    expect((await fx.listSecrets({ secretPath: '/bad path' })).status).toBe(400);
    expect((await fx.listSecrets({ recursive: 'yes' })).status).toBe(422);
  });

  test('each list is audited as get-secrets', async () => {
    const rows = await app.database.db.selectFrom('auditLogs').select(['eventMetadata']).where('eventType', '=', 'get-secrets').execute();
    expect(rows.length).toBeGreaterThan(3);
    expect(rows[0]!.eventMetadata).toMatchObject({ environment: 'dev', secretPath: expect.any(String), numberOfSecrets: expect.any(Number) });
  });
});

describe('imports', () => {
  beforeAll(async () => {
    for (const name of ['shared', 'base', 'override', 'loop']) await fx.createFolder('/', name, 'staging');
    await fx.createFolder('/', 'service', 'staging');
    await fx.createSecret('A', { environment: 'staging', secretPath: '/base', secretValue: 'from-base' });
    await fx.createSecret('B', { environment: 'staging', secretPath: '/base', secretValue: 'from-base' });
    await fx.createSecret('B', { environment: 'staging', secretPath: '/override', secretValue: 'from-override' });
    await fx.createSecret('C', { environment: 'staging', secretPath: '/service', secretValue: 'own' });
    await fx.createSecret('DEEP', { environment: 'prod', secretValue: 'from-prod-root' });
    // /service imports /base then /override (the later one wins); /base imports prod:/ (nested)
    expect((await fx.createImport('/service', { environment: 'staging', path: '/base' }, 'staging')).status).toBe(200);
    expect((await fx.createImport('/service', { environment: 'staging', path: '/override' }, 'staging')).status).toBe(200);
    expect((await fx.createImport('/base', { environment: 'prod', path: '/' }, 'staging')).status).toBe(200);
  });

  const list = (query: Record<string, string> = {}) => fx.listSecrets({ environment: 'staging', secretPath: '/service', ...query });

  test('include_imports returns the imported groups in position order, nested imports included', async () => {
    const response = await list({ include_imports: 'true' });
    expect(response.status).toBe(200);
    expect(byKey(response.body.secrets)).toEqual({ C: 'own' });
    expect(response.body.imports.map((group: { secretPath: string; environment: string }) => [group.environment, group.secretPath])).toEqual([
      ['staging', '/base'],
      ['staging', '/override'],
    ]);
    expect(byKey(response.body.imports[0].secrets)).toEqual({ A: 'from-base', B: 'from-base', DEEP: 'from-prod-root' });
    expect(byKey(response.body.imports[1].secrets)).toEqual({ B: 'from-override' });
  });

  test('a single get through imports: own secret beats imports, the last import wins', async () => {
    await fx.createSecret('A', { environment: 'staging', secretPath: '/override', secretValue: 'from-override' });
    const get = (name: string) => fx.getSecret(name, { environment: 'staging', secretPath: '/service', include_imports: 'true' });
    expect((await get('C')).body.secret.secretValue).toBe('own');
    expect((await get('B')).body.secret.secretValue).toBe('from-override');
    expect((await get('A')).body.secret.secretValue).toBe('from-override');
    // As the reference: a secret found through an import is reported with that import's environment.
    expect((await get('DEEP')).body.secret).toMatchObject({ secretValue: 'from-prod-root', environment: 'staging' });
    expect((await fx.getSecret('DEEP', { environment: 'staging', secretPath: '/service' })).status).toBe(404);
    expect((await get('NOWHERE')).status).toBe(404);
  });

  test('resolution is cycle-safe even when the stored imports form a loop', async () => {
    // The API refuses cycles; write one directly to prove reads still terminate.
    const staging = await app.database.db
      .selectFrom('projectEnvironments')
      .selectAll()
      .where('projectId', '=', fx.projectId)
      .where('slug', '=', 'staging')
      .executeTakeFirstOrThrow();
    const prod = await app.database.db
      .selectFrom('projectEnvironments')
      .selectAll()
      .where('projectId', '=', fx.projectId)
      .where('slug', '=', 'prod')
      .executeTakeFirstOrThrow();
    const prodRoot = await app.database.db.selectFrom('secretFolders').select('id').where('envId', '=', prod.id).where('parentId', 'is', null).executeTakeFirstOrThrow();
    await app.database.db.insertInto('secretImports').values({ folderId: prodRoot.id, importEnv: staging.id, importPath: '/base', position: 1 }).execute();
    const response = await list({ include_imports: 'true' });
    expect(response.status).toBe(200);
    expect(byKey(response.body.imports[0].secrets)).toEqual({ A: 'from-base', B: 'from-base', DEEP: 'from-prod-root' });
  });
});

describe('secret references', () => {
  beforeAll(async () => {
    await fx.createFolder('/', 'refs');
    await fx.createSecret('HOST', { secretPath: '/refs', secretValue: 'db.internal' });
    await fx.createSecret('PORT', { secretPath: '/refs', secretValue: '5432' });
    await fx.createSecret('URL', { secretPath: '/refs', secretValue: 'postgres://${HOST}:${PORT}/${env.prod_missing.X}' });
    await fx.createSecret('PROD_PASS', { environment: 'prod', secretValue: 'p@ss' });
    await fx.createSecret('DSN', { secretPath: '/refs', secretValue: '${URL}?password=${prod.PROD_PASS}' });
    await fx.createSecret('SELF', { secretPath: '/refs', secretValue: 'x${SELF}y' });
    await fx.createSecret('PING', { secretPath: '/refs', secretValue: 'ping-${PONG}' });
    await fx.createSecret('PONG', { secretPath: '/refs', secretValue: 'pong-${PING}' });
  });

  test('expanded only on request, recursively, across environments, cycle-safe', async () => {
    const raw = await fx.listSecrets({ secretPath: '/refs' });
    expect(byKey(raw.body.secrets).URL).toBe('postgres://${HOST}:${PORT}/${env.prod_missing.X}');
    const expanded = byKey((await fx.listSecrets({ secretPath: '/refs', expandSecretReferences: 'true' })).body.secrets);
    expect(expanded.URL).toBe('postgres://db.internal:5432/');
    expect(expanded.DSN).toBe('postgres://db.internal:5432/?password=p@ss');
    expect(expanded.SELF).toBe('xy');
    expect(expanded.PING).toBe('ping-pong-');
    expect(expanded.PONG).toBe('pong-ping-');
    const one = await fx.getSecret('DSN', { secretPath: '/refs', expandSecretReferences: 'true' });
    expect(one.body.secret.secretValue).toBe('postgres://db.internal:5432/?password=p@ss');
  });

  test('reference depth is limited', async () => {
    await fx.createSecret('L0', { secretPath: '/refs', secretValue: 'end' });
    for (let level = 1; level <= 12; level++) await fx.createSecret(`L${level}`, { secretPath: '/refs', secretValue: `\${L${level - 1}}` });
    const expanded = byKey((await fx.listSecrets({ secretPath: '/refs', expandSecretReferences: 'true' })).body.secrets);
    expect(expanded.L5).toBe('end');
    expect(expanded.L12).toMatch(/^\$\{L\d+\}$/);
  });

  test('reads change nothing but the audit log', async () => {
    const before = await snapshotDatabase(app.database);
    await fx.listSecrets({ secretPath: '/refs', expandSecretReferences: 'true', include_imports: 'true', recursive: 'true' });
    const after = await snapshotDatabase(app.database);
    expect({ ...after, audit_logs: [] }).toEqual({ ...before, audit_logs: [] });
  });
});
