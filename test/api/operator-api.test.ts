import { afterAll, beforeAll, expect, test } from 'vitest';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * /api/v1/operator/*: what an operator in another cluster calls beyond the public API, as its
 * machine identity: project claims, the records of its Integrations, listings that name what
 * they read. One organization never reads or ends another's claim.
 */

const app: TestApp = await startTestApp();
let fx: AccessFixture;
/** An operator identity of cluster-b: org member, admin of the fixture's project. */
let operator: { id: string; token: string };
const claimant = { cluster: 'cluster-b', namespace: 'shop', name: 'web-shop', uid: 'uid-1' };

beforeAll(async () => {
  fx = await accessFixture(app, 'operator-api');
  operator = await fx.identity('cluster-b-operator', 'member', 'admin');
  await fx.bindToCluster(operator.id, 'cluster-b');
});
afterAll(async () => app?.close());

const as = (token: string) => (method: string, url: string, body?: unknown, query?: Record<string, string>) => app.request(method, url, { token, body, query });

test('a SecretsProject declares a new project; its namespace may use it, another only when allowed; the claim is found and released', async () => {
  const call = as(operator.token);
  const declared = await call('POST', '/api/v1/operator/project-claims', { claimant, slug: 'remote-shop', name: 'Remote Shop' });
  expect(declared.status).toBe(200);
  expect(declared.body).toEqual({ projectId: expect.any(String), created: true });
  expect((await call('POST', '/api/v1/operator/project-claims', { claimant, slug: 'remote-shop', name: 'Remote Shop' })).body).toEqual({
    projectId: declared.body.projectId,
    created: true,
  });
  const grants = (await call('GET', `/api/v1/workspace/${declared.body.projectId}/namespace-grants`)).body.grants;
  expect(grants).toEqual([expect.objectContaining({ cluster: 'cluster-b', namespace: 'shop', origin: 'created' })]);

  const use = (namespace: string, allowedNamespaces: string[] = []) =>
    call('POST', '/api/v1/operator/project-claims/authorize-use', { declaring: { ...claimant, allowedNamespaces }, using: { cluster: 'cluster-b', namespace } });
  expect((await use('shop')).body).toEqual({ projectId: declared.body.projectId, slug: 'remote-shop' });
  expect((await use('shop-staging')).body).toMatchObject({ statusCode: 403, error: 'ForbiddenError', code: 'Forbidden' });
  expect((await use('shop-staging', ['shop-staging'])).status).toBe(200);

  expect((await call('GET', '/api/v1/operator/project-claims', undefined, { cluster: 'cluster-b', slug: 'remote-shop' })).body).toEqual({ claimant });
  expect((await call('GET', '/api/v1/operator/project-claims', undefined, { cluster: 'cluster-c', slug: 'remote-shop' })).status).toBe(404);

  expect((await call('POST', '/api/v1/operator/project-claims/release', { claimant, deleteProject: false })).body).toEqual({ outcome: 'released' });
  expect((await call('GET', '/api/v1/operator/project-claims', undefined, { cluster: 'cluster-b', slug: 'remote-shop' })).status).toBe(404);
});

test("another organization's operator of a cluster of the same name keeps claims of its own: it neither takes nor ends ours", async () => {
  const theirs = { ...claimant, name: 'contested', uid: 'uid-ours' };
  expect((await as(operator.token)('POST', '/api/v1/operator/project-claims', { claimant: theirs, slug: 'contested-shop', name: 'Contested' })).status).toBe(200);
  // a second organization on the same server, with its own admin identity, bound to its own cluster-b
  const { sibling } = await otherOrganization();
  const siblingId = JSON.parse(Buffer.from(sibling.split('.')[1]!, 'base64url').toString()).identityId as string;
  await fx.bindToCluster(siblingId, 'cluster-b', sibling);
  const ours = await app.database.db.selectFrom('projectClaims').selectAll().where('orgId', '=', fx.orgId).execute();
  const release = await as(sibling)('POST', '/api/v1/operator/project-claims/release', { claimant: theirs, deleteProject: true });
  expect(release.body).toEqual({ outcome: 'none' });
  const own = await as(sibling)('POST', '/api/v1/operator/project-claims', { claimant: { ...theirs, uid: 'uid-theirs' }, slug: 'their-shop', name: 'Theirs' });
  expect(own.body).toEqual({ projectId: expect.any(String), created: true });
  expect(await app.database.db.selectFrom('projectClaims').selectAll().where('orgId', '=', fx.orgId).execute()).toEqual(ours);
  expect((await as(sibling)('GET', '/api/v1/operator/project-claims', undefined, { slug: 'contested-shop' })).status).toBe(404);
});

test('the record of an Integration of cluster-b: kept, placed, its sync recorded, dropped', async () => {
  const call = as(operator.token);
  const body = { cluster: 'cluster-b', managedBy: 'shop/app', projectId: fx.projectId, environment: 'dev', app: 'app-secrets', owner: 'shop', targetEnvironment: 'shop' };
  const kept = await call('PUT', '/api/v1/operator/integrations', body);
  expect(kept.status).toBe(200);
  expect(kept.body.integration.kubernetes).toEqual({ cluster: 'cluster-b', namespace: 'shop', name: 'app', secretName: 'app-secrets', syncedRevision: null });
  const id = kept.body.integration.id;
  expect((await call('PUT', '/api/v1/operator/integrations', body)).body.integration.id).toBe(id);
  const revision = Number(
    (
      await app.database.db
        .selectFrom('changeLog')
        .select((eb) => eb.fn.max('revision').as('revision'))
        .executeTakeFirstOrThrow()
    ).revision,
  );
  expect((await call('POST', `/api/v1/operator/integrations/${id}/sync-result`, { isSynced: true, syncMessage: null, syncedRevision: revision })).status).toBe(200);
  const listed = (await call('GET', `/api/v1/workspace/${fx.projectId}/integrations`)).body.integrations;
  expect(listed.find((record: { id: string }) => record.id === id)).toMatchObject({ isSynced: true, kubernetes: { cluster: 'cluster-b', syncedRevision: revision } });
  const viewer = await fx.identity('operator-api-viewer', 'member', 'viewer');
  expect((await as(viewer.token)('POST', `/api/v1/operator/integrations/${id}/sync-result`, { isSynced: false, syncMessage: 'x', syncedRevision: null })).status).toBe(
    403,
  );
  expect((await call('DELETE', '/api/v1/operator/integrations', undefined, { cluster: 'cluster-b', managedBy: 'shop/app' })).status).toBe(200);
  expect((await call('GET', `/api/v1/integration/${id}`)).status).toBe(404);
});

test('a listing names every folder it read, imported ones too, with the tags of each secret (imported ones too), and is audited as a read by the operator', async () => {
  const call = as(operator.token);
  const tag = await fx.call('POST', `/api/v1/workspace/${fx.projectId}/tags`, { slug: 'backend', color: '#123456' });
  const tagIds = [tag.workspaceTag.id as string];
  await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'staging', path: '/', name: 'shared' });
  await fx.call('POST', '/api/v3/secrets/raw/SHARED_KEY', {
    workspaceId: fx.projectId,
    environment: 'staging',
    secretPath: '/shared',
    secretValue: 'from-staging',
    tagIds,
  });
  await fx.call('POST', '/api/v3/secrets/raw/OWN_KEY', { workspaceId: fx.projectId, environment: 'dev', secretValue: 'own-value' });
  await fx.call('POST', '/api/v1/secret-imports', { workspaceId: fx.projectId, environment: 'dev', path: '/', import: { environment: 'staging', path: '/shared' } });
  const listing = await app.request('GET', '/api/v1/operator/secrets', {
    token: operator.token,
    query: { projectId: fx.projectId, environment: 'dev' },
    headers: { 'user-agent': 'k8-operator/0.1.0 (cluster cluster-b)' },
  });
  expect(listing.status).toBe(200);
  expect(listing.body.secrets).toEqual([{ key: 'OWN_KEY', value: 'own-value', path: '/', tags: [] }]);
  expect(listing.body.imports).toEqual([{ environment: 'staging', path: '/shared', secrets: [{ key: 'SHARED_KEY', value: 'from-staging', tags: ['backend'] }] }]);
  // the public listing keeps imported secrets without tags, as the reference does
  const publicListing = await fx.call('GET', `/api/v3/secrets/raw?workspaceId=${fx.projectId}&environment=dev&include_imports=true`);
  expect(publicListing.imports[0].secrets[0].tags).toEqual([]);
  const environments = (await call('GET', `/api/v1/workspace/${fx.projectId}`)).body.workspace.environments as { id: string; slug: string }[];
  const idOf = (slug: string) => environments.find((environment) => environment.slug === slug)!.id;
  expect(listing.body.environmentId).toBe(idOf('dev'));
  expect(listing.body.reads).toEqual(
    expect.arrayContaining([
      { environmentId: idOf('dev'), path: '/' },
      { environmentId: idOf('staging'), path: '/shared' },
    ]),
  );
  const audit = await app.database.db
    .selectFrom('auditLogs')
    .select(['eventType', 'userAgentType'])
    .where('projectId', '=', fx.projectId)
    .where('eventType', '=', 'get-secrets')
    .execute();
  expect(audit.at(-1)).toEqual({ eventType: 'get-secrets', userAgentType: 'k8-operator' });
});

test("a listing's reads name only places the caller may read: an import it may not read is neither listed nor named", async () => {
  const role = await fx.call('POST', `/api/v1/workspace/${fx.projectSlug}/roles`, {
    slug: 'app-syncer',
    name: 'App syncer',
    permissions: [
      { subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } },
      { subject: 'workspace', action: 'read' },
    ],
  });
  expect(role.role).toMatchObject({ slug: 'app-syncer' });
  const syncer = await fx.identity('app-syncer-operator', 'member', 'app-syncer');
  for (const [environment, name] of [
    ['dev', 'app'],
    ['dev', 'payroll'],
    ['staging', 'payroll-staging'],
  ] as const) {
    await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment, path: '/', name });
  }
  await fx.call('POST', '/api/v3/secrets/raw/APP_KEY', { workspaceId: fx.projectId, environment: 'dev', secretPath: '/app', secretValue: 'app' });
  await fx.call('POST', '/api/v3/secrets/raw/SALARY', { workspaceId: fx.projectId, environment: 'dev', secretPath: '/payroll', secretValue: 'hidden' });
  await fx.call('POST', '/api/v3/secrets/raw/SALARY', { workspaceId: fx.projectId, environment: 'staging', secretPath: '/payroll-staging', secretValue: 'hidden' });
  // /app imports a folder of its own environment and one of another, neither readable by the syncer
  for (const source of [
    { environment: 'dev', path: '/payroll' },
    { environment: 'staging', path: '/payroll-staging' },
  ]) {
    await fx.call('POST', '/api/v1/secret-imports', { workspaceId: fx.projectId, environment: 'dev', path: '/app', import: source });
  }
  const environments = (await fx.call('GET', `/api/v1/workspace/${fx.projectId}`)).workspace.environments as { id: string; slug: string }[];
  const dev = environments.find((environment) => environment.slug === 'dev')!.id;

  const queries: Record<string, string>[] = [
    { projectId: fx.projectId, environment: 'dev', secretPath: '/app' },
    { projectId: fx.projectId, environment: 'dev', secretPath: '/', recursive: 'true' },
  ];
  for (const query of queries) {
    const listing = await as(syncer.token)('GET', '/api/v1/operator/secrets', undefined, query);
    expect(listing.status, JSON.stringify(listing.body)).toBe(200);
    expect(listing.body.secrets).toEqual([{ key: 'APP_KEY', value: 'app', path: '/app', tags: [] }]);
    expect(listing.body.imports).toEqual([]);
    expect(listing.body.environmentId).toBe(dev);
    expect(listing.body.reads).toEqual([{ environmentId: dev, path: '/app' }]);
  }
  // a recursive listing of a subtree it may read nothing of: empty, and still the environment named
  const nothing = await as(syncer.token)('GET', '/api/v1/operator/secrets', undefined, {
    projectId: fx.projectId,
    environment: 'dev',
    secretPath: '/payroll',
    recursive: 'true',
  });
  expect(nothing.status, JSON.stringify(nothing.body)).toBe(200);
  expect(nothing.body).toEqual({ secrets: [], imports: [], environmentId: dev, reads: [] });
  // the operator identity of the fixture, admin of the project, reads and names them all
  const full = await as(operator.token)('GET', '/api/v1/operator/secrets', undefined, { projectId: fx.projectId, environment: 'dev', secretPath: '/app' });
  expect(full.body.reads).toHaveLength(3);
});

/** A second organization on the same server and a token of its admin identity. */
async function otherOrganization(): Promise<{ sibling: string }> {
  return { sibling: await fx.foreignAdmin('sibling-org') };
}
