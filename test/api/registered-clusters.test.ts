import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Registered clusters (issue 27 parts 2–4), as a hostile caller tries them: a cluster is the one its
 * credential is bound to, never a request field; only a cluster's own operator writes its records and
 * sync results, and only ones the server can believe; claims are per organization and cluster, never
 * taken over, never taken by a refused declaration; one project syncs into two clusters.
 */

const app: TestApp = await startTestApp();
let fx: AccessFixture;
/** The operators of cluster-a and cluster-b: org members, Developers of the fixture's project. */
let operatorA: { id: string; token: string };
let operatorB: { id: string; token: string };
let clusterA: string;
/** A project Developer bound to no cluster. */
let developer: { id: string; token: string };
let environmentIds: Record<string, string>;

beforeAll(async () => {
  fx = await accessFixture(app, 'clusters-project');
  operatorA = await fx.identity('cluster-a-operator', 'member', 'member');
  operatorB = await fx.identity('cluster-b-operator', 'member', 'member');
  developer = await fx.identity('clusters-developer', 'member', 'member');
  clusterA = await fx.bindToCluster(operatorA.id, 'cluster-a');
  await fx.bindToCluster(operatorB.id, 'cluster-b');
  const environments = (await fx.call('GET', `/api/v1/workspace/${fx.projectId}`)).workspace.environments as { id: string; slug: string }[];
  environmentIds = Object.fromEntries(environments.map((environment) => [environment.slug, environment.id]));
  await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/', name: 'barrier' });
});
afterAll(async () => app?.close());

const as = (token: string) => (method: string, url: string, body?: unknown, query?: Record<string, string>) => app.request(method, url, { token, body, query });
const record = (token: string, extra: Record<string, unknown> = {}) =>
  as(token)('PUT', '/api/v1/operator/integrations', {
    managedBy: 'shop/app',
    projectId: fx.projectId,
    environment: 'dev',
    secretPath: '/',
    app: 'app-secrets',
    owner: 'shop',
    targetEnvironment: 'shop',
    ...extra,
  });
const grant = (cluster: string, namespace: string, project = fx.projectId) => fx.call('POST', `/api/v1/workspace/${project}/namespace-grants`, { cluster, namespace });
async function latestRevision(): Promise<number> {
  const row = await app.database.db
    .selectFrom('changeLog')
    .select((eb) => eb.fn.max('revision').as('revision'))
    .executeTakeFirstOrThrow();
  return Number(row.revision);
}

describe('the clusters API', () => {
  test('an org admin registers, lists, binds and unbinds; names are unique, the server’s own is reserved, an identity acts for one cluster', async () => {
    const made = await as(fx.token)('POST', '/api/v1/clusters', { name: 'cluster-c', description: 'eu-west' });
    expect(made.status).toBe(200);
    expect(made.body.cluster).toEqual({ id: expect.any(String), name: 'cluster-c', description: 'eu-west', identities: [], createdAt: expect.any(String) });
    const id = made.body.cluster.id;
    expect((await as(fx.token)('POST', '/api/v1/clusters', { name: 'cluster-c' })).body).toMatchObject({ statusCode: 409, code: 'ClusterExists' });
    expect((await as(fx.token)('POST', '/api/v1/clusters', { name: 'local' })).body).toMatchObject({ statusCode: 409, code: 'ClusterNameReserved' });
    expect((await as(fx.token)('POST', '/api/v1/clusters', { name: 'Not_A_Name' })).status).toBe(422);

    const spare = await fx.identity('cluster-c-operator', 'member');
    const bound = await as(fx.token)('POST', `/api/v1/clusters/${id}/identities`, { identityId: spare.id });
    expect(bound.body.cluster.identities).toEqual([{ id: spare.id, name: 'cluster-c-operator', authMethod: null }]);
    const again = await as(fx.token)('POST', `/api/v1/clusters/${clusterA}/identities`, { identityId: spare.id });
    expect(again.body).toMatchObject({ statusCode: 409, code: 'IdentityBound' });
    const listed = (await as(developer.token)('GET', '/api/v1/clusters')).body.clusters.map((cluster: { name: string }) => cluster.name);
    expect(listed).toEqual(expect.arrayContaining(['cluster-a', 'cluster-b', 'cluster-c']));
    expect((await as(fx.token)('GET', `/api/v1/clusters/${id}`)).body.cluster.identities).toHaveLength(1);
    expect((await as(fx.token)('DELETE', `/api/v1/clusters/${id}/identities/${spare.id}`)).body.cluster.identities).toEqual([]);
    expect((await as(fx.token)('DELETE', `/api/v1/clusters/${id}/identities/${spare.id}`)).status).toBe(404);
    expect((await as(fx.token)('DELETE', `/api/v1/clusters/${id}`)).status).toBe(200);
    expect((await as(fx.token)('GET', `/api/v1/clusters/${id}`)).status).toBe(404);
  });

  test('an org member may not register or bind; an identity of another organization is not found; nothing changes', async () => {
    const foreign = await fx.foreignAdmin('clusters-foreign');
    const foreignId = JSON.parse(Buffer.from(foreign.split('.')[1]!, 'base64url').toString()).identityId as string;
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    expect((await as(developer.token)('POST', '/api/v1/clusters', { name: 'mine' })).status).toBe(403);
    expect((await as(developer.token)('POST', `/api/v1/clusters/${clusterA}/identities`, { identityId: developer.id })).status).toBe(403);
    expect((await as(developer.token)('DELETE', `/api/v1/clusters/${clusterA}`)).status).toBe(403);
    expect((await as(fx.token)('POST', `/api/v1/clusters/${clusterA}/identities`, { identityId: foreignId })).status).toBe(404);
    expect((await as(foreign)('GET', `/api/v1/clusters/${clusterA}`)).status).toBe(404);
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);
  });
});

describe('cluster B cannot act as cluster A through any request field', () => {
  let recordA: string;
  const claimantA = { namespace: 'shop', name: 'web', uid: 'uid-a' };

  beforeAll(async () => {
    await grant('cluster-a', 'shop');
    const declared = await as(operatorA.token)('POST', '/api/v1/operator/project-claims', { claimant: claimantA, slug: 'clusters-project', name: 'Access' });
    expect(declared.body).toEqual({ projectId: fx.projectId, created: false });
    const kept = await record(operatorA.token);
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect(kept.body.integration.kubernetes).toMatchObject({ cluster: 'cluster-a', namespace: 'shop', name: 'app' });
    recordA = kept.body.integration.id;
    const places = [{ environmentId: environmentIds.dev, path: '/', recursive: false }];
    const synced = await as(operatorA.token)('POST', `/api/v1/operator/integrations/${recordA}/sync-result`, {
      isSynced: true,
      syncMessage: null,
      syncedRevision: await latestRevision(),
      places,
    });
    expect(synced.status).toBe(200);
  });

  test('every field naming cluster-a is refused (403 ClusterMismatch), every write to its records too; nothing changes', async () => {
    const b = as(operatorB.token);
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const attempts = [
      await b('POST', '/api/v1/operator/project-claims', { claimant: { ...claimantA, cluster: 'cluster-a' }, slug: 'clusters-project', name: 'Renamed' }),
      await b('POST', '/api/v1/operator/project-claims/release', { claimant: { ...claimantA, cluster: 'cluster-a' }, deleteProject: true }),
      await b('POST', '/api/v1/operator/project-claims/authorize-use', {
        declaring: { ...claimantA, cluster: 'cluster-a', allowedNamespaces: [] },
        using: { cluster: 'cluster-a', namespace: 'shop' },
      }),
      await b('POST', '/api/v1/operator/project-claims/authorize-use', {
        declaring: { ...claimantA, allowedNamespaces: [] },
        using: { cluster: 'cluster-a', namespace: 'shop' },
      }),
      await record(operatorB.token, { cluster: 'cluster-a', app: 'rewritten' }),
      await b('DELETE', '/api/v1/operator/integrations', undefined, { cluster: 'cluster-a', managedBy: 'shop/app' }),
      await b('PATCH', `/api/v1/integration/${recordA}`, { isActive: false }),
      await b('DELETE', `/api/v1/integration/${recordA}`),
    ];
    for (const attempt of attempts) expect(attempt.body, JSON.stringify(attempt.body)).toMatchObject({ statusCode: 403, code: 'ClusterMismatch' });
    for (const path of ['sync-result', 'reload-result']) {
      const body = path === 'sync-result' ? { isSynced: false, syncMessage: 'gone', syncedRevision: 1 } : { reloadedRevision: 1 };
      expect((await b('POST', `/api/v1/operator/integrations/${recordA}/${path}`, body)).body).toMatchObject({ statusCode: 403, code: 'OperatorOnly' });
    }
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);
  });

  test("without a cluster field B acts for cluster-b: A's grant, claim and record are not B's", async () => {
    const b = as(operatorB.token);
    const declared = await b('POST', '/api/v1/operator/project-claims', { claimant: claimantA, slug: 'clusters-project', name: 'Access' });
    expect(declared.body).toMatchObject({ statusCode: 403, code: 'GrantMissing' });
    expect(
      (await b('POST', '/api/v1/operator/project-claims/authorize-use', { declaring: { ...claimantA, allowedNamespaces: [] }, using: { namespace: 'shop' } })).body,
    ).toMatchObject({
      code: 'ProjectNotReady',
    });
    const deleted = await b('DELETE', '/api/v1/operator/integrations', undefined, { managedBy: 'shop/app' });
    expect(deleted.status).toBe(200);
    expect((await as(fx.token)('GET', `/api/v1/integration/${recordA}`)).body.integration.kubernetes.cluster).toBe('cluster-a');
  });

  test('a caller bound to no cluster acts for none, not even the server’s own (`local`)', async () => {
    await grant('local', 'shop');
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const asLocal = [
      await as(developer.token)('POST', '/api/v1/operator/project-claims', { claimant: { ...claimantA, cluster: 'local' }, slug: 'clusters-project', name: 'Renamed' }),
      await as(fx.token)('POST', '/api/v1/operator/project-claims', { claimant: { ...claimantA, cluster: 'local' }, slug: 'clusters-project', name: 'Renamed' }),
      await record(developer.token, { cluster: 'local' }),
      await as(developer.token)('DELETE', '/api/v1/operator/integrations', undefined, { cluster: 'local', managedBy: 'shop/app' }),
    ];
    for (const attempt of asLocal) expect(attempt.body, JSON.stringify(attempt.body)).toMatchObject({ statusCode: 403, code: 'ClusterNotBound' });
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);
  });

  test('the installation answer names the cluster the credential acts for (the remote operator checks it at start)', async () => {
    expect((await as(operatorA.token)('GET', '/api/v1/operator/installation')).body).toMatchObject({ cluster: 'cluster-a' });
    expect((await as(developer.token)('GET', '/api/v1/operator/installation')).body).toMatchObject({ cluster: null });
  });

  test('the audit log names the cluster of the credential that acted', async () => {
    const audit = await as(fx.token)('GET', `/api/v1/workspace/${fx.projectId}/audit-logs`, undefined, { eventType: 'create-integration' });
    const entry = audit.body.auditLogs.find((log: { event: { metadata: { integrationId?: string } } }) => log.event.metadata.integrationId === recordA);
    expect(entry.actor.metadata).toMatchObject({ identityId: operatorA.id, cluster: 'cluster-a' });
  });
});

describe('a project member cannot move the revision barrier', () => {
  test('only the record’s own operator records a sync, with a committed revision and places it may read', async () => {
    const kept = await record(operatorA.token, { managedBy: 'shop/barrier', app: 'barrier-secrets', secretPath: '/barrier' });
    const id = kept.body.integration.id;
    const places = [{ environmentId: environmentIds.dev, path: '/barrier', recursive: false }];
    const first = { isSynced: true, syncMessage: null, syncedRevision: await latestRevision(), places };
    expect((await as(operatorA.token)('POST', `/api/v1/operator/integrations/${id}/sync-result`, first)).status).toBe(200);
    const written = await app.request('POST', '/api/v3/secrets/raw/BARRIER_KEY', {
      token: fx.token,
      body: { workspaceId: fx.projectId, environment: 'dev', secretPath: '/barrier', secretValue: 'v' },
    });
    const revision = Number(written.headers['coffer-revision']);
    const other = (await fx.call('POST', '/api/v2/workspace', { projectName: 'Elsewhere' })).project;
    const elsewhere = other.environments.find((environment: { slug: string }) => environment.slug === 'dev').id;
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const forged = await as(developer.token)('POST', `/api/v1/operator/integrations/${id}/sync-result`, {
      isSynced: true,
      syncMessage: null,
      syncedRevision: Number.MAX_SAFE_INTEGER,
      places: [],
    });
    expect(forged.body).toMatchObject({ statusCode: 403, code: 'ClusterNotBound' });
    const ahead = await as(operatorA.token)('POST', `/api/v1/operator/integrations/${id}/sync-result`, {
      isSynced: true,
      syncMessage: null,
      syncedRevision: (await latestRevision()) + 1,
      places,
    });
    expect(ahead.body).toMatchObject({ statusCode: 400, code: 'RevisionNotCommitted' });
    expect((await as(operatorA.token)('POST', `/api/v1/operator/integrations/${id}/reload-result`, { reloadedRevision: Number.MAX_SAFE_INTEGER })).body).toMatchObject({
      code: 'RevisionNotCommitted',
    });
    const outside = await as(operatorA.token)('POST', `/api/v1/operator/integrations/${id}/sync-result`, {
      isSynced: true,
      syncMessage: null,
      syncedRevision: revision,
      places: [{ environmentId: elsewhere, path: '/', recursive: false }],
    });
    expect(outside.body).toMatchObject({ statusCode: 403, code: 'PlaceNotReadable' });
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);

    const pending = await as(fx.token)('GET', '/api/v1/changes/wait', undefined, { revision: String(revision), timeout: '100ms' });
    expect(pending.body).toMatchObject({ revision, reached: false });
    const real = await as(operatorA.token)('POST', `/api/v1/operator/integrations/${id}/sync-result`, {
      isSynced: true,
      syncMessage: null,
      syncedRevision: revision,
      places,
    });
    expect(real.status).toBe(200);
    expect((await as(fx.token)('GET', '/api/v1/changes/wait', undefined, { revision: String(revision), timeout: '5s' })).body).toMatchObject({ revision, reached: true });
  });
});

describe('claims per cluster', () => {
  test('a claim is never taken by another uid, and a refused declaration takes nothing', async () => {
    const a = as(operatorA.token);
    const claimant = { namespace: 'team', name: 'web', uid: 'uid-1' };
    const made = await a('POST', '/api/v1/operator/project-claims', { claimant, slug: 'team-web', name: 'Team Web' });
    expect(made.body).toMatchObject({ created: true });
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const takeOver = await a('POST', '/api/v1/operator/project-claims', { claimant: { ...claimant, uid: 'uid-2' }, slug: 'team-web', name: 'Team Web' });
    expect(takeOver.body).toMatchObject({ statusCode: 403, code: 'ProjectClaimed' });
    expect((await a('POST', '/api/v1/operator/project-claims/release', { claimant: { ...claimant, uid: 'uid-2' }, deleteProject: true })).body).toEqual({
      outcome: 'none',
    });
    // another SecretsProject of the same cluster, in a granted namespace, is refused: one claimant per cluster
    await grant('cluster-a', 'rival', made.body.projectId);
    const rivalBefore = await snapshotDatabase(app.database, ['login_throttles']);
    const rival = await a('POST', '/api/v1/operator/project-claims', { claimant: { namespace: 'rival', name: 'web', uid: 'uid-3' }, slug: 'team-web', name: 'Team Web' });
    expect(rival.body).toMatchObject({ statusCode: 403, code: 'ProjectClaimed' });
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(rivalBefore);
    expect(before.project_claims).toEqual(rivalBefore.project_claims);
  });

  test('a declaration refused in cluster B (no grant) takes nothing and locks nobody out', async () => {
    const slug = 'two-clusters';
    const { project } = await fx.call('POST', '/api/v2/workspace', { projectName: 'Two clusters', slug });
    for (const operator of [operatorA, operatorB]) {
      await fx.call('POST', `/api/v2/workspace/${project.id}/identity-memberships/${operator.id}`, { roles: [{ role: 'member' }] });
    }
    const claimant = { namespace: 'shop', name: 'two', uid: 'uid-two' };
    const before = await snapshotDatabase(app.database, ['login_throttles']);
    const refused = await as(operatorB.token)('POST', '/api/v1/operator/project-claims', { claimant, slug, name: 'Two clusters' });
    expect(refused.body).toMatchObject({ statusCode: 403, code: 'GrantMissing' });
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);

    await grant('cluster-a', 'shop', project.id);
    await grant('cluster-b', 'shop', project.id);
    for (const operator of [operatorA, operatorB]) {
      const declared = await as(operator.token)('POST', '/api/v1/operator/project-claims', { claimant, slug, name: 'Two clusters' });
      expect(declared.body, JSON.stringify(declared.body)).toEqual({ projectId: project.id, created: false });
    }
    // one project synced into two clusters: a record and a sync of its own in each
    const ids = [];
    for (const operator of [operatorA, operatorB]) {
      const kept = await record(operator.token, { projectId: project.id, managedBy: 'shop/two' });
      expect(kept.status, JSON.stringify(kept.body)).toBe(200);
      ids.push(kept.body.integration.id);
      const synced = await as(operator.token)('POST', `/api/v1/operator/integrations/${kept.body.integration.id}/sync-result`, {
        isSynced: true,
        syncMessage: null,
        syncedRevision: await latestRevision(),
      });
      expect(synced.status).toBe(200);
    }
    expect(new Set(ids).size).toBe(2);
    const listed = (await as(fx.token)('GET', `/api/v1/workspace/${project.id}/integrations`)).body.integrations;
    expect(listed.map((integration: { kubernetes: { cluster: string } }) => integration.kubernetes.cluster).sort()).toEqual(['cluster-a', 'cluster-b']);
    expect(listed.every((integration: { isSynced: boolean }) => integration.isSynced)).toBe(true);
  });

  test('who claimed what is answered to the cluster’s operator and project admins only', async () => {
    const query = { cluster: 'cluster-a', slug: 'clusters-project' };
    const claimant = { cluster: 'cluster-a', namespace: 'shop', name: 'web', uid: 'uid-a' };
    expect((await as(operatorA.token)('GET', '/api/v1/operator/project-claims', undefined, { slug: 'clusters-project' })).body).toEqual({ claimant });
    expect((await as(fx.token)('GET', '/api/v1/operator/project-claims', undefined, query)).body).toEqual({ claimant });
    for (const token of [operatorB.token, developer.token]) {
      const hidden = await as(token)('GET', '/api/v1/operator/project-claims', undefined, query);
      expect(hidden.status).toBe(404);
      expect(JSON.stringify(hidden.body)).not.toContain('uid-a');
    }
  });
});

describe("an operator's listing of its records (the sweep of records of Integrations deleted while it was away)", () => {
  beforeAll(async () => {
    await grant('cluster-a', 'lst');
    await grant('cluster-a', 'lst-two');
    for (const managedBy of ['lst/c', 'lst/a', 'lst/b', 'lst-two/x']) {
      const namespace = managedBy.split('/')[0]!;
      const kept = await record(operatorA.token, { managedBy, owner: namespace, targetEnvironment: namespace });
      expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    }
  });
  const list = (token: string, query: Record<string, string> = {}) => as(token)('GET', '/api/v1/operator/integrations', undefined, query);

  test("names its own cluster's records in order, a page at a time, or one namespace's", async () => {
    const all = await list(operatorA.token);
    expect(all.status).toBe(200);
    expect(all.body.next).toBeNull();
    // in the database's collation, whatever it is: compared as a set here
    expect(new Set(all.body.managedBy.filter((name: string) => name.startsWith('lst')))).toEqual(new Set(['lst-two/x', 'lst/a', 'lst/b', 'lst/c']));
    const first = await list(operatorA.token, { namespace: 'lst', limit: '2' });
    expect(first.body).toEqual({ managedBy: ['lst/a', 'lst/b'], next: 'lst/b' });
    const second = await list(operatorA.token, { namespace: 'lst', limit: '2', after: first.body.next });
    expect(second.body).toEqual({ managedBy: ['lst/c'], next: null });
    expect((await list(operatorA.token, { namespace: 'lst-two' })).body).toEqual({ managedBy: ['lst-two/x'], next: null });
    expect((await list(operatorA.token, { namespace: 'ls' })).body).toEqual({ managedBy: [], next: null });
    // empty optional values are absent ones
    expect((await list(operatorA.token, { namespace: '', after: '', limit: '' })).body).toEqual(all.body);
  });

  test("another cluster's operator sees none of them and may not ask for them; a caller bound to no cluster is refused", async () => {
    expect((await list(operatorB.token)).body.managedBy.filter((name: string) => name.startsWith('lst'))).toEqual([]);
    expect((await list(operatorB.token, { namespace: 'lst' })).body).toEqual({ managedBy: [], next: null });
    expect((await list(operatorB.token, { cluster: 'cluster-a' })).body).toMatchObject({ statusCode: 403, code: 'ClusterMismatch' });
    expect((await list(developer.token)).body).toMatchObject({ statusCode: 403, code: 'ClusterNotBound' });
    expect((await list(fx.token, { cluster: 'local' })).body).toMatchObject({ statusCode: 403, code: 'ClusterNotBound' });
  });

  test('bad paging is refused (422) naming the field', async () => {
    const refused: Record<string, string>[] = [
      { limit: '0' },
      { limit: '5001' },
      { limit: 'ten' },
      { namespace: 'Not_A_Namespace' },
      { namespace: 'lst/%' },
      { after: 'lst/a\u0000' },
      { after: 'x'.repeat(318) },
    ];
    for (const query of refused) {
      const answer = await list(operatorA.token, query);
      expect(answer.status, JSON.stringify(query)).toBe(422);
      expect(answer.body.message).toContain(Object.keys(query)[0]);
    }
  });
});
