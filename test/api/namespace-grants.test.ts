import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AccessRefusedError } from '../../src/grants/project-claims.ts';
import type { Actor } from '../../src/actor/actor.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Namespace grants through the API (give, list, revoke; every refusal a 4xx
 * that changes nothing) and the claims the operator makes with them (service
 * level; the cluster test shows the same through the real operator).
 */
let app: TestApp;
let fx: AccessFixture;
let member: { id: string; token: string };
let viewer: { id: string; token: string };
const url = (project = fx.projectId) => `/api/v1/workspace/${project}/namespace-grants`;

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app, 'granted-project');
  member = await fx.identity('grant-member', 'member', 'member');
  viewer = await fx.identity('grant-viewer', 'member', 'viewer');
});
afterAll(async () => app?.close());

describe('the API', () => {
  let grantId: string;

  test('a project admin grants a namespace (default cluster: this server’s), audited and in the change feed', async () => {
    const revisionBefore = await app.services.changes.latestRevision(app.database.db, fx.projectId);
    const created = await app.request('POST', url(), { token: fx.token, body: { namespace: 'team-a' } });
    expect(created.status).toBe(200);
    expect(created.body.grant).toEqual({
      id: expect.any(String),
      projectId: fx.projectId,
      cluster: 'local',
      namespace: 'team-a',
      origin: 'api',
      grantedBy: { type: 'identity', id: fx.identityId, name: expect.any(String) },
      createdAt: expect.any(String),
    });
    grantId = created.body.grant.id;
    const audit = await app.request('GET', `/api/v1/workspace/${fx.projectId}/audit-logs`, { token: fx.token, query: { eventType: 'create-namespace-grant' } });
    expect(audit.body.auditLogs[0].event.metadata).toEqual({ grantId, cluster: 'local', namespace: 'team-a', origin: 'api' });
    const changes = await app.database.db.selectFrom('changeLog').selectAll().where('projectId', '=', fx.projectId).where('revision', '>', revisionBefore).execute();
    expect(changes.map((change) => change.kind)).toEqual(['access']);
  });

  test('listed by id or slug, for every project role that may read; another cluster is another grant', async () => {
    expect((await app.request('POST', url('granted-project'), { token: fx.token, body: { namespace: 'team-a', cluster: 'eu-west' } })).status).toBe(200);
    for (const token of [fx.token, member.token, viewer.token]) {
      const listed = await app.request('GET', url('granted-project'), { token });
      expect(listed.status).toBe(200);
      expect(listed.body.grants.map((grant: { cluster: string; namespace: string }) => `${grant.cluster}/${grant.namespace}`)).toEqual([
        'eu-west/team-a',
        'local/team-a',
      ]);
    }
  });

  test.each([
    ['a duplicate', () => ({ body: { namespace: 'team-a' } }), 409, 'Conflict', 'GrantExists'],
    ['no namespace', () => ({ body: {} }), 422, 'ValidationFailure'],
    ['an invalid namespace', () => ({ body: { namespace: 'Team_A' } }), 422, 'ValidationFailure'],
    ['a namespace over 63 characters', () => ({ body: { namespace: 'a'.repeat(64) } }), 422, 'ValidationFailure'],
    ['a namespace with a leading hyphen', () => ({ body: { namespace: '-team' } }), 422, 'ValidationFailure'],
    ['an invalid cluster', () => ({ body: { namespace: 'team-b', cluster: 'Prod EU' } }), 422, 'ValidationFailure'],
    ['a body that is not an object', () => ({ body: ['team-b'] }), 422, 'ValidationFailure'],
    ['an unknown project id', () => ({ body: { namespace: 'team-b' }, url: url('00000000-0000-4000-8000-000000000000') }), 404, 'NotFound', 'ProjectNotFound'],
    ['an unknown slug', () => ({ body: { namespace: 'team-b' }, url: url('no-such-project') }), 404, 'NotFound', 'ProjectNotFound'],
    ['a project member (not admin)', () => ({ body: { namespace: 'team-b' }, token: member.token }), 403, 'PermissionDenied'],
    ['a viewer', () => ({ body: { namespace: 'team-b' }, token: viewer.token }), 403, 'PermissionDenied'],
    ['no token', () => ({ body: { namespace: 'team-b' }, token: null }), 401, 'UnauthorizedError'],
  ])('POST with %s: %i, nothing changed', async (_what, request, status, error, code = error) => {
    const before = await snapshotDatabase(app.database);
    const options = request() as { body: unknown; url?: string; token?: string | null };
    const response = await app.request('POST', options.url ?? url(), { token: options.token === undefined ? fx.token : options.token, body: options.body });
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, error, code, message: expect.any(String), reqId: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test.each([
    ['an unknown grant id', () => url() + '/00000000-0000-4000-8000-000000000000', () => fx.token, 404],
    ['a grant id that is not a UUID', () => url() + '/not-a-uuid', () => fx.token, 404],
    ['a member', () => `${url()}/${grantId}`, () => member.token, 403],
    ['a viewer', () => `${url()}/${grantId}`, () => viewer.token, 403],
  ])('DELETE with %s: refused, nothing changed', async (_what, path, token, status) => {
    const before = await snapshotDatabase(app.database);
    const response = await app.request('DELETE', path(), { token: token() });
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, reqId: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('a grant of another project is not found through this one', async () => {
    const other = (await fx.call('POST', '/api/v2/workspace', { projectName: 'Other', slug: 'other-project' })).project.id;
    const before = await snapshotDatabase(app.database);
    expect((await app.request('DELETE', `${url(other)}/${grantId}`, { token: fx.token })).status).toBe(404);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('revoked: gone from the list, audited, in the change feed', async () => {
    const revoked = await app.request('DELETE', `${url()}/${grantId}`, { token: fx.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body.grant).toMatchObject({ id: grantId, namespace: 'team-a', cluster: 'local' });
    const listed = await app.request('GET', url(), { token: fx.token });
    expect(listed.body.grants.map((grant: { id: string }) => grant.id)).not.toContain(grantId);
    const audit = await app.request('GET', `/api/v1/workspace/${fx.projectId}/audit-logs`, { token: fx.token, query: { eventType: 'delete-namespace-grant' } });
    expect(audit.body.auditLogs).toHaveLength(1);
    expect((await app.request('DELETE', `${url()}/${grantId}`, { token: fx.token })).status).toBe(404);
  });

  test('the OpenAPI document describes the routes', async () => {
    const document = (await app.app.inject({ url: '/api/docs/openapi.json' })).json();
    const path = document.paths['/api/v1/workspace/{workspaceId}/namespace-grants'];
    expect(path.post.description).toContain('namespace grant');
    expect(path.get.summary).toBeTruthy();
    expect(document.paths['/api/v1/workspace/{workspaceId}/namespace-grants/{grantId}'].delete.summary).toContain('Revoke');
  });
});

describe('claims (what the operator does with grants)', () => {
  let operator: Actor;
  const place = { cluster: 'local', namespace: 'shop' };
  const claimant = { ...place, name: 'web', uid: 'uid-1' };

  beforeAll(async () => {
    operator = await fx.operatorActor('claims-operator');
  });

  test('claiming an existing project without a grant: refused with the call that gives one; the project row for row unchanged', async () => {
    const before = await snapshotDatabase(app.database);
    const error = await app.services.projectClaims.declare(operator, claimant, { slug: 'granted-project', name: 'Renamed!' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AccessRefusedError);
    expect((error as AccessRefusedError).code).toBe('GrantMissing');
    expect((error as Error).message).toContain('POST /api/v1/workspace/granted-project/namespace-grants {"cluster":"local","namespace":"shop"}');
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('with a grant it is claimed (not created); a second claimant is refused; release keeps the project even when asked to delete', async () => {
    expect((await app.request('POST', url(), { token: fx.token, body: { namespace: 'shop' } })).status).toBe(200);
    expect(await app.services.projectClaims.declare(operator, claimant, { slug: 'granted-project', name: 'Access' })).toEqual({
      projectId: fx.projectId,
      created: false,
    });
    expect((await app.request('POST', url(), { token: fx.token, body: { namespace: 'rival' } })).status).toBe(200);
    const rival = app.services.projectClaims.declare(
      operator,
      { cluster: 'local', namespace: 'rival', name: 'web', uid: 'uid-2' },
      { slug: 'granted-project', name: 'Access' },
    );
    await expect(rival).rejects.toMatchObject({ code: 'ProjectClaimed' });
    expect(await app.services.projectClaims.release(operator, claimant, true)).toBe('released');
    expect((await app.request('GET', `/api/v1/workspace/${fx.projectId}`, { token: fx.token })).status).toBe(200);
  });

  test('a new slug creates the project with a grant of origin created; Delete deletes only what this resource created', async () => {
    const own = { cluster: 'local', namespace: 'fresh-ns', name: 'app', uid: 'uid-3' };
    const { projectId, created } = await app.services.projectClaims.declare(operator, own, { slug: 'made-by-cluster', name: 'Made' });
    expect(created).toBe(true);
    // declared again (every resync): the same answer, from the claim as recorded
    expect(await app.services.projectClaims.declare(operator, own, { slug: 'made-by-cluster', name: 'Made' })).toEqual({ projectId, created: true });
    const grants = await app.request('GET', url(projectId), { token: fx.token });
    expect(grants.body.grants).toEqual([
      expect.objectContaining({ cluster: 'local', namespace: 'fresh-ns', origin: 'created', grantedBy: expect.objectContaining({ name: 'claims-operator' }) }),
    ]);
    // another resource of the same name (another uid) takes nothing while the claim stands; once released it claims through its namespace's grant, but did not create it
    const remade = { ...own, uid: 'uid-4' };
    await expect(app.services.projectClaims.declare(operator, remade, { slug: 'made-by-cluster', name: 'Made' })).rejects.toMatchObject({ code: 'ProjectClaimed' });
    expect(await app.services.projectClaims.release(operator, remade, true)).toBe('none');
    expect(await app.services.projectClaims.release(operator, own, false)).toBe('released');
    expect(await app.services.projectClaims.declare(operator, remade, { slug: 'made-by-cluster', name: 'Made' })).toEqual({ projectId, created: false });
    expect(await app.services.projectClaims.release(operator, remade, true)).toBe('released');
    expect((await app.request('GET', `/api/v1/workspace/${projectId}`, { token: fx.token })).status).toBe(200);

    const third = { ...own, name: 'scratch', uid: 'uid-5' };
    const scratch = await app.services.projectClaims.declare(operator, third, { slug: 'scratch-by-cluster', name: 'Scratch' });
    expect(await app.services.projectClaims.release(operator, third, true)).toBe('deleted');
    expect((await app.request('GET', `/api/v1/workspace/${scratch.projectId}`, { token: fx.token })).status).toBe(404);
  });

  test('use by other namespaces: own grant, or allowedNamespaces of a created project; a revoked grant stops the declaring namespace too', async () => {
    const owner = { cluster: 'local', namespace: 'owner-ns', name: 'shared', uid: 'uid-6' };
    const { projectId } = await app.services.projectClaims.declare(operator, owner, { slug: 'shared-by-cluster', name: 'Shared' });
    const declaring = { ...owner, allowedNamespaces: ['friend-ns'] };
    const granted = { projectId, slug: 'shared-by-cluster' };
    expect(await app.services.projectClaims.authorizeUse(operator, declaring, { cluster: 'local', namespace: 'owner-ns' })).toEqual(granted);
    expect(await app.services.projectClaims.authorizeUse(operator, declaring, { cluster: 'local', namespace: 'friend-ns' })).toEqual(granted);
    await expect(app.services.projectClaims.authorizeUse(operator, declaring, { cluster: 'local', namespace: 'stranger-ns' })).rejects.toMatchObject({
      code: 'Forbidden',
    });
    // a forged declaration (another uid, as a status written by hand would claim) reads nothing
    await expect(app.services.projectClaims.authorizeUse(operator, { ...declaring, uid: 'forged' }, { cluster: 'local', namespace: 'owner-ns' })).rejects.toMatchObject({
      code: 'ProjectNotReady',
    });
    expect((await app.request('POST', url(projectId), { token: fx.token, body: { namespace: 'stranger-ns' } })).status).toBe(200);
    expect(await app.services.projectClaims.authorizeUse(operator, declaring, { cluster: 'local', namespace: 'stranger-ns' })).toEqual(granted);
    expect(await app.services.projectClaims.claimantOfSlug(operator, 'local', 'shared-by-cluster')).toEqual(owner);
    expect(await app.services.projectClaims.claimantOfSlug(operator, 'other-cluster', 'shared-by-cluster')).toBeUndefined();

    const own = (await app.request('GET', url(projectId), { token: fx.token })).body.grants.find((grant: { namespace: string }) => grant.namespace === 'owner-ns');
    expect((await app.request('DELETE', `${url(projectId)}/${own.id}`, { token: fx.token })).status).toBe(200);
    await expect(app.services.projectClaims.authorizeUse(operator, declaring, { cluster: 'local', namespace: 'owner-ns' })).rejects.toMatchObject({
      code: 'GrantRevoked',
    });
    await expect(app.services.projectClaims.authorizeUse(operator, declaring, { cluster: 'local', namespace: 'friend-ns' })).rejects.toMatchObject({ code: 'Forbidden' });
    await expect(app.services.projectClaims.declare(operator, owner, { slug: 'shared-by-cluster', name: 'Shared' })).rejects.toMatchObject({ code: 'GrantRevoked' });
  });
});
