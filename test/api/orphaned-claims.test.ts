import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Dropping an orphaned project claim (issue 27): a claim is never taken over, so one whose cluster is gone
 * or whose SecretsProject was deleted without its finalizer would lock its name and its project's place in
 * that cluster forever. An organization admin drops it (DELETE /api/v1/project-claims); nobody else can.
 */

const app: TestApp = await startTestApp();
let fx: AccessFixture;
/** The operator of cluster `gone` (unregistered below) and of cluster `kept`. */
let goneOperator: { id: string; token: string };
let keptOperator: { id: string; token: string };
let goneClusterId: string;

beforeAll(async () => {
  fx = await accessFixture(app, 'orphans-project');
  goneOperator = await fx.identity('gone-operator', 'member');
  keptOperator = await fx.identity('kept-operator', 'member');
  goneClusterId = await fx.bindToCluster(goneOperator.id, 'gone');
  await fx.bindToCluster(keptOperator.id, 'kept');
});
afterAll(async () => app?.close());

const as = (token: string) => (method: string, url: string, body?: unknown, query?: Record<string, string>) => app.request(method, url, { token, body, query });
const declare = (token: string, claimant: Record<string, string>, slug: string) => as(token)('POST', '/api/v1/operator/project-claims', { claimant, slug, name: slug });
const drop = (token: string, query: Record<string, string>) => as(token)('DELETE', '/api/v1/project-claims', undefined, query);
const claimsAt = (cluster: string, namespace: string) =>
  app.database.db.selectFrom('projectClaims').select(['name', 'resourceUid']).where('cluster', '=', cluster).where('namespace', '=', namespace).execute();
const droppedEntries = (projectId: string) =>
  app.database.db
    .selectFrom('auditLogs')
    .select(['eventMetadata', 'actorMetadata'])
    .where('eventType', '=', 'delete-project-claim')
    .where('projectId', '=', projectId)
    .execute();

describe('dropping an orphaned project claim', () => {
  test('the claim of an unregistered cluster is dropped; the project stays; the name is free for the cluster registered again', async () => {
    const claimant = { namespace: 'shop', name: 'web', uid: 'uid-gone-1' };
    const made = await declare(goneOperator.token, claimant, 'gone-web');
    expect(made.body).toMatchObject({ created: true });
    expect((await as(fx.token)('DELETE', `/api/v1/clusters/${goneClusterId}`)).status).toBe(200);

    const dropped = await drop(fx.token, { cluster: 'gone', namespace: 'shop', name: 'web' });
    expect(dropped.status, JSON.stringify(dropped.body)).toBe(200);
    expect(dropped.body).toEqual({
      claim: { cluster: 'gone', namespace: 'shop', name: 'web', uid: 'uid-gone-1', projectId: made.body.projectId, createdProject: true, clusterRegistered: false },
    });
    expect(await claimsAt('gone', 'shop')).toEqual([]);
    expect((await as(fx.token)('GET', `/api/v1/workspace/${made.body.projectId}`)).status).toBe(200);
    const [entry, ...more] = await droppedEntries(made.body.projectId);
    expect(more).toEqual([]);
    expect(entry!.eventMetadata).toEqual({ cluster: 'gone', namespace: 'shop', name: 'web', droppedAsOrphan: true, clusterRegistered: false });
    expect(entry!.actorMetadata).toMatchObject({ identityId: fx.identityId });

    // the cluster registered again: a new SecretsProject of that name declares the project (through the grant of origin `created`)
    await fx.bindToCluster(goneOperator.id, 'gone');
    const again = await declare(goneOperator.token, { ...claimant, uid: 'uid-gone-2' }, 'gone-web');
    expect(again.body).toEqual({ projectId: made.body.projectId, created: false });
  });

  test('a SecretsProject deleted without its finalizer: its claim is dropped by uid, and the new one declares', async () => {
    const claimant = { namespace: 'team', name: 'api', uid: 'uid-old' };
    const made = await declare(keptOperator.token, claimant, 'kept-api');
    expect(made.body).toMatchObject({ created: true });
    const recreated = { ...claimant, uid: 'uid-new' };
    expect((await declare(keptOperator.token, recreated, 'kept-api')).body).toMatchObject({ statusCode: 403, code: 'ProjectClaimed' });

    const before = await snapshotDatabase(app.database);
    const wrongUid = await drop(fx.token, { cluster: 'kept', namespace: 'team', name: 'api', uid: 'uid-new' });
    expect(wrongUid.body).toMatchObject({ statusCode: 404, code: 'ClaimNotFound' });
    expect(await snapshotDatabase(app.database)).toEqual(before);

    const dropped = await drop(fx.token, { cluster: 'kept', namespace: 'team', name: 'api', uid: 'uid-old' });
    expect(dropped.body.claim).toMatchObject({ uid: 'uid-old', createdProject: true, clusterRegistered: true });
    expect(await droppedEntries(made.body.projectId)).toEqual([
      expect.objectContaining({ eventMetadata: { cluster: 'kept', namespace: 'team', name: 'api', droppedAsOrphan: true, clusterRegistered: true } }),
    ]);
    expect((await declare(keptOperator.token, recreated, 'kept-api')).body).toEqual({ projectId: made.body.projectId, created: false });
    expect(await claimsAt('kept', 'team')).toEqual([{ name: 'api', resourceUid: 'uid-new' }]);
  });

  test('only an organization admin drops a claim; anyone else, an unknown claim and bad input change nothing', async () => {
    const claimant = { namespace: 'guarded', name: 'web', uid: 'uid-guarded' };
    const made = await declare(keptOperator.token, claimant, 'kept-guarded');
    expect(made.body).toMatchObject({ created: true });
    const projectAdmin = await fx.identity('orphans-project-admin', 'member', 'admin');
    const foreign = await fx.foreignAdmin('orphans-elsewhere');
    const place = { cluster: 'kept', namespace: 'guarded', name: 'web' };

    const before = await snapshotDatabase(app.database, ['login_throttles']);
    for (const token of [keptOperator.token, projectAdmin.token]) {
      expect((await drop(token, place)).body).toMatchObject({ statusCode: 403 });
    }
    expect((await drop(foreign, place)).body).toMatchObject({ statusCode: 404, code: 'ClaimNotFound' });
    expect((await drop(fx.token, { ...place, name: 'nobody' })).body).toMatchObject({ statusCode: 404, code: 'ClaimNotFound' });
    expect((await drop(fx.token, { ...place, namespace: 'Not_A_Namespace' })).status).toBe(422);
    expect((await drop(fx.token, { cluster: 'kept', namespace: 'guarded' })).status).toBe(422);
    expect((await as(fx.token)('DELETE', '/api/v1/project-claims')).status).toBe(422);
    expect(await snapshotDatabase(app.database, ['login_throttles'])).toEqual(before);
    expect(await claimsAt('kept', 'guarded')).toEqual([{ name: 'web', resourceUid: 'uid-guarded' }]);
  });
});
