import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Actor } from '../../src/actor/actor.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Contract tests for the clients that cannot be run here, one per request shape, built
 * from what each client's public source sends (paths, query strings with their empty
 * values, bodies, headers). Each is named with the client and version it comes from;
 * README "Infisical clients" lists them with the source files they were read from.
 */

const app: TestApp = await startTestApp();
let fx: AccessFixture;
let token: string;
let projectId: string;
let projectSlug: string;
let clientId: string;
let clientSecret: string;

/** A request exactly as a client writes it: raw path and query string, raw body, its headers. */
async function send(method: string, url: string, options: { headers?: Record<string, string>; body?: unknown; bearer?: string | null } = {}) {
  const headers: Record<string, string> = { ...options.headers };
  const bearer = options.bearer === undefined ? token : options.bearer;
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await app.app.inject({
    method: method as 'GET',
    url,
    headers,
    ...(options.body === undefined ? {} : { payload: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }),
  });
  const text = response.body;
  const isJson = String(response.headers['content-type'] ?? '').includes('json');
  return { status: response.statusCode, headers: response.headers, body: text && isJson ? JSON.parse(text) : text };
}

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

beforeAll(async () => {
  fx = await accessFixture(app, 'client-contracts');
  projectId = fx.projectId;
  projectSlug = fx.projectSlug;
  const machine = await fx.identity('client-machine', 'member', 'member');
  ({ clientId, clientSecret } = await fx.universalAuth(machine.id));
  token = machine.token;
  const base = { workspaceId: projectId, environment: 'dev' };
  await fx.call('POST', '/api/v1/folders', { ...base, path: '/', name: 'app' });
  await fx.call('POST', '/api/v1/folders', { ...base, path: '/', name: 'shared' });
  await fx.call('POST', '/api/v3/secrets/raw/DB_HOST', { ...base, secretValue: 'db.internal' });
  await fx.call('POST', '/api/v3/secrets/raw/DB_URL', { ...base, secretValue: 'postgres://${DB_HOST}/app' });
  await fx.call('POST', '/api/v3/secrets/raw/FROM_IMPORT', { ...base, secretPath: '/shared', secretValue: 'imported-value' });
  await fx.call('POST', '/api/v3/secrets/raw/NESTED', { ...base, secretPath: '/app', secretValue: 'nested-value' });
  await fx.call('POST', '/api/v1/secret-imports', { ...base, path: '/', import: { environment: 'dev', path: '/shared' } });
}, 120_000);
afterAll(async () => app?.close());

describe('Infisical CLI v0.43.121 (v4 secret reads since 0.43.99; packages/api/api.go)', () => {
  const cli = { 'user-agent': 'cli', accept: 'application/json' };

  test('login --method=universal-auth: POST /api/v1/auth/universal-auth/login/ (trailing slash)', async () => {
    const response = await send('POST', '/api/v1/auth/universal-auth/login/', { bearer: null, headers: cli, body: { clientSecret, clientId } });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ accessToken: expect.any(String), expiresIn: expect.any(Number), tokenType: 'Bearer' });
  });

  test('secrets / export / run / secrets set: GET /api/v4/secrets with every flag spelled out and a JSON body on the GET', async () => {
    const query = q({
      projectId,
      environment: 'dev',
      secretPath: '/',
      includeImports: 'true',
      recursive: 'false',
      expandSecretReferences: 'true',
      includePersonalOverrides: 'false',
    });
    const body = {
      environment: 'dev',
      projectId,
      secretPath: '/',
      includeImports: true,
      recursive: false,
      expandSecretReferences: true,
      includePersonalOverrides: false,
    };
    const response = await send('GET', `/api/v4/secrets?${query}`, { headers: cli, body });
    expect(response.status).toBe(200);
    expect(response.headers.etag).toMatch(/^"/);
    const values = Object.fromEntries(response.body.secrets.map((secret: { secretKey: string; secretValue: string }) => [secret.secretKey, secret.secretValue]));
    expect(values).toEqual({ DB_HOST: 'db.internal', DB_URL: 'postgres://db.internal/app' });
    expect(response.body.imports).toEqual([
      expect.objectContaining({ secretPath: '/shared', environment: 'dev', secrets: [expect.objectContaining({ secretKey: 'FROM_IMPORT' })] }),
    ]);
  });

  test('secrets --recursive --tags: tagSlugs and recursive=true', async () => {
    const query = q({
      projectId,
      environment: 'dev',
      secretPath: '/',
      includeImports: 'false',
      recursive: 'true',
      expandSecretReferences: 'false',
      includePersonalOverrides: 'false',
    });
    const response = await send('GET', `/api/v4/secrets?${query}`, { headers: cli });
    expect(response.status).toBe(200);
    expect(response.body.secrets.map((secret: { secretKey: string }) => secret.secretKey).sort()).toEqual(['DB_HOST', 'DB_URL', 'FROM_IMPORT', 'NESTED']);
    expect(response.body.imports).toBeUndefined();
  });

  test('secrets get: GET /api/v4/secrets/{name} with type=shared and imports and references on', async () => {
    const query = q({ expandSecretReferences: 'true', includeImports: 'true', environment: 'dev', secretPath: '/', projectId, type: 'shared' });
    const body = { secretName: 'DB_URL', workspaceId: projectId, environment: 'dev', secretPath: '/' };
    const own = await send('GET', `/api/v4/secrets/DB_URL?${query}`, { headers: cli, body });
    expect(own.status).toBe(200);
    expect(own.body.secret).toMatchObject({ secretKey: 'DB_URL', secretValue: 'postgres://db.internal/app', secretValueHidden: false });
    const imported = await send('GET', `/api/v4/secrets/FROM_IMPORT?${query}`, { headers: cli });
    expect(imported.body.secret).toMatchObject({ secretKey: 'FROM_IMPORT', secretValue: 'imported-value' });
  });

  test('secrets set: POST then PATCH /api/v3/secrets/raw/{name} as the CLI writes them', async () => {
    const created = await send('POST', '/api/v3/secrets/raw/CLI_SET', {
      headers: cli,
      body: { workspaceId: projectId, type: 'shared', environment: 'dev', secretPath: '/', secretValue: 'one' },
    });
    expect(created.status).toBe(200);
    const updated = await send('PATCH', '/api/v3/secrets/raw/CLI_SET', {
      headers: cli,
      body: { workspaceId: projectId, environment: 'dev', secretPath: '/', secretValue: 'two', type: 'shared' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.secret).toMatchObject({ secretKey: 'CLI_SET', secretValue: 'two', version: 2 });
  });

  test('secrets set --tags: GET /api/v1/projects/{id}/tags/slug/{slug}, 404, then POST /api/v1/projects/{id}/tags', async () => {
    const missing = await send('GET', `/api/v1/projects/${projectId}/tags/slug/backend`, { headers: cli });
    expect(missing.status).toBe(404);
    const created = await send('POST', `/api/v1/projects/${projectId}/tags`, { headers: cli, body: { slug: 'backend', color: '#0ea5e9' } });
    expect(created.status).toBe(200);
    expect(created.body.tag).toMatchObject({ id: expect.any(String), slug: 'backend', name: 'backend' });
    const found = await send('GET', `/api/v1/projects/${projectId}/tags/slug/backend`, { headers: cli });
    expect(found.body.tag.id).toBe(created.body.tag.id);
  });

  test('secrets delete: DELETE /api/v3/secrets/raw/{name} with secretName in the body', async () => {
    await send('POST', '/api/v3/secrets/raw/CLI_GONE', { headers: cli, body: { workspaceId: projectId, environment: 'dev', secretValue: 'x' } });
    const response = await send('DELETE', '/api/v3/secrets/raw/CLI_GONE', {
      headers: cli,
      body: { secretName: 'CLI_GONE', workspaceId: projectId, environment: 'dev', type: 'shared', secretPath: '/' },
    });
    expect(response.status).toBe(200);
  });

  test('folders get / create / delete: `directory` in the query and in the delete body', async () => {
    const listed = await send('GET', `/api/v1/folders?${q({ environment: 'dev', workspaceId: projectId, directory: '/' })}`, { headers: cli });
    expect(listed.status).toBe(200);
    expect(listed.body.folders.map((folder: { name: string }) => folder.name).sort()).toEqual(['app', 'shared']);
    const created = await send('POST', '/api/v1/folders', { headers: cli, body: { name: 'cli-made', workspaceId: projectId, environment: 'dev', path: '/app' } });
    expect(created.status).toBe(200);
    const inside = await send('GET', `/api/v1/folders?${q({ environment: 'dev', workspaceId: projectId, directory: '/app' })}`, { headers: cli });
    expect(inside.body.folders.map((folder: { name: string }) => folder.name)).toEqual(['cli-made']);
    const deleted = await send('DELETE', '/api/v1/folders/cli-made', {
      headers: cli,
      body: { folderName: 'cli-made', workspaceId: projectId, environment: 'dev', directory: '/app' },
    });
    expect(deleted.status).toBe(200);
    expect(deleted.body.folder.name).toBe('cli-made');
  });

  test('folders get with an empty directory= lists the root', async () => {
    const listed = await send('GET', `/api/v1/folders?${q({ environment: 'dev', workspaceId: projectId, directory: '' })}`, { headers: cli });
    expect(listed.status).toBe(200);
    expect(listed.body.folders.length).toBe(2);
  });
});

describe('Infisical Go SDK v0.8.0 (packages/api/secrets, packages/api/auth)', () => {
  const sdk = { 'user-agent': 'infisical-go-sdk' };
  const listQuery = (extra: Record<string, string> = {}) =>
    q({
      environment: 'dev',
      expandSecretReferences: 'false',
      include_imports: 'false',
      recursive: 'false',
      secretPath: '/',
      workspaceId: projectId,
      workspaceSlug: '',
      ...extra,
    });

  test('ListSecrets: an empty workspaceSlug= beside workspaceId is ignored', async () => {
    const response = await send('GET', `/api/v3/secrets/raw?${listQuery()}`, { headers: sdk });
    expect(response.status).toBe(200);
    expect(response.body.secrets.map((secret: { secretKey: string }) => secret.secretKey)).toEqual(expect.arrayContaining(['DB_HOST', 'DB_URL']));
  });

  test('ListSecrets with IfNoneMatch: 304 while nothing changed, 200 with a new ETag after a change', async () => {
    const first = await send('GET', `/api/v3/secrets/raw?${listQuery()}`, { headers: sdk });
    const etag = String(first.headers.etag);
    const again = await send('GET', `/api/v3/secrets/raw?${listQuery()}`, { headers: { ...sdk, 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    await fx.call('POST', '/api/v3/secrets/raw/ETAG_CHANGE', { workspaceId: projectId, environment: 'dev', secretValue: 'new' });
    const changed = await send('GET', `/api/v3/secrets/raw?${listQuery()}`, { headers: { ...sdk, 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    await fx.call('DELETE', '/api/v3/secrets/raw/ETAG_CHANGE', { workspaceId: projectId, environment: 'dev' });
  });

  test('RenewAccessToken: POST /api/v1/auth/token/renew with the token in the body and no Authorization header', async () => {
    const login = await fx.login(clientId, clientSecret);
    const response = await send('POST', '/api/v1/auth/token/renew', { bearer: null, headers: sdk, body: { accessToken: login.body.accessToken } });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ accessToken: login.body.accessToken, tokenType: 'Bearer' });
  });

  test('RevokeAccessToken without a header revokes the body token; a forged one is refused', async () => {
    const login = await fx.login(clientId, clientSecret);
    const revoked = await send('POST', '/api/v1/auth/token/revoke', { bearer: null, body: { accessToken: login.body.accessToken } });
    expect(revoked.status).toBe(200);
    const after = await send('GET', `/api/v3/secrets/raw?${listQuery()}`, { bearer: login.body.accessToken });
    expect(after.status).toBe(401);
    const forged = await send('POST', '/api/v1/auth/token/renew', { bearer: null, body: { accessToken: `${login.body.accessToken.slice(0, -4)}AAAA` } });
    expect(forged.status).toBe(403);
    const missing = await send('POST', '/api/v1/auth/token/renew', { bearer: null, body: {} });
    expect(missing.status).toBe(422);
  });
});

describe("Infisical's Kubernetes operator v0.11.5 (internal/api, internal/util)", () => {
  const operator = { 'user-agent': 'k8-operator/v0.11.5', accept: 'application/json' };

  test('v1alpha1 by projectId: go-sdk ListSecrets with include_imports and expandSecretReferences, then If-None-Match', async () => {
    const query = q({
      environment: 'dev',
      expandSecretReferences: 'true',
      include_imports: 'true',
      recursive: 'false',
      secretPath: '/',
      workspaceId: projectId,
      workspaceSlug: '',
    });
    const first = await send('GET', `/api/v3/secrets/raw?${query}`, { headers: operator });
    expect(first.status).toBe(200);
    expect(first.body.imports).toHaveLength(1);
    const again = await send('GET', `/api/v3/secrets/raw?${query}`, { headers: { ...operator, 'if-none-match': String(first.headers.etag) } });
    expect(again.status).toBe(304);
  });

  test('v1alpha1 by projectSlug: GET /api/v2/workspace/{slug} answers the bare project', async () => {
    const response = await send('GET', `/api/v2/workspace/${projectSlug}`, { headers: operator });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: projectId,
      slug: projectSlug,
      orgId: fx.orgId,
      environments: expect.arrayContaining([expect.objectContaining({ slug: 'dev' })]),
    });
  });

  test('CallGetProjectByID: GET /api/v1/workspace/{id} answers {workspace}', async () => {
    const response = await send('GET', `/api/v1/workspace/${projectId}`, { headers: operator });
    expect(response.status).toBe(200);
    expect(response.body.workspace).toMatchObject({ id: projectId, slug: projectSlug });
  });

  test('v1beta1 FindProjectBySlug: GET /api/v1/projects/slug/{slug}; an unknown slug is 404', async () => {
    const response = await send('GET', `/api/v1/projects/slug/${projectSlug}`, { headers: operator });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: projectId, name: 'Access', slug: projectSlug });
    expect((await send('GET', '/api/v1/projects/slug/no-such-project', { headers: operator })).status).toBe(404);
  });

  test('v1beta1 InfisicalStaticSecret: GET /api/v4/secrets?projectId&environment&secretPath&recursive (+tagSlugs)', async () => {
    const plain = await send('GET', `/api/v4/secrets?${q({ projectId, environment: 'dev', secretPath: '/app', recursive: 'false' })}`, { headers: operator });
    expect(plain.status).toBe(200);
    expect(plain.body.secrets).toEqual([expect.objectContaining({ secretKey: 'NESTED', secretValue: 'nested-value', secretPath: '/app' })]);
    const tagged = await send('GET', `/api/v4/secrets?${q({ projectId, environment: 'dev', secretPath: '/', recursive: 'true', tagSlugs: 'backend' })}`, {
      headers: operator,
    });
    expect(tagged.status).toBe(200);
    expect(tagged.body.secrets).toEqual([]);
  });
});

describe("External Secrets Operator's Infisical provider (providers/v1/infisical, go-sdk v0.8.0)", () => {
  const eso = { 'user-agent': 'infisical-go-sdk' };

  test('store validation: ListSecrets by slug sends workspaceId= empty beside workspaceSlug', async () => {
    const query = q({
      environment: 'dev',
      expandSecretReferences: 'false',
      include_imports: 'false',
      recursive: 'false',
      secretPath: '/',
      workspaceId: '',
      workspaceSlug: projectSlug,
    });
    const response = await send('GET', `/api/v3/secrets/raw?${query}`, { headers: eso });
    expect(response.status).toBe(200);
    expect(response.body.secrets.length).toBeGreaterThan(0);
  });

  test('dataFrom.find: recursive listing by slug with imports', async () => {
    const query = q({
      environment: 'dev',
      expandSecretReferences: 'true',
      include_imports: 'true',
      recursive: 'true',
      secretPath: '/',
      workspaceId: '',
      workspaceSlug: projectSlug,
    });
    const response = await send('GET', `/api/v3/secrets/raw?${query}`, { headers: eso });
    expect(response.status).toBe(200);
    expect(response.body.secrets.map((secret: { secretKey: string }) => secret.secretKey)).toContain('NESTED');
  });

  test('data[].remoteRef: Retrieve by slug through imports; a missing key is 404 (NoSecretErr)', async () => {
    const query = (_key: string) =>
      q({ environment: 'dev', expandSecretReferences: 'true', include_imports: 'true', secretPath: '/', type: 'shared', workspaceSlug: projectSlug });
    const found = await send('GET', `/api/v3/secrets/raw/FROM_IMPORT?${query('FROM_IMPORT')}`, { headers: eso });
    expect(found.status).toBe(200);
    expect(found.body.secret.secretValue).toBe('imported-value');
    expect((await send('GET', `/api/v3/secrets/raw/NOPE?${query('NOPE')}`, { headers: eso })).status).toBe(404);
  });

  test('PushSecret: slug look-up, then create, update and delete by workspaceId', async () => {
    const lookup = await send('GET', `/api/v1/projects/slug/${projectSlug}`, {});
    expect(lookup.body.id).toBe(projectId);
    const location = { workspaceId: lookup.body.id, environment: 'dev', secretPath: '/app' };
    expect((await send('POST', '/api/v3/secrets/raw/PUSHED', { headers: eso, body: { ...location, skipMultilineEncoding: true, secretValue: '{"a":1}' } })).status).toBe(
      200,
    );
    const updated = await send('PATCH', '/api/v3/secrets/raw/PUSHED', { headers: eso, body: { ...location, secretValue: '{"a":2}', skipMultilineEncoding: true } });
    expect(updated.body.secret).toMatchObject({ secretValue: '{"a":2}', skipMultilineEncoding: true });
    expect((await send('DELETE', '/api/v3/secrets/raw/PUSHED', { headers: eso, body: location })).status).toBe(200);
  });

  test('end of reconcile: RevokeAccessToken with its own token as bearer', async () => {
    const login = await fx.login(clientId, clientSecret);
    const response = await send('POST', '/api/v1/auth/token/revoke', { bearer: login.body.accessToken, headers: eso, body: { accessToken: login.body.accessToken } });
    expect(response.status).toBe(200);
  });
});

describe('v4 defaults and options (reference: listSecretsV4 / getSecretByNameV4)', () => {
  const list = (params: Record<string, string>) => send('GET', `/api/v4/secrets?${q({ projectId, environment: 'dev', ...params })}`);

  test('imports included and references expanded unless turned off; viewSecretValue=false masks values', async () => {
    const defaults = await list({});
    expect(defaults.body.imports).toHaveLength(1);
    expect(defaults.body.secrets.find((secret: { secretKey: string }) => secret.secretKey === 'DB_URL').secretValue).toBe('postgres://db.internal/app');
    const off = await list({ includeImports: 'false', expandSecretReferences: 'false' });
    expect(off.body.imports).toBeUndefined();
    expect(off.body.secrets.find((secret: { secretKey: string }) => secret.secretKey === 'DB_URL').secretValue).toBe('postgres://${DB_HOST}/app');
    const hidden = await list({ viewSecretValue: 'false' });
    expect(
      hidden.body.secrets.every((secret: { secretValue: string; secretValueHidden: boolean }) => secret.secretValueHidden && secret.secretValue !== 'db.internal'),
    ).toBe(true);
  });

  test('v4 writes go through the same rules, audit and change feed as v3', async () => {
    const before = await app.services.changes.latestRevision(app.database.db, projectId);
    const created = await send('POST', '/api/v4/secrets/V4_MADE', { body: { projectId, environment: 'dev', secretValue: 'v4' } });
    expect(created.status).toBe(200);
    const duplicate = await send('POST', '/api/v4/secrets/V4_MADE', { body: { projectId, environment: 'dev', secretValue: 'again' } });
    expect(duplicate.status).toBe(400);
    const batch = await send('PATCH', '/api/v4/secrets/batch', { body: { projectId, environment: 'dev', secrets: [{ secretKey: 'V4_MADE', secretValue: 'v4b' }] } });
    expect(batch.body.secrets[0]).toMatchObject({ secretKey: 'V4_MADE', secretValue: 'v4b', version: 2 });
    expect((await send('DELETE', '/api/v4/secrets/V4_MADE', { body: { projectId, environment: 'dev' } })).status).toBe(200);
    expect(await app.services.changes.latestRevision(app.database.db, projectId)).toBe(before + 3);
    const audit = await app.database.db.selectFrom('auditLogs').select('eventType').where('projectId', '=', projectId).orderBy('createdAt', 'desc').limit(3).execute();
    expect(audit.map((row) => row.eventType).sort()).toEqual(['create-secret', 'delete-secret', 'update-secrets']);
  });

  test('includePersonalOverrides: a user sees its override in place of the shared value; without it, only shared', async () => {
    const user = fx;
    const actor: Actor = {
      kind: 'user',
      id: user.userId,
      name: 'admin@example.com',
      orgId: user.orgId,
      orgRole: 'admin',
      tokenId: null,
      authMethod: 'password',
      ip: '127.0.0.1',
      userAgent: 'test',
      userAgentType: 'other',
    };
    await app.services.secrets.create(actor, {
      projectId,
      environment: 'dev',
      secretPath: '/',
      secretName: 'DB_HOST',
      secretValue: 'my-laptop',
      type: 'personal',
    });
    const base = { projectId, environment: 'dev', secretPath: '/', recursive: false, includeImports: false, expandSecretReferences: false };
    const priority = await app.services.secretReader.list(actor, { ...base, personalOverrides: 'priority' });
    expect(priority.secrets.filter((secret) => secret.secretKey === 'DB_HOST').map((secret) => [secret.type, secret.secretValue])).toEqual([['personal', 'my-laptop']]);
    const none = await app.services.secretReader.list(actor, { ...base, personalOverrides: 'none' });
    expect(none.secrets.filter((secret) => secret.secretKey === 'DB_HOST').map((secret) => secret.type)).toEqual(['shared']);
  });
});

describe('hostile input on the new routes: a 4xx in the documented shape, never a 5xx', () => {
  const cases: [string, string, unknown?][] = [
    ['GET', `/api/v4/secrets?projectId=${'%00'}&environment=dev`],
    ['GET', `/api/v4/secrets?projectId=PID&environment=dev%00`],
    ['GET', `/api/v4/secrets?projectId=PID&environment=dev&secretPath=%2Fa%00b`],
    ['GET', `/api/v4/secrets?projectId=PID&environment=${'x'.repeat(5000)}`],
    ['GET', '/api/v4/secrets?projectId=&environment='],
    ['GET', '/api/v4/secrets?projectId=not-a-uuid&environment=dev'],
    ['GET', '/api/v4/secrets?projectId=PID&environment=nope'],
    ['GET', '/api/v4/secrets?projectId=PID&environment=dev&recursive=yes'],
    ['GET', '/api/v4/secrets?projectId=PID&environment=dev&tagSlugs=%ED%A0%80'],
    ['GET', '/api/v4/secrets/%00?projectId=PID&environment=dev'],
    ['GET', '/api/v4/secrets/MISSING?projectId=PID&environment=dev&version=99999999999'],
    ['GET', `/api/v2/workspace/${'%00'}`],
    ['GET', `/api/v1/projects/slug/${'s'.repeat(1000)}`],
    ['POST', '/api/v4/secrets/X', { projectId: 'PID', environment: 'dev', secretValue: 'v', secretPath: '/a\u0000' }],
    ['POST', '/api/v4/secrets/batch', { projectId: 'PID', environment: 'dev', secrets: [] }],
    ['PATCH', '/api/v4/secrets/batch', { projectId: 'PID', environment: 'dev', secrets: [{ secretKey: '\ud800' }] }],
    ['DELETE', '/api/v4/secrets/X', { projectId: '00000000-0000-0000-0000-000000000000', environment: 'dev' }],
    ['POST', '/api/v1/events/subscribe/project-events', { projectId: 'PID', register: [] }],
    ['POST', '/api/v1/events/subscribe/project-events', { projectId: '00000000-0000-0000-0000-000000000000', register: [{ event: 'secret:update' }] }],
    ['POST', '/api/v1/events/subscribe/project-events', { projectId: 'PID', register: [{ event: 'secret:rotate' }] }],
    ['POST', '/api/v1/events/subscribe/project-events', { projectId: 'PID', register: [{ event: 'secret:update', conditions: { environmentSlug: '' } }] }],
    ['POST', '/api/v1/auth/token/renew', { accessToken: 'x'.repeat(5000) }],
    ['POST', '/api/v1/auth/token/revoke', { accessToken: '\u0000' }],
  ];
  test.each(cases.map(([method, url, body]) => ({ method, url, body, label: `${method} ${url}`.slice(0, 120) })))('$label', async ({ method, url, body }) => {
    const response = await send(method, url.replaceAll('PID', projectId), { body });
    expect(response.status, JSON.stringify(response.body)).toBeGreaterThanOrEqual(400);
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(500);
    expect(response.body).toMatchObject({ statusCode: response.status, message: expect.any(String), error: expect.any(String), reqId: expect.any(String) });
  });
});
