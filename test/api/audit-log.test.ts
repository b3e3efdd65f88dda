import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { pruneExpiredAuditLogs } from '../../src/audit/audit-retention.ts';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let fx: Awaited<ReturnType<typeof secretsFixture>>;

beforeAll(async () => {
  app = await startTestApp();
  fx = await secretsFixture(app, 'audit-project');
});
afterAll(async () => app?.close());

const exportLogs = (query: Record<string, string> = {}, token = fx.token) =>
  app.request('GET', `/api/v1/workspace/${fx.projectId}/audit-logs`, { token, query: { limit: '1000', ...query } });

interface AuditedOperation {
  event: string;
  userAgent: string;
  userAgentType: string;
  metadataKeys: string[];
  run: (headers: Record<string, string>) => Promise<{ status: number }>;
}

describe('every audited operation writes exactly one entry', () => {
  const call = (method: string, url: string, body?: unknown, query?: Record<string, string>) => (headers: Record<string, string>) =>
    app.request(method, url, { token: fx.token, body, query, headers });
  const dev = () => ({ workspaceId: fx.projectId, environment: 'dev' });
  const operations: [string, () => AuditedOperation][] = [
    [
      'create-environment',
      () => ({
        event: 'create-environment',
        userAgent: 'cli',
        userAgentType: 'cli',
        metadataKeys: ['name', 'slug'],
        run: call('POST', `/api/v1/workspace/${fx.projectId}/environments`, { name: 'QA', slug: 'qa' }),
      }),
    ],
    [
      'create-folder',
      () => ({
        event: 'create-folder',
        userAgent: 'terraform',
        userAgentType: 'terraform',
        metadataKeys: ['environment', 'folderId', 'folderName', 'folderPath'],
        run: call('POST', '/api/v1/folders', { ...dev(), name: 'audited' }),
      }),
    ],
    [
      'update-folder',
      () => ({
        event: 'update-folder',
        userAgent: 'Mozilla/5.0',
        userAgentType: 'web',
        metadataKeys: ['environment', 'folderId', 'folderPath', 'oldFolderName', 'newFolderName'],
        run: call('PATCH', '/api/v1/folders/audited', { ...dev(), name: 'audited2' }),
      }),
    ],
    [
      'create-secret',
      () => ({
        event: 'create-secret',
        userAgent: 'InfisicalNodeSDK/3.0',
        userAgentType: 'InfisicalNodeSDK',
        metadataKeys: ['environment', 'secretPath', 'secretId', 'secretKey', 'secretVersion'],
        run: call('POST', '/api/v3/secrets/raw/AUDITED', { ...dev(), secretValue: 'audited-value-1' }),
      }),
    ],
    [
      'get-secret',
      () => ({
        event: 'get-secret',
        userAgent: 'InfisicalPythonSDK',
        userAgentType: 'InfisicalPythonSDK',
        metadataKeys: ['environment', 'secretPath', 'secretId', 'secretKey', 'secretVersion'],
        run: call('GET', '/api/v3/secrets/raw/AUDITED', undefined, dev()),
      }),
    ],
    [
      'get-secrets',
      () => ({
        event: 'get-secrets',
        userAgent: 'k8-operator/1.0',
        userAgentType: 'k8-operator',
        metadataKeys: ['environment', 'secretPath', 'numberOfSecrets'],
        run: call('GET', '/api/v3/secrets/raw', undefined, dev()),
      }),
    ],
    [
      'update-secret',
      () => ({
        event: 'update-secret',
        userAgent: 'curl/8',
        userAgentType: 'other',
        metadataKeys: ['environment', 'secretPath', 'secretId', 'secretKey', 'secretVersion'],
        run: call('PATCH', '/api/v3/secrets/raw/AUDITED', { ...dev(), secretValue: 'audited-value-2' }),
      }),
    ],
    [
      'create-secrets',
      () => ({
        event: 'create-secrets',
        userAgent: 'cli',
        userAgentType: 'cli',
        metadataKeys: ['environment', 'secretPath', 'secrets'],
        run: call('POST', '/api/v3/secrets/batch/raw', { ...dev(), secrets: [{ secretKey: 'BATCH_A', secretValue: 'audited-batch-a' }] }),
      }),
    ],
    [
      'update-secrets',
      () => ({
        event: 'update-secrets',
        userAgent: 'cli',
        userAgentType: 'cli',
        metadataKeys: ['environment', 'secretPath', 'secrets'],
        run: call('PATCH', '/api/v3/secrets/batch/raw', { ...dev(), secrets: [{ secretKey: 'BATCH_A', secretValue: 'audited-batch-b' }] }),
      }),
    ],
    [
      'delete-secrets',
      () => ({
        event: 'delete-secrets',
        userAgent: 'cli',
        userAgentType: 'cli',
        metadataKeys: ['environment', 'secretPath', 'secrets'],
        run: call('DELETE', '/api/v3/secrets/batch/raw', { ...dev(), secrets: [{ secretKey: 'BATCH_A' }] }),
      }),
    ],
    [
      'create-secret-import',
      () => ({
        event: 'create-secret-import',
        userAgent: 'cli',
        userAgentType: 'cli',
        metadataKeys: ['secretImportId', 'folderId', 'importFromEnvironment', 'importFromSecretPath', 'importToEnvironment', 'importToSecretPath'],
        run: call('POST', '/api/v1/secret-imports', { ...dev(), import: { environment: 'prod', path: '/' } }),
      }),
    ],
    [
      'get-secret-imports',
      () => ({
        event: 'get-secret-imports',
        userAgent: 'cli',
        userAgentType: 'cli',
        metadataKeys: ['environment', 'folderId', 'numberOfImports'],
        run: call('GET', '/api/v1/secret-imports', undefined, dev()),
      }),
    ],
    [
      'create-tag',
      () => ({
        event: 'create-tag',
        userAgent: 'cli',
        userAgentType: 'cli',
        metadataKeys: ['tagId', 'slug', 'color'],
        run: call('POST', `/api/v1/workspace/${fx.projectId}/tags`, { slug: 'audited', color: 'red' }),
      }),
    ],
    [
      'attach-secret-tags',
      () => ({
        event: 'attach-secret-tags',
        userAgent: 'cli',
        userAgentType: 'cli',
        metadataKeys: ['environment', 'secretPath', 'secretId', 'secretKey', 'secretVersion', 'tagSlugs'],
        run: call('POST', '/api/v3/secrets/tags/AUDITED', { projectSlug: fx.projectSlug, environment: 'dev', tagSlugs: ['audited'] }),
      }),
    ],
    [
      'delete-secret',
      () => ({
        event: 'delete-secret',
        userAgent: 'cli',
        userAgentType: 'cli',
        metadataKeys: ['environment', 'secretPath', 'secretId', 'secretKey', 'secretVersion'],
        run: call('DELETE', '/api/v3/secrets/raw/AUDITED', dev()),
      }),
    ],
    [
      'delete-folder',
      () => ({
        event: 'delete-folder',
        userAgent: 'cli',
        userAgentType: 'cli',
        metadataKeys: ['environment', 'folderId', 'folderName', 'folderPath'],
        run: call('DELETE', '/api/v1/folders/audited2', dev()),
      }),
    ],
    [
      'update-project',
      () => ({
        event: 'update-project',
        userAgent: 'cli',
        userAgentType: 'cli',
        metadataKeys: ['projectId', 'oldName', 'newName', 'oldAutoCapitalization', 'newAutoCapitalization'],
        run: call('PATCH', `/api/v1/workspace/${fx.projectId}`, { name: 'Audited project' }),
      }),
    ],
  ];

  test.each(operations)('%s', async (_name, describeOperation) => {
    const operation = describeOperation();
    const before = (await exportLogs({ eventType: operation.event })).body.auditLogs.length;
    const response = await operation.run({ 'user-agent': operation.userAgent });
    expect(response.status).toBe(200);
    const entries = (await exportLogs({ eventType: operation.event })).body.auditLogs;
    expect(entries).toHaveLength(before + 1);
    const entry = entries[0];
    expect(entry).toMatchObject({
      projectId: fx.projectId,
      orgId: fx.orgId,
      ipAddress: '127.0.0.1',
      userAgent: operation.userAgent,
      userAgentType: operation.userAgentType,
      event: { type: operation.event },
      actor: { type: 'identity', metadata: { identityId: fx.identityId, name: 'coffer-admin' } },
      expiresAt: expect.any(String),
    });
    expect(Object.keys(entry.event.metadata).sort()).toEqual([...operation.metadataKeys].sort());
    const days = (Date.parse(entry.expiresAt) - Date.parse(entry.createdAt)) / 86_400_000;
    expect(Math.round(days)).toBe(90);
  });
});

describe('transactions', () => {
  test('a mutation that fails after its audit row was written leaves no audit row and no data', async () => {
    await fx.createFolder('/', 'boom');
    // Make the change-log insert (the last write of the transaction) fail for this one path.
    await sql`CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.secret_path = '/boom' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`.execute(app.database.db);
    await sql`CREATE TRIGGER refuse_boom BEFORE INSERT ON change_log FOR EACH ROW EXECUTE FUNCTION refuse_boom()`.execute(app.database.db);
    try {
      const response = await fx.createSecret('NEVER', { secretPath: '/boom', secretValue: 'rolled-back-value' });
      expect(response.status).toBe(500);
      expect(response.body).toMatchObject({ statusCode: 500, message: 'Something went wrong' });
      const audit = await app.database.db
        .selectFrom('auditLogs')
        .select('id')
        .where(sql`event_metadata->>'secretKey'`, '=', 'NEVER')
        .execute();
      expect(audit).toEqual([]);
      expect(await app.database.db.selectFrom('secrets').select('id').where('key', '=', 'NEVER').execute()).toEqual([]);
    } finally {
      await sql`DROP TRIGGER refuse_boom ON change_log`.execute(app.database.db);
      await sql`DROP FUNCTION refuse_boom()`.execute(app.database.db);
    }
  });
});

describe('export filters and paging', () => {
  let secondIdentity: { id: string; token: string };
  let generated: { id: string }[] = [];

  beforeAll(async () => {
    const identity = await app.database.db.insertInto('identities').values({ name: 'second', authMethod: 'token-auth' }).returningAll().executeTakeFirstOrThrow();
    await app.database.db.insertInto('identityOrgMemberships').values({ orgId: fx.orgId, identityId: identity.id, role: 'admin' }).execute();
    const issued = await app.services.auth.issueIdentityToken(app.database.db, {
      identityId: identity.id,
      authMethod: 'token-auth',
      name: 'second',
      accessTokenTtl: 0,
      accessTokenMaxTtl: 0,
      accessTokenNumUsesLimit: 0,
    });
    secondIdentity = { id: identity.id, token: issued.accessToken };
    await fx.createFolder('/', 'paging');
    const agents = ['cli', 'terraform', 'InfisicalNodeSDK/1', 'ServicePythonSDK'];
    for (let index = 0; index < 250; index++) {
      const token = index % 5 === 0 ? secondIdentity.token : fx.token;
      const headers = { 'user-agent': agents[index % agents.length]! };
      const body = { workspaceId: fx.projectId, environment: 'dev', secretPath: '/paging' };
      const response =
        index % 2 === 0
          ? await app.request('POST', `/api/v3/secrets/raw/P${index}`, { token, headers, body: { ...body, secretValue: `paging-value-${index}` } })
          : await app.request('GET', '/api/v3/secrets/raw', { token, headers, query: { ...body } });
      expect(response.status).toBe(200);
    }
    generated = (await exportLogs({ limit: '1000' })).body.auditLogs;
  });

  test('limit defaults to 20; above 1000 is refused with 422', async () => {
    const response = await app.request('GET', `/api/v1/workspace/${fx.projectId}/audit-logs`, { token: fx.token });
    expect(response.body.auditLogs).toHaveLength(20);
    expect((await exportLogs({ limit: '1001' })).status).toBe(422);
    expect((await exportLogs({ offset: '-1' })).status).toBe(422);
    expect((await exportLogs({ startDate: 'yesterday' })).status).toBe(422);
    expect((await exportLogs({ userAgentType: 'browser' })).status).toBe(422);
  });

  test('newest first, ties broken by id', () => {
    for (let index = 1; index < generated.length; index++) {
      const [newer, older] = [generated[index - 1] as any, generated[index] as any];
      expect(newer.createdAt > older.createdAt || (newer.createdAt === older.createdAt && newer.id > older.id)).toBe(true);
    }
  });

  test('each filter alone', async () => {
    const creates = (await exportLogs({ eventType: 'create-secret' })).body.auditLogs;
    expect(creates.filter((entry: any) => entry.event.metadata.secretPath === '/paging')).toHaveLength(125);
    expect(creates.every((entry: any) => entry.event.type === 'create-secret')).toBe(true);

    const cli = (await exportLogs({ userAgentType: 'cli' })).body.auditLogs;
    expect(cli.every((entry: any) => entry.userAgentType === 'cli')).toBe(true);

    // Both SDK spellings match each other's entries; each entry keeps the spelling its client sent.
    const node = (await exportLogs({ userAgentType: 'ServiceNodeSDK' })).body.auditLogs;
    expect(node.length).toBeGreaterThanOrEqual(62);
    expect(new Set(node.map((entry: any) => entry.userAgentType))).toEqual(new Set(['InfisicalNodeSDK']));
    expect((await exportLogs({ userAgentType: 'InfisicalPythonSDK' })).body.auditLogs.map((entry: any) => entry.userAgentType)).toContain('ServicePythonSDK');

    const second = (await exportLogs({ actor: secondIdentity.id })).body.auditLogs;
    expect(second).toHaveLength(50);
    expect(second.every((entry: any) => entry.actor.metadata.identityId === secondIdentity.id)).toBe(true);

    const middle = generated[125] as any;
    const since = (await exportLogs({ startDate: middle.createdAt })).body.auditLogs;
    expect(since.every((entry: any) => entry.createdAt >= middle.createdAt)).toBe(true);
    const until = (await exportLogs({ endDate: middle.createdAt })).body.auditLogs;
    expect(until.every((entry: any) => entry.createdAt <= middle.createdAt)).toBe(true);
    expect(since.length + until.length).toBeGreaterThanOrEqual(generated.length);
  });

  test('dates with any ISO 8601 offset', async () => {
    const middle = new Date((generated[125] as any).createdAt);
    const inUtc = (await exportLogs({ startDate: middle.toISOString() })).body.auditLogs;
    const shifted = new Date(middle.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    const inPlusTwo = (await exportLogs({ startDate: shifted })).body.auditLogs;
    expect(inPlusTwo.map((entry: any) => entry.id)).toEqual(inUtc.map((entry: any) => entry.id));
  });

  test('filters combined', async () => {
    const combined = (await exportLogs({ eventType: 'create-secret', actor: secondIdentity.id, userAgentType: 'cli' })).body.auditLogs;
    const expected = generated.filter(
      (entry: any) => entry.event.type === 'create-secret' && entry.actor.metadata.identityId === secondIdentity.id && entry.userAgentType === 'cli',
    );
    expect(combined.map((entry: any) => entry.id)).toEqual(expected.map((entry: any) => entry.id));
    expect(combined.length).toBeGreaterThan(0);
  });

  test('cursor pages neither skip nor repeat entries while new events keep arriving', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let page = 0;
    do {
      const response = await exportLogs({ limit: '37', ...(cursor ? { cursor } : {}) });
      expect(response.status).toBe(200);
      seen.push(...response.body.auditLogs.map((entry: any) => entry.id));
      cursor = response.body.nextCursor;
      // New events land on top between page reads.
      await fx.listSecrets({ secretPath: '/paging' });
      page++;
    } while (cursor && page < 100);
    const all = (await exportLogs()).body.auditLogs.map((entry: any) => entry.id);
    expect(new Set(seen).size).toBe(seen.length);
    const firstSeenIndex = all.indexOf(seen[0]);
    expect(seen).toEqual(all.slice(firstSeenIndex));
    expect(seen.length).toBeGreaterThan(250);
    expect((await exportLogs({ cursor: 'garbage' })).status).toBe(400);
  });

  test('offset pages with a pinned endDate neither skip nor repeat entries', async () => {
    const endDate = (await exportLogs({ limit: '1' })).body.auditLogs[0].createdAt;
    const seen: string[] = [];
    for (let offset = 0; ; offset += 50) {
      const batch = (await exportLogs({ limit: '50', offset: String(offset), endDate })).body.auditLogs;
      seen.push(...batch.map((entry: any) => entry.id));
      await fx.listSecrets({ secretPath: '/paging' });
      if (batch.length < 50) break;
    }
    const all = (await exportLogs({ endDate })).body.auditLogs.map((entry: any) => entry.id);
    expect(seen).toEqual(all);
  });

  test('the organization-wide export filters by project, actor type and event metadata', async () => {
    const response = await app.request('GET', '/api/v1/organization/audit-logs', {
      token: fx.token,
      query: { projectId: fx.projectId, actorType: 'identity', eventType: 'create-secret,get-secrets', eventMetadata: 'secretPath=/paging', limit: '1000' },
    });
    expect(response.status).toBe(200);
    expect(response.body.auditLogs.length).toBeGreaterThanOrEqual(250);
    expect(response.body.auditLogs.every((entry: any) => entry.event.metadata.secretPath === '/paging')).toBe(true);
    expect((await app.request('GET', '/api/v1/organization/audit-logs', { token: fx.token, query: { eventMetadata: 'broken' } })).status).toBe(400);
  });
});

describe('retention', () => {
  test('expired entries are deleted in batches; live ones stay', async () => {
    const total = (
      await app.database.db
        .selectFrom('auditLogs')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n;
    await sql`INSERT INTO audit_logs (actor, event_type, org_id, expires_at)
      SELECT 'identity', 'expired-test', ${fx.orgId}, now() - interval '1 day' FROM generate_series(1, 25)`.execute(app.database.db);
    const deleted = await pruneExpiredAuditLogs(app.database.db, new Date(), 10);
    expect(deleted).toBe(25);
    const after = (
      await app.database.db
        .selectFrom('auditLogs')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n;
    expect(Number(after)).toBe(Number(total));
  });
});
