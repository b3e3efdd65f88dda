import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Actor } from '../../src/actor/actor.ts';
import { latestRevision } from '../../src/changes/change-store.ts';
import { AppError } from '../../src/errors.ts';
import { IntegrationAuthCipher } from '../../src/integrations/integration-auth-cipher.ts';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

const UNKNOWN_ID = '0b4a3c2d-3333-4333-8333-333333333333';
/** Credentials sent to the API; none may come back in a response, the audit log or a log line. */
const SENTINEL = {
  accessToken: `sentinel-access-${randomBytes(12).toString('hex')}`,
  accessId: `sentinel-id-${randomBytes(12).toString('hex')}`,
  refreshToken: `sentinel-refresh-${randomBytes(12).toString('hex')}`,
  awsAssumeIamRoleArn: `arn:aws:iam::123456789012:role/sentinel-${randomBytes(6).toString('hex')}`,
};

let app: TestApp;
let token: string;
let projectId: string;
let actor: Actor;
const envIds: Record<string, string> = {};
const responses: string[] = [];

beforeAll(async () => {
  app = await startTestApp();
  const admin = await bootstrap(app);
  token = admin.token;
  projectId = (await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Integrations', slug: 'integrations-project' } })).body.project.id;
  const environments = await app.database.db.selectFrom('projectEnvironments').select(['id', 'slug']).where('projectId', '=', projectId).execute();
  for (const environment of environments) envIds[environment.slug] = environment.id;
  actor = {
    kind: 'identity',
    id: admin.identityId,
    name: 'operator',
    orgId: admin.orgId,
    orgRole: 'admin',
    tokenId: null,
    authMethod: null,
    // the in-process operator acts for this server's own cluster
    cluster: 'local',
    ip: null,
    userAgent: 'k8-operator',
    userAgentType: 'k8-operator',
  };
});
afterAll(async () => app?.close());

async function call(method: string, url: string, options: { body?: unknown; query?: Record<string, string> } = {}) {
  const response = await app.request(method, url, { token, ...options });
  responses.push(JSON.stringify(response.body ?? null));
  return response;
}

async function makeFolder(path: string, environment = 'dev'): Promise<void> {
  const segments = path.split('/').filter(Boolean);
  const response = await call('POST', '/api/v1/folders', {
    body: { workspaceId: projectId, environment, name: segments.at(-1), path: `/${segments.slice(0, -1).join('/')}` },
  });
  expect(response.status).toBe(200);
}

const authorize = (body: Record<string, unknown> = {}) =>
  call('POST', '/api/v1/integration-auth/access-token', { body: { workspaceId: projectId, integration: 'github', ...body } });
const createIntegration = (body: Record<string, unknown>) => call('POST', '/api/v1/integration', { body: { sourceEnvironment: 'dev', ...body } });
const patchIntegration = (id: string, body: Record<string, unknown>) => call('PATCH', `/api/v1/integration/${id}`, { body });
const getIntegration = (id: string) => call('GET', `/api/v1/integration/${id}`);

async function newAuth(integration = 'github'): Promise<string> {
  const response = await authorize({ integration, accessToken: SENTINEL.accessToken });
  expect(response.status).toBe(200);
  return response.body.integrationAuth.id;
}

async function newIntegration(body: Record<string, unknown> = {}): Promise<any> {
  const response = await createIntegration({ integrationAuthId: await newAuth(), ...body });
  expect(response.status).toBe(200);
  return response.body.integration;
}

async function auditMetadata(eventType: string): Promise<Record<string, unknown>[]> {
  const rows = await app.database.db.selectFrom('auditLogs').select('eventMetadata').where('eventType', '=', eventType).orderBy('createdAt').execute();
  return rows.map((row) => row.eventMetadata as Record<string, unknown>);
}

const revision = () => latestRevision(app.database.db);
async function changesSince(after: number) {
  const rows = await app.database.db.selectFrom('changeLog').selectAll().where('revision', '>', after).orderBy('revision').execute();
  return rows.map((row) => ({
    projectId: row.projectId,
    environmentId: row.environmentId,
    environmentSlug: row.environmentSlug,
    secretPath: row.secretPath,
    kind: row.kind,
  }));
}
const change = (environment: string, secretPath: string) => ({
  projectId,
  environmentId: envIds[environment],
  environmentSlug: environment,
  secretPath,
  kind: 'integration',
});

async function expectUnchanged(request: () => Promise<{ status: number; body: any }>, status: number) {
  const before = await snapshotDatabase(app.database);
  const response = await request();
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({ statusCode: status, error: expect.any(String), message: expect.any(String) });
  expect(await snapshotDatabase(app.database)).toEqual(before);
  return response;
}

describe('integration auth', () => {
  test('POST access-token stores sealed credentials and returns the auth without them', async () => {
    const response = await authorize({ ...SENTINEL, url: 'https://vault.example.com', namespace: 'team-a' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      integrationAuth: {
        id: expect.any(String),
        projectId,
        integration: 'github',
        teamId: null,
        url: 'https://vault.example.com',
        namespace: 'team-a',
        accountId: null,
        metadata: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    const id: string = response.body.integrationAuth.id;
    const row = await app.database.db.selectFrom('integrationAuths').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const project = await app.database.db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirstOrThrow();
    const cipher = new IntegrationAuthCipher(app.services.keyring, project);
    expect(cipher.open(id, 'access', row.encryptedAccess)).toBe(SENTINEL.accessToken);
    expect(cipher.open(id, 'access-id', row.encryptedAccessId)).toBe(SENTINEL.accessId);
    expect(cipher.open(id, 'refresh', row.encryptedRefresh)).toBe(SENTINEL.refreshToken);
    expect(cipher.open(id, 'aws-assume-iam-role-arn', row.encryptedAwsAssumeIamRoleArn)).toBe(SENTINEL.awsAssumeIamRoleArn);
    // bound to the row: another auth's id does not open it
    expect(() => cipher.open(UNKNOWN_ID, 'access', row.encryptedAccess)).toThrow();
    for (const value of Object.values(SENTINEL)) expect(row.encryptedAccess!.includes(Buffer.from(value))).toBe(false);
    expect(await auditMetadata('authorize-integration')).toContainEqual({ integration: 'github' });
  });

  test('"kubernetes" is an integration; absent credentials stay empty', async () => {
    const response = await authorize({ integration: 'kubernetes' });
    expect(response).toMatchObject({ status: 200, body: { integrationAuth: { integration: 'kubernetes', url: null, namespace: null } } });
    const row = await app.database.db.selectFrom('integrationAuths').selectAll().where('id', '=', response.body.integrationAuth.id).executeTakeFirstOrThrow();
    expect([row.encryptedAccess, row.encryptedAccessId, row.encryptedRefresh, row.encryptedAwsAssumeIamRoleArn]).toEqual([null, null, null, null]);
  });

  test('GET by id and the project list return the same auths', async () => {
    const id = await newAuth('vercel');
    const one = await call('GET', `/api/v1/integration-auth/${id}`);
    expect(one.status).toBe(200);
    expect(one.body.integrationAuth).toMatchObject({ id, projectId, integration: 'vercel' });
    const list = await call('GET', `/api/v1/workspace/${projectId}/authorizations`);
    expect(list.status).toBe(200);
    expect(list.body.authorizations).toContainEqual(one.body.integrationAuth);
    expect(Object.keys(list.body)).toEqual(['authorizations']);
  });

  test.each([
    ['an invalid integration slug', 400, { integration: 'dropbox' }],
    ['an unknown project', 404, { workspaceId: UNKNOWN_ID }],
    ['a non-UUID project id', 404, { workspaceId: 'project' }],
    ['a url that is not a URL', 422, { url: 'not a url', accessToken: SENTINEL.accessToken }],
    ['a missing workspaceId', 422, { workspaceId: undefined }],
    ['a missing integration', 422, { integration: undefined }],
    ['an accessToken of the wrong type', 422, { accessToken: 42 }],
  ])('POST access-token with %s → %i, database unchanged', async (_name, status, body) => {
    const response = await expectUnchanged(() => authorize(body), status);
    if (status === 400) expect(response.body.message).toBe('Invalid integration');
  });

  test.each([
    ['GET', `/api/v1/integration-auth/${UNKNOWN_ID}`],
    ['GET', '/api/v1/integration-auth/nope'],
    ['DELETE', `/api/v1/integration-auth/${UNKNOWN_ID}`],
    ['DELETE', '/api/v1/integration-auth/nope'],
    ['GET', `/api/v1/workspace/${UNKNOWN_ID}/authorizations`],
    ['GET', '/api/v1/workspace/nope/authorizations'],
  ])('%s %s → 404, database unchanged', async (method, url) => {
    await expectUnchanged(() => call(method, url), 404);
  });

  test('DELETE by id removes the auth and its integrations, audits, and records their changes', async () => {
    await makeFolder('/auth-del');
    const authId = await newAuth('heroku');
    const first = (await createIntegration({ integrationAuthId: authId, secretPath: '/auth-del' })).body.integration;
    const second = (await createIntegration({ integrationAuthId: authId, sourceEnvironment: 'staging' })).body.integration;
    const before = await revision();
    const response = await call('DELETE', `/api/v1/integration-auth/${authId}`);
    expect(response.status).toBe(200);
    expect(response.body.integrationAuth).toMatchObject({ id: authId, integration: 'heroku' });
    expect((await getIntegration(first.id)).status).toBe(404);
    expect((await getIntegration(second.id)).status).toBe(404);
    expect(await changesSince(before)).toEqual(expect.arrayContaining([change('dev', '/auth-del'), change('staging', '/')]));
    expect(await changesSince(before)).toHaveLength(2);
    expect(await auditMetadata('unauthorize-integration')).toContainEqual({ integration: 'heroku' });
    await expectUnchanged(() => call('DELETE', `/api/v1/integration-auth/${authId}`), 404);
  });

  test('DELETE ?integration=&projectId= removes every auth of that type only', async () => {
    const netlify = [await newAuth('netlify'), await newAuth('netlify')];
    const other = await newAuth('render');
    const response = await call('DELETE', '/api/v1/integration-auth', { query: { integration: 'netlify', projectId } });
    expect(response.status).toBe(200);
    expect(response.body.integrationAuth.map((auth: { id: string }) => auth.id).sort()).toEqual([...netlify].sort());
    expect((await call('GET', `/api/v1/integration-auth/${other}`)).status).toBe(200);
    expect((await call('DELETE', '/api/v1/integration-auth', { query: { integration: 'netlify', projectId } })).body).toEqual({ integrationAuth: [] });
    await expectUnchanged(() => call('DELETE', '/api/v1/integration-auth', { query: { integration: 'dropbox', projectId } }), 400);
    await expectUnchanged(() => call('DELETE', '/api/v1/integration-auth', { query: { integration: 'render', projectId: UNKNOWN_ID } }), 404);
    await expectUnchanged(() => call('DELETE', '/api/v1/integration-auth', { query: { integration: 'render' } }), 422);
  });
});

describe('create integration (POST /api/v1/integration)', () => {
  test('creates with the defaults, in the seed shape plus the environment; audits and records a change', async () => {
    const authId = await newAuth();
    const before = await revision();
    const response = await createIntegration({ integrationAuthId: authId, app: 'my-repo', owner: 'acme', url: 'https://github.example.com' });
    expect(response.status).toBe(200);
    const integration = response.body.integration;
    expect(response.body).toEqual({
      integration: {
        id: expect.any(String),
        isActive: true,
        url: 'https://github.example.com',
        app: 'my-repo',
        appId: null,
        targetEnvironment: null,
        targetEnvironmentId: null,
        targetService: null,
        targetServiceId: null,
        owner: 'acme',
        path: null,
        region: null,
        scope: null,
        integration: 'github',
        metadata: {},
        integrationAuthId: authId,
        envId: envIds.dev,
        secretPath: '/',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        lastUsed: null,
        isSynced: null,
        syncMessage: null,
        environment: { slug: 'dev', name: 'Development', id: envIds.dev },
        kubernetes: null,
      },
    });
    expect(await auditMetadata('create-integration')).toContainEqual({
      integrationId: integration.id,
      integration: 'github',
      environment: 'dev',
      secretPath: '/',
      url: 'https://github.example.com',
      app: 'my-repo',
    });
    expect(await changesSince(before)).toEqual([change('dev', '/')]);
  });

  test('takes every optional field; normalises the path', async () => {
    await makeFolder('/all/fields', 'staging');
    const fields = {
      app: 'a',
      appId: 'a-1',
      targetEnvironment: 'production',
      targetEnvironmentId: 'te-1',
      targetService: 'svc',
      targetServiceId: 'svc-1',
      owner: 'o',
      url: 'https://x.example.com',
      path: '/p',
      region: 'eu-west-1',
      scope: 'github-org',
    };
    const integration = await newIntegration({
      sourceEnvironment: 'staging',
      secretPath: 'all/fields/',
      isActive: false,
      metadata: { secretPrefix: 'P_', custom: 'kept' },
      ...fields,
    });
    expect(integration).toMatchObject({ ...fields, isActive: false, secretPath: '/all/fields', envId: envIds.staging, metadata: { secretPrefix: 'P_', custom: 'kept' } });
    expect((await getIntegration(integration.id)).body.integration).toEqual(integration);
  });

  test.each([
    ['an unknown integration auth', 404, { integrationAuthId: UNKNOWN_ID }],
    ['a non-UUID integration auth id', 404, { integrationAuthId: 'nope' }],
    ['an unknown source environment', 404, { sourceEnvironment: 'nope' }],
    ['a missing source folder', 404, { secretPath: '/not/there' }],
    ['an invalid path segment', 400, { secretPath: '/bad seg' }],
    ['a missing sourceEnvironment', 422, { sourceEnvironment: undefined }],
    ['a missing integrationAuthId', 422, { integrationAuthId: undefined }],
    ['isActive of the wrong type', 422, { isActive: 'yes' }],
    ['a url that is not a URL', 422, { url: 'nope' }],
    ['metadata of the wrong type', 422, { metadata: 'x' }],
    ['a metadata option of the wrong type', 422, { metadata: { shouldAutoRedeploy: 'yes' } }],
  ])('%s → %i, database unchanged', async (_name, status, body) => {
    const integrationAuthId = await newAuth();
    await expectUnchanged(() => createIntegration({ integrationAuthId, ...body }), status);
  });
});

describe('get and list integrations', () => {
  test('GET by id and the project list agree', async () => {
    const integration = await newIntegration({ app: 'listed' });
    expect(await getIntegration(integration.id)).toMatchObject({ status: 200, body: { integration } });
    const list = await call('GET', `/api/v1/workspace/${projectId}/integrations`);
    expect(list.status).toBe(200);
    expect(list.body.integrations).toContainEqual(integration);
  });

  test.each([
    ['an unknown integration', `/api/v1/integration/${UNKNOWN_ID}`],
    ['a non-UUID integration id', '/api/v1/integration/nope'],
    ['an unknown project', `/api/v1/workspace/${UNKNOWN_ID}/integrations`],
    ['a non-UUID project id', '/api/v1/workspace/nope/integrations'],
  ])('%s → 404', async (_name, url) => {
    expect((await call('GET', url)).status).toBe(404);
  });
});

describe('update integration (PATCH /api/v1/integration/:id, op 1)', () => {
  let integration: any;
  beforeAll(async () => {
    await makeFolder('/patch/kept');
    await makeFolder('/moved', 'prod');
    integration = await newIntegration({ secretPath: '/patch/kept', app: 'before', metadata: { secretPrefix: 'A_', shouldAutoRedeploy: true } });
  });

  test('isActive false pauses and true resumes; each is audited and recorded as a change', async () => {
    const before = await revision();
    const paused = await patchIntegration(integration.id, { isActive: false });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ integration: { ...integration, isActive: false, updatedAt: expect.any(String) } });
    expect((await getIntegration(integration.id)).body.integration.isActive).toBe(false);
    const resumed = await patchIntegration(integration.id, { isActive: true });
    expect(resumed.body.integration.isActive).toBe(true);
    expect(await changesSince(before)).toEqual([change('dev', '/patch/kept'), change('dev', '/patch/kept')]);
    expect(await auditMetadata('update-integration')).toEqual(
      expect.arrayContaining([
        { integrationId: integration.id, integration: 'github', environment: 'dev', secretPath: '/patch/kept', isActive: false, app: 'before' },
        { integrationId: integration.id, integration: 'github', environment: 'dev', secretPath: '/patch/kept', isActive: true, app: 'before' },
      ]),
    );
  });

  test('omitting secretPath keeps the stored path (the reference resets it to "/")', async () => {
    const response = await patchIntegration(integration.id, { isActive: true, app: 'after', appId: 'app-2', owner: 'me', targetEnvironment: 'preview' });
    expect(response.status).toBe(200);
    expect(response.body.integration).toMatchObject({
      secretPath: '/patch/kept',
      envId: envIds.dev,
      app: 'after',
      appId: 'app-2',
      owner: 'me',
      targetEnvironment: 'preview',
    });
  });

  test('metadata is merged key by key into the stored metadata', async () => {
    const response = await patchIntegration(integration.id, { isActive: true, metadata: { secretPrefix: 'B_', secretSuffix: '_S', custom: 1 } });
    expect(response.body.integration.metadata).toEqual({ secretPrefix: 'B_', secretSuffix: '_S', shouldAutoRedeploy: true, custom: 1 });
    expect((await patchIntegration(integration.id, { isActive: true })).body.integration.metadata).toEqual(response.body.integration.metadata);
  });

  test('environment and secretPath move the source; changes name the old and the new place', async () => {
    const before = await revision();
    const response = await patchIntegration(integration.id, { isActive: true, environment: 'prod', secretPath: 'moved/' });
    expect(response.status).toBe(200);
    expect(response.body.integration).toMatchObject({ envId: envIds.prod, secretPath: '/moved', environment: { slug: 'prod', name: 'Production', id: envIds.prod } });
    expect(await changesSince(before)).toEqual([change('dev', '/patch/kept'), change('prod', '/moved')]);
    const back = await patchIntegration(integration.id, { isActive: true, environment: 'dev', secretPath: '/patch/kept' });
    expect(back.body.integration).toMatchObject({ envId: envIds.dev, secretPath: '/patch/kept', environment: { slug: 'dev' } });
  });

  test.each([
    ['a missing folder in the new environment', 404, { isActive: true, environment: 'staging', secretPath: '/moved' }],
    ['a new environment without the kept path', 404, { isActive: true, environment: 'staging' }],
    ['a missing folder', 404, { isActive: true, secretPath: '/nowhere' }],
    ['an unknown environment', 404, { isActive: true, environment: 'nope' }],
    ['an invalid path', 400, { isActive: true, secretPath: '/a b' }],
    ['a missing isActive', 422, { app: 'x' }],
    ['an empty body', 422, {}],
    ['isActive of the wrong type', 422, { isActive: 'false' }],
    ['app of the wrong type', 422, { isActive: true, app: 5 }],
    ['metadata of the wrong type', 422, { isActive: true, metadata: [] }],
  ])('%s → %i, database unchanged', async (_name, status, body) => {
    await expectUnchanged(() => patchIntegration(integration.id, body), status);
  });

  test.each([
    ['an unknown integration', UNKNOWN_ID],
    ['a non-UUID integration id', 'nope'],
  ])('%s → 404, database unchanged', async (_name, id) => {
    await expectUnchanged(() => patchIntegration(id, { isActive: false }), 404);
  });
});

describe('delete and sync', () => {
  test('DELETE returns the integration, audits, records a change; a second DELETE is 404', async () => {
    const integration = await newIntegration({ app: 'gone' });
    const before = await revision();
    const response = await call('DELETE', `/api/v1/integration/${integration.id}`, { query: { shouldDeleteIntegrationSecrets: 'true' } });
    expect(response).toMatchObject({ status: 200, body: { integration } });
    expect((await getIntegration(integration.id)).status).toBe(404);
    expect(await changesSince(before)).toEqual([change('dev', '/')]);
    expect(await auditMetadata('delete-integration')).toContainEqual({
      integrationId: integration.id,
      integration: 'github',
      environment: 'dev',
      secretPath: '/',
      app: 'gone',
      shouldDeleteIntegrationSecrets: true,
    });
    await expectUnchanged(() => call('DELETE', `/api/v1/integration/${integration.id}`), 404);
    await expectUnchanged(() => call('DELETE', '/api/v1/integration/nope'), 404);
  });

  test('DELETE with an invalid shouldDeleteIntegrationSecrets → 422, database unchanged', async () => {
    const integration = await newIntegration();
    await expectUnchanged(() => call('DELETE', `/api/v1/integration/${integration.id}`, { query: { shouldDeleteIntegrationSecrets: 'maybe' } }), 422);
  });

  test('POST sync audits and records a change so the operator syncs again', async () => {
    const integration = await newIntegration({ app: 'synced' });
    const before = await revision();
    const response = await call('POST', `/api/v1/integration/${integration.id}/sync`);
    expect(response).toMatchObject({ status: 200, body: { integration } });
    expect(await changesSince(before)).toEqual([change('dev', '/')]);
    expect(await auditMetadata('manual-sync-integration')).toContainEqual({
      integrationId: integration.id,
      integration: 'github',
      environment: 'dev',
      secretPath: '/',
      app: 'synced',
    });
    await expectUnchanged(() => call('POST', `/api/v1/integration/${UNKNOWN_ID}/sync`), 404);
    await expectUnchanged(() => call('POST', '/api/v1/integration/nope/sync'), 404);
  });
});

describe('in-process operator calls', () => {
  let operatorProjectId: string;
  beforeAll(async () => {
    operatorProjectId = (await call('POST', '/api/v2/workspace', { body: { projectName: 'Operated', slug: 'operated-project' } })).body.project.id;
  });
  const managed = (managedBy: string, extra: Record<string, unknown> = {}) => ({
    managedBy,
    projectId: operatorProjectId,
    environment: 'dev',
    secretPath: '/',
    app: 'app-secret',
    owner: 'apps',
    targetEnvironment: 'apps',
    ...extra,
  });
  const operatorDev = () =>
    app.database.db.selectFrom('projectEnvironments').select('id').where('projectId', '=', operatorProjectId).where('slug', '=', 'dev').executeTakeFirstOrThrow();
  const kubernetesAuths = () =>
    app.database.db.selectFrom('integrationAuths').select('id').where('projectId', '=', operatorProjectId).where('integration', '=', 'kubernetes').execute();

  test('ensureKubernetesAuth creates one auth, even under concurrency, and returns it again', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => app.services.integrationAuths.ensureKubernetesAuth(actor, operatorProjectId)));
    expect(new Set(results.map((result) => result.id)).size).toBe(1);
    expect(await kubernetesAuths()).toEqual([{ id: results[0]!.id }]);
    expect(await app.services.integrationAuths.ensureKubernetesAuth(actor, operatorProjectId)).toEqual(results[0]);
    await expect(app.services.integrationAuths.ensureKubernetesAuth(actor, UNKNOWN_ID)).rejects.toMatchObject({ statusCode: 404 });
  });

  test('upsertManaged creates once; an identical call writes nothing; it returns what GET returns', async () => {
    const before = await revision();
    const created = await app.services.integrations.upsertManaged(actor, managed('apps/web'));
    expect(created).toMatchObject({ integration: 'kubernetes', isActive: true, app: 'app-secret', owner: 'apps', targetEnvironment: 'apps', secretPath: '/' });
    expect(created.integrationAuthId).toBe((await kubernetesAuths())[0]!.id);
    expect(await app.services.integrations.getById(actor, created.id)).toEqual(created);
    expect((await getIntegration(created.id)).body.integration).toEqual(created);
    expect(await changesSince(before)).toEqual([{ ...change('dev', '/'), projectId: operatorProjectId, environmentId: expect.any(String) }]);

    const snapshot = await snapshotDatabase(app.database);
    expect(await app.services.integrations.upsertManaged(actor, managed('apps/web'))).toEqual(created);
    expect(await snapshotDatabase(app.database)).toEqual(snapshot);
  });

  test('concurrent first upserts of one resource make one record', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => app.services.integrations.upsertManaged(actor, managed('apps/race'))));
    expect(new Set(results.map((result) => result.id)).size).toBe(1);
    expect(await app.database.db.selectFrom('integrations').select('id').where('managedBy', '=', 'apps/race').execute()).toHaveLength(1);
  });

  test('isActive undefined leaves the stored value; a given value is applied', async () => {
    const record = await app.services.integrations.upsertManaged(actor, managed('apps/toggle'));
    expect((await patchIntegration(record.id, { isActive: false })).body.integration.isActive).toBe(false);
    expect((await app.services.integrations.upsertManaged(actor, managed('apps/toggle'))).isActive).toBe(false);
    expect((await app.services.integrations.upsertManaged(actor, managed('apps/toggle', { isActive: true }))).isActive).toBe(true);
    expect((await app.services.integrations.upsertManaged(actor, managed('apps/toggle'))).isActive).toBe(true);
    expect((await app.services.integrations.upsertManaged(actor, managed('apps/toggle', { isActive: false }))).isActive).toBe(false);
  });

  test('a changed source updates the record and records the old and new place; a missing folder is 404', async () => {
    await call('POST', '/api/v1/folders', { body: { workspaceId: operatorProjectId, environment: 'staging', name: 'web', path: '/' } });
    const record = await app.services.integrations.upsertManaged(actor, managed('apps/mover'));
    const before = await revision();
    const moved = await app.services.integrations.upsertManaged(actor, managed('apps/mover', { environment: 'staging', secretPath: 'web/' }));
    expect(moved).toMatchObject({ id: record.id, secretPath: '/web', environment: { slug: 'staging' } });
    expect((await changesSince(before)).map((row) => `${row.environmentSlug}:${row.secretPath}`)).toEqual(['dev:/', 'staging:/web']);
    const snapshot = await snapshotDatabase(app.database);
    await expect(app.services.integrations.upsertManaged(actor, managed('apps/mover', { secretPath: '/missing' }))).rejects.toBeInstanceOf(AppError);
    await expect(app.services.integrations.upsertManaged(actor, managed('apps/mover', { environment: 'nope' }))).rejects.toMatchObject({ statusCode: 404 });
    expect(await snapshotDatabase(app.database)).toEqual(snapshot);
  });

  // expectNew: the operator's hint that the resource's status names no record yet (the insert is tried first)
  const upsertNew = (managedBy: string, extra: Record<string, unknown> = {}) =>
    app.services.integrations.upsertManagedRecord(actor, managed(managedBy, extra), { expectNew: true }).then(({ response }) => response);

  test('expectNew makes the record an upsert makes, in a project that has no kubernetes auth yet too, audited alike', async () => {
    const fresh = (await call('POST', '/api/v2/workspace', { body: { projectName: 'Fresh', slug: 'expect-new-fresh' } })).body.project.id;
    const before = await revision();
    const created = await upsertNew('fresh/web', { projectId: fresh });
    const [auth] = await app.database.db.selectFrom('integrationAuths').select('id').where('projectId', '=', fresh).where('integration', '=', 'kubernetes').execute();
    expect(created).toMatchObject({ integration: 'kubernetes', isActive: true, app: 'app-secret', owner: 'apps', secretPath: '/', integrationAuthId: auth!.id });
    expect(await app.services.integrations.getById(actor, created.id)).toEqual(created);
    expect(await changesSince(before)).toEqual([{ ...change('dev', '/'), projectId: fresh, environmentId: expect.any(String) }]);
    expect(await auditMetadata('create-integration')).toContainEqual(expect.objectContaining({ integrationId: created.id }));
    // the next record of the project takes that auth, in the insert's own statement
    const second = await upsertNew('fresh/api', { projectId: fresh, app: 'api-secret' });
    expect(second.integrationAuthId).toBe(auth!.id);
    expect(await app.database.db.selectFrom('integrationAuths').select('id').where('projectId', '=', fresh).execute()).toHaveLength(1);
  });

  test('expectNew on a record that exists finds it: unchanged writes nothing, changed is updated, never a second record', async () => {
    const record = await app.services.integrations.upsertManaged(actor, managed('apps/known'));
    const snapshot = await snapshotDatabase(app.database);
    expect(await upsertNew('apps/known')).toEqual(record);
    expect(await snapshotDatabase(app.database)).toEqual(snapshot);
    const updated = await upsertNew('apps/known', { app: 'renamed-secret' });
    expect(updated).toMatchObject({ id: record.id, app: 'renamed-secret' });
    expect(await auditMetadata('update-integration')).toContainEqual(expect.objectContaining({ integrationId: record.id, app: 'renamed-secret' }));
    expect(await app.database.db.selectFrom('integrations').select('id').where('managedBy', '=', 'apps/known').execute()).toHaveLength(1);
  });

  test('concurrent first upserts with expectNew make one record; a missing source is a 404 that writes nothing', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => upsertNew('apps/new-race')));
    expect(new Set(results.map((result) => result.id)).size).toBe(1);
    expect(await app.database.db.selectFrom('integrations').select('id').where('managedBy', '=', 'apps/new-race').execute()).toHaveLength(1);
    const snapshot = await snapshotDatabase(app.database);
    await expect(upsertNew('apps/new-missing', { secretPath: '/missing' })).rejects.toMatchObject({ statusCode: 404 });
    await expect(upsertNew('apps/new-missing', { environment: 'nope' })).rejects.toMatchObject({ statusCode: 404 });
    expect(await snapshotDatabase(app.database)).toEqual(snapshot);
  });

  test('concurrent first upserts with expectNew of many resources, in a project without a kubernetes auth: one auth, every record on it', async () => {
    const fresh = (await call('POST', '/api/v2/workspace', { body: { projectName: 'Crowd', slug: 'expect-new-crowd' } })).body.project.id;
    const names = Array.from({ length: 8 }, (_, index) => `crowd/app-${index}`);
    const created = await Promise.all(names.map((name) => upsertNew(name, { projectId: fresh })));
    const auths = await app.database.db.selectFrom('integrationAuths').select('id').where('projectId', '=', fresh).execute();
    expect(auths).toHaveLength(1);
    expect(new Set(created.map((record) => record.integrationAuthId))).toEqual(new Set([auths[0]!.id]));
    const stored = await app.database.db.selectFrom('integrations').select('managedBy').where('managedBy', 'in', names).execute();
    expect(stored.map((row) => row.managedBy).sort()).toEqual(names);
    expect((await auditMetadata('create-integration')).filter((entry) => created.some((record) => record.id === entry.integrationId))).toHaveLength(8);
  });

  test('expectNew on a record kept in another project moves it there', async () => {
    const other = (await call('POST', '/api/v2/workspace', { body: { projectName: 'Elsewhere', slug: 'expect-new-elsewhere' } })).body.project.id;
    const record = await app.services.integrations.upsertManaged(actor, managed('apps/wanderer', { projectId: other }));
    const moved = await upsertNew('apps/wanderer');
    expect(moved.id).toBe(record.id);
    const dev = await operatorDev();
    expect((await app.services.integrations.getById(actor, record.id)).envId).toBe(dev.id);
  });

  // A sync result decided on the record as read is written with its COMMIT, its values in the statement's text (a
  // script): text that could end a literal or run a statement of its own is stored exactly as sent.
  test('a sync result with hostile text in its message and in its report is stored exactly, its report changed once', async () => {
    const record = await app.services.integrations.upsertManaged(actor, managed('apps/hostile'));
    const dev = await operatorDev();
    const hostile = ["O'Reilly", "'); COMMIT; DELETE FROM integrations; --", "\\'; DROP TABLE change_log; --", '$$ dollar $$', 'ünïcødé ✓ 🎉', 'new\nline'];
    const report = {
      carried: [{ environment: 'dev', path: '/', keys: hostile.map((key) => ({ key })) }],
      templated: 0,
      carriedTruncated: false,
      readers: null,
      readersTruncated: false,
    };
    const syncedRevision = await revision();
    const result = { isSynced: false, syncMessage: hostile.join(' | '), syncedRevision, places: [{ environmentId: dev.id, path: '/', recursive: false }] };
    const before = await revision();
    await app.services.integrations.recordSyncResultAs(actor, record.id, { ...result, targetKeys: report });
    const stored = await app.database.db
      .selectFrom('integrations')
      .leftJoin('integrationTargetKeys', 'integrationTargetKeys.integrationId', 'integrations.id')
      .select(['isSynced', 'syncMessage', 'syncedRevision', 'readPlaces', 'lastUsed', 'report'])
      .where('integrations.id', '=', record.id)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ isSynced: false, syncMessage: result.syncMessage, readPlaces: result.places, report });
    expect(Number(stored.syncedRevision)).toBe(syncedRevision);
    expect(stored.lastUsed).toBeInstanceOf(Date);
    expect(await changesSince(before)).toHaveLength(1);
    // the same report again: no change row; a new outcome alone is stored
    const again = await revision();
    await app.services.integrations.recordSyncResultAs(actor, record.id, { ...result, isSynced: true, syncMessage: null, targetKeys: report });
    expect(await changesSince(again)).toEqual([]);
    expect(await app.services.integrations.getById(actor, record.id)).toMatchObject({ isSynced: true, syncMessage: null });
  });

  test('recordSyncResult stores the outcome without a change row or an audit entry', async () => {
    const record = await app.services.integrations.upsertManaged(actor, managed('apps/synced'));
    const before = await revision();
    const audits = (await app.database.db.selectFrom('auditLogs').select('id').execute()).length;
    await app.services.integrations.recordSyncResult(record.id, { isSynced: false, syncMessage: 'Secret conflict', syncedRevision: null });
    expect(await app.services.integrations.getById(actor, record.id)).toMatchObject({ isSynced: false, syncMessage: 'Secret conflict', lastUsed: expect.any(String) });
    await app.services.integrations.recordSyncResult(record.id, { isSynced: true, syncMessage: null, syncedRevision: 42 });
    const row = await app.database.db.selectFrom('integrations').selectAll().where('id', '=', record.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ isSynced: true, syncMessage: null, syncedRevision: 42 });
    expect(Number(row.syncedRevision)).toBe(42);
    expect(row.updatedAt.toISOString()).toBe(record.updatedAt);
    await app.services.integrations.recordSyncResult(UNKNOWN_ID, { isSynced: true, syncMessage: null, syncedRevision: 1 });
    await app.services.integrations.recordSyncResult('nope', { isSynced: true, syncMessage: null, syncedRevision: 1 });
    expect(await changesSince(before)).toEqual([]);
    expect((await app.database.db.selectFrom('auditLogs').select('id').execute()).length).toBe(audits);
  });

  test('deleteManaged deletes the record with an audit entry and a change; absent is a no-op', async () => {
    const record = await app.services.integrations.upsertManaged(actor, managed('apps/deleted'));
    const before = await revision();
    await app.services.integrations.deleteManaged(actor, 'apps/deleted');
    expect((await getIntegration(record.id)).status).toBe(404);
    expect(await changesSince(before)).toHaveLength(1);
    expect(await auditMetadata('delete-integration')).toContainEqual(expect.objectContaining({ integrationId: record.id, integration: 'kubernetes' }));
    const snapshot = await snapshotDatabase(app.database);
    await app.services.integrations.deleteManaged(actor, 'apps/deleted');
    await app.services.integrations.deleteManaged(actor, 'apps/never-existed');
    expect(await snapshotDatabase(app.database)).toEqual(snapshot);
  });

  test('each record says where its Secret lives; one namespace and name in two clusters are two records', async () => {
    const local = await app.services.integrations.upsertManaged(actor, managed('shop/app'));
    expect(local.kubernetes).toEqual({ cluster: 'local', namespace: 'shop', name: 'app', secretName: 'app-secret', syncedRevision: null });
    // the same resource in cluster-b, as that cluster's operator keeps it; naming another cluster is refused
    const clusterB = { ...actor, cluster: 'cluster-b' };
    await expect(app.services.integrations.upsertManaged(actor, managed('shop/app', { cluster: 'cluster-b' }))).rejects.toMatchObject({ code: 'ClusterMismatch' });
    const remote = await app.services.integrations.upsertManaged(clusterB, managed('shop/app', { app: 'remote-secret' }));
    expect(remote.id).not.toBe(local.id);
    expect(remote.kubernetes).toEqual({ cluster: 'cluster-b', namespace: 'shop', name: 'app', secretName: 'remote-secret', syncedRevision: null });
    await app.services.integrations.recordSyncResult(remote.id, { isSynced: true, syncMessage: null, syncedRevision: 7 });

    // what a project admin reads: every synced Secret with its cluster and namespace
    const { integrations } = (await call('GET', `/api/v1/workspace/${operatorProjectId}/integrations`)).body;
    const placements = integrations
      .filter((record: { kubernetes: { namespace: string } | null }) => record.kubernetes?.namespace === 'shop')
      .map((record: { kubernetes: unknown }) => record.kubernetes);
    expect(placements).toEqual([
      { cluster: 'local', namespace: 'shop', name: 'app', secretName: 'app-secret', syncedRevision: null },
      { cluster: 'cluster-b', namespace: 'shop', name: 'app', secretName: 'remote-secret', syncedRevision: 7 },
    ]);
    // a record no Integration resource keeps says so
    expect(
      integrations
        .filter((record: { integration: string }) => record.integration !== 'kubernetes')
        .every((record: { kubernetes: unknown }) => record.kubernetes === null),
    ).toBe(true);

    await app.services.integrations.deleteManaged(clusterB, 'shop/app');
    expect((await getIntegration(remote.id)).status).toBe(404);
    expect((await getIntegration(local.id)).status).toBe(200);
  });

  // a reconcile's read of its record goes with the reads of the reconciles under way at the same time (one statement;
  // statements-per-request.test.ts counts them)
  test('concurrent upserts of many records, in two clusters, each answer their own record, names with array-literal characters too', async () => {
    const clusterB = { ...actor, cluster: 'cluster-b' };
    const names = ['batch/a', 'batch/quote"d', 'batch/{brace,comma}', 'batch/back\\slash', 'batch/NULL', 'batch/ spaced ', 'batch/ünï'];
    for (const name of names) {
      await app.services.integrations.upsertManaged(actor, managed(name, { app: `local-${name}` }));
      await app.services.integrations.upsertManaged(clusterB, managed(name, { app: `b-${name}` }));
    }
    const calls = (list: string[]) =>
      list.flatMap((name) => [
        { caller: actor, name, app: `local-${name}` },
        { caller: clusterB, name, app: `b-${name}` },
      ]);
    const upsertAll = (all: ReturnType<typeof calls>) =>
      Promise.all(all.map(({ caller, name, app: secret }) => app.services.integrations.upsertManagedRecord(caller, managed(name, { app: secret }))));
    const expectOwn = async (all: ReturnType<typeof calls>, answers: Awaited<ReturnType<typeof upsertAll>>) => {
      for (const [index, { caller, name, app: secret }] of all.entries()) {
        const { response, record } = answers[index]!;
        expect(response.app).toBe(secret);
        expect(response.kubernetes).toMatchObject({ cluster: caller.cluster ?? 'local', namespace: 'batch', name: name.slice('batch/'.length) });
        expect((await getIntegration(response.id)).body.integration.app).toBe(secret);
        // found unchanged, or made now: the record is handed out
        expect(record?.row.id).toBe(response.id);
      }
    };
    const unchanged = calls(names);
    await expectOwn(unchanged, await upsertAll(unchanged));
    const mixed = calls(['batch/a', 'batch/never-made', 'batch/NULL']);
    await expectOwn(mixed, await upsertAll(mixed));
  });

  test('an upsert made after a change of its record sees the change and sets the record back', async () => {
    const first = await app.services.integrations.upsertManaged(actor, managed('batch/seen', { app: 'before' }));
    expect((await app.services.integrations.upsertManaged(actor, managed('batch/seen', { app: 'changed' }))).app).toBe('changed');
    // the change is committed; an upsert asking for 'before' again finds the record changed and sets it back
    const again = await app.services.integrations.upsertManagedRecord(actor, managed('batch/seen', { app: 'before' }));
    expect(again.response.app).toBe('before');
    expect(again.record).toBeUndefined();
    expect((await getIntegration(first.id)).body.integration.app).toBe('before');
  });

  test('the operator calls are audited as k8-operator', async () => {
    const rows = await app.database.db.selectFrom('auditLogs').select(['userAgentType', 'eventType']).where('projectId', '=', operatorProjectId).execute();
    const operated = rows.filter((row) => row.userAgentType === 'k8-operator').map((row) => row.eventType);
    expect(new Set(operated)).toEqual(new Set(['authorize-integration', 'create-integration', 'update-integration', 'delete-integration']));
  });
});

test('no credential reaches a response, the audit log or a log line', async () => {
  const audit = JSON.stringify(await app.database.db.selectFrom('auditLogs').select(['eventMetadata', 'actorMetadata']).execute());
  for (const value of Object.values(SENTINEL)) {
    expect(responses.filter((body) => body.includes(value))).toEqual([]);
    expect(audit.includes(value)).toBe(false);
    expect(app.logs.filter((line) => line.includes(value))).toEqual([]);
  }
  expect(responses.length).toBeGreaterThan(50);
  expect(app.logs.length).toBeGreaterThan(0);
});
