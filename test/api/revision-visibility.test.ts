import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { insertIdentity } from '../../src/identities/identity-store.ts';
import { insertIdentityOrgMembership, insertOrganization } from '../../src/orgs/org-store.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { openEventStream, waitUntil } from '../support/event-stream.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Metadata only to callers who may read it: the installation's newest
 * revision counts every project's and organization's writes, so no caller is
 * told it; a caller is told revisions of what it may read (or of its own
 * writes), the installation id only as a member of the organization, and the
 * names of folders only where it may read.
 */
const app: TestApp = await startTestApp();
let fx: AccessFixture;
let base: string;
/** A project the viewer is not a member of: its writes are what others do. */
let hiddenProjectId: string;
const tokens = { viewer: '', outsider: '', noAccess: '', stranger: '' };

const write = (name: string, projectId: string) => fx.call('POST', `/api/v3/secrets/raw/${name}`, { workspaceId: projectId, environment: 'dev', secretValue: 'value' });
const globalLatest = () => app.services.changes.latestRevision(app.database.db);
const projectLatest = (projectId: string) => app.services.changes.latestRevision(app.database.db, projectId);

beforeAll(async () => {
  fx = await accessFixture(app, 'revision-visibility');
  hiddenProjectId = (await fx.call('POST', '/api/v2/workspace', { projectName: 'Hidden', slug: 'revision-hidden' })).project.id;
  tokens.viewer = (await fx.identity('viewer', 'member', 'viewer')).token;
  tokens.outsider = (await fx.identity('outsider', 'member')).token;
  tokens.noAccess = (await fx.identity('no-access', 'no-access')).token;
  const org = await insertOrganization(app.database.db, { name: 'Stranger', slug: 'stranger-org' });
  const stranger = await insertIdentity(app.database.db, { name: 'stranger-admin', authMethod: 'token-auth' });
  await insertIdentityOrgMembership(app.database.db, { orgId: org.id, identityId: stranger.id, role: 'admin' });
  tokens.stranger = await fx.issueToken(stranger.id);
  await write('VISIBLE', fx.projectId);
  // others write after: the installation's newest revision is past anything the viewer may read
  for (let index = 0; index < 3; index++) await write(`HIDDEN_${index}`, hiddenProjectId);
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => app?.close());

describe('GET /api/v1/operator/installation', () => {
  test('answers the newest revision of the projects the caller may read, never the installation’s', async () => {
    const viewed = await app.request('GET', '/api/v1/operator/installation', { token: tokens.viewer });
    expect(viewed.status).toBe(200);
    expect(await projectLatest(fx.projectId)).toBeLessThan(await globalLatest());
    expect(viewed.body).toEqual({ installationId: expect.any(String), revision: await projectLatest(fx.projectId), cluster: null });
    // the org admin reads every project: the installation's newest is its own
    const admin = await app.request('GET', '/api/v1/operator/installation', { token: fx.token });
    expect(admin.body).toEqual({ installationId: viewed.body.installationId, revision: await globalLatest(), cluster: null });
  });

  test('an organization member in no project is told the installation id (an operator before its first project), and revision 0', async () => {
    const outsider = await app.request('GET', '/api/v1/operator/installation', { token: tokens.outsider });
    expect(outsider.status).toBe(200);
    expect(outsider.body).toEqual({ installationId: expect.any(String), revision: 0, cluster: null });
  });

  test('another organization is told nothing of this one’s writes; the no-access organization role is refused (403), nothing written', async () => {
    const stranger = await app.request('GET', '/api/v1/operator/installation', { token: tokens.stranger });
    expect(stranger.body).toMatchObject({ revision: 0 });
    const before = await snapshotDatabase(app.database);
    const refused = await app.request('GET', '/api/v1/operator/installation', { token: tokens.noAccess });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ statusCode: 403, error: 'PermissionDenied', code: 'PermissionDenied', message: expect.any(String), reqId: expect.any(String) });
    const { reqId: _reqId, ...answer } = refused.body;
    expect(JSON.stringify(answer)).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}/);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('the change stream', () => {
  test('starts at the newest revision the caller may read, and its pings never carry a revision of another project', async () => {
    const readable = await projectLatest(fx.projectId);
    const open = await openEventStream(`${base}/api/v1/changes/stream`, { token: tokens.viewer });
    try {
      const [ready] = await waitUntil('the ready event', () => open.events.length > 0 && open.events);
      expect(ready).toEqual({ id: String(readable), event: 'ready', data: { revision: readable } });
      const unseen: number[] = [];
      for (let index = 0; index < 3; index++) {
        await write(`UNSEEN_${index}`, hiddenProjectId);
        unseen.push(await globalLatest());
      }
      await waitUntil('a ping after the unseen writes', () => open.events.filter((event) => event.event === 'ping').length >= 2);
      // the positive event after: a change the viewer may read
      await write('MARKER', fx.projectId);
      const marker = await globalLatest();
      await waitUntil('the marker', () => open.changes().length > 0);
      expect(open.changes().map((event) => event.data.revision)).toEqual([marker]);
      const announced = open.events.filter((event) => event.event !== 'change').map((event) => Number(event.data.revision));
      expect(announced.length).toBeGreaterThanOrEqual(3);
      expect(announced.filter((revision) => revision !== readable && revision !== marker)).toEqual([]);
      expect(announced.some((revision) => unseen.includes(revision))).toBe(false);
    } finally {
      open.close();
    }
  });

  test('another organization’s stream starts at 0 and stays there while this one writes', async () => {
    const open = await openEventStream(`${base}/api/v1/changes/stream`, { token: tokens.stranger });
    try {
      const [ready] = await waitUntil('the ready event', () => open.events.length > 0 && open.events);
      expect(ready).toEqual({ id: '0', event: 'ready', data: { revision: 0 } });
      await write('WHILE_STRANGER_WATCHES', fx.projectId);
      await waitUntil('two pings', () => open.events.filter((event) => event.event === 'ping').length >= 2);
      expect(open.events.every((event) => event.event !== 'change' && event.data.revision === 0)).toBe(true);
    } finally {
      open.close();
    }
  });
});

describe('Coffer-Revision', () => {
  test('answers a write its own revision; a refused write and a read answer none', async () => {
    const written = await app.request('POST', '/api/v3/secrets/raw/OWN_WRITE', {
      token: fx.token,
      body: { workspaceId: fx.projectId, environment: 'dev', secretValue: 'value' },
    });
    expect(written.headers['coffer-revision']).toBe(String(await projectLatest(fx.projectId)));
    for (const token of [tokens.viewer, tokens.stranger, tokens.outsider]) {
      const refused = await app.request('POST', '/api/v3/secrets/raw/REFUSED_WRITE', {
        token,
        body: { workspaceId: fx.projectId, environment: 'dev', secretValue: 'value' },
      });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(refused.headers['coffer-revision']).toBeUndefined();
    }
    const read = await app.request('GET', '/api/v3/secrets/raw', { token: tokens.viewer, query: { workspaceId: fx.projectId, environment: 'dev' } });
    expect(read.status).toBe(200);
    expect(read.headers['coffer-revision']).toBeUndefined();
  });
});

describe('GET /api/v1/operator/secrets', () => {
  test('names only the folders the caller may read, not the source of an import it may not read', async () => {
    await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/', name: 'app' });
    await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'staging', path: '/', name: 'restricted' });
    await fx.call('POST', '/api/v3/secrets/raw/RESTRICTED', { workspaceId: fx.projectId, environment: 'staging', secretPath: '/restricted', secretValue: 'hidden' });
    await fx.call('POST', '/api/v1/secret-imports', {
      workspaceId: fx.projectId,
      environment: 'dev',
      path: '/app',
      import: { environment: 'staging', path: '/restricted' },
    });
    await fx.call('POST', `/api/v1/workspace/${fx.projectId}/roles`, {
      slug: 'app-only',
      name: 'App only',
      permissions: [{ subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } }],
    });
    const reader = await fx.identity('app-only', 'member', 'app-only');
    const listing = await app.request('GET', '/api/v1/operator/secrets', {
      token: reader.token,
      query: { projectId: fx.projectId, environment: 'dev', secretPath: '/app' },
    });
    expect(listing.status).toBe(200);
    expect(listing.body.imports).toEqual([]);
    expect(listing.body.reads.map((read: { path: string }) => read.path)).toEqual(['/app']);
    expect(JSON.stringify(listing.body)).not.toContain('restricted');
    // the project admin, who may read it, is told it
    const admin = await app.request('GET', '/api/v1/operator/secrets', { token: fx.token, query: { projectId: fx.projectId, environment: 'dev', secretPath: '/app' } });
    expect(admin.body.reads.map((read: { path: string }) => read.path).sort()).toEqual(['/app', '/restricted']);
  });
});
