import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { insertUserOrgMembership } from '../../src/orgs/org-store.ts';
import { insertUser } from '../../src/users/user-store.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { currentBackend, startReplica, startSibling, startTestApp, type TestApp } from '../support/test-app.ts';

// The in-process caches (src/caches/README.md) change when a write commits, never when its statement is sent, and
// are kept by versions the writing transaction moves, so another server process on the same database sees the
// write on its very next request too.

let app: TestApp;
/** A second server over the same database: its own process state on PostgreSQL, a sibling container on PGlite. */
let other: TestApp;
let fx: AccessFixture;

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app, 'cache-project');
  other = app.backend === 'postgres' ? await startReplica(app) : await startSibling(app, app.keys);
  await fx.call('POST', '/api/v3/secrets/raw/CACHED', { workspaceId: fx.projectId, environment: 'dev', secretValue: 'cached-value' });
});
afterAll(async () => {
  await other?.close();
  await app?.close();
});

/**
 * PostgreSQL only: the test holds inserts into the audit log (LOCK TABLE … IN SHARE MODE) so that a write stops
 * after its own statements were sent and before it commits (the unit of work writes its audit rows last); PGlite
 * has a single connection, where nothing can be read in between.
 */
const onPostgres = test.skipIf(currentBackend() !== 'postgres');

const listRoot = (target: TestApp, token: string) => target.request('GET', '/api/v3/secrets/raw', { token, query: { workspaceId: fx.projectId, environment: 'dev' } });

const revoke = (token: string) => app.request('POST', '/api/v1/auth/token/revoke', { token, body: { accessToken: token } });

const removeMembership = (identityId: string) => app.request('DELETE', `/api/v2/workspace/${fx.projectId}/identity-memberships/${identityId}`, { token: fx.token });

describe('a revocation made in this process', () => {
  onPostgres(
    'on PostgreSQL only (PGlite has one connection: nothing reads between a write and its commit): a token read by a request while its revocation was being written is refused by the next request',
    async () => {
      for (let round = 0; round < 3; round++) {
        const { token } = await fx.identity(`held-revoke-${round}`, 'member', 'viewer');
        expect((await listRoot(app, token)).status).toBe(200);
        let revoked!: Promise<{ status: number }>;
        let read!: Promise<{ status: number }>;
        const client = new pg.Client({ connectionString: app.databaseUrl });
        await client.connect();
        try {
          await client.query('BEGIN');
          await client.query('LOCK TABLE audit_logs IN SHARE MODE');
          revoked = revoke(token);
          await waitForBlocked(client, 1); // the revocation's UPDATE is sent; its audit row waits, so it has not committed
          read = listRoot(app, token); // authenticates (reads the token row: not revoked yet), then waits to audit
          await waitForBlocked(client, 2);
          await client.query('COMMIT');
        } finally {
          await client.end();
        }
        expect((await revoked).status).toBe(200);
        await read;
        const next = await listRoot(app, token);
        expect(next.status).toBe(401);
      }
    },
  );

  test('a token revoked while reads are in flight is refused by the very next request', async () => {
    for (let round = 0; round < 5; round++) {
      const { token } = await fx.identity(`racing-revoke-${round}`, 'member', 'viewer');
      expect((await listRoot(app, token)).status).toBe(200);
      const before = Array.from({ length: 4 }, () => listRoot(app, token));
      const revoked = revoke(token);
      const during = Array.from({ length: 4 }, () => listRoot(app, token));
      expect((await revoked).status).toBe(200);
      await Promise.all([...before, ...during]);
      expect((await listRoot(app, token)).status).toBe(401);
      expect((await listRoot(other, token)).status).toBe(401);
    }
  });
});

describe('a role removed in this process', () => {
  onPostgres(
    'on PostgreSQL only (PGlite has one connection: nothing reads between a write and its commit): a permission read by a request while the removal was being written is not used by the next request',
    async () => {
      for (let round = 0; round < 3; round++) {
        const viewer = await fx.identity(`held-role-${round}`, 'member', 'viewer');
        expect((await listRoot(app, viewer.token)).status).toBe(200);
        let removed!: Promise<{ status: number }>;
        let read!: Promise<{ status: number }>;
        const client = new pg.Client({ connectionString: app.databaseUrl });
        await client.connect();
        try {
          await client.query('BEGIN');
          await client.query('LOCK TABLE audit_logs IN SHARE MODE');
          removed = removeMembership(viewer.id);
          await waitForBlocked(client, 1);
          read = listRoot(app, viewer.token); // reads the membership (still there) and its permissions, then waits to audit
          await waitForBlocked(client, 2);
          await client.query('COMMIT');
        } finally {
          await client.end();
        }
        expect((await removed).status).toBe(200);
        await read;
        expectRefused((await listRoot(app, viewer.token)).status);
      }
    },
  );

  test('a membership removed while reads are in flight is refused by the very next request, through either server', async () => {
    for (let round = 0; round < 5; round++) {
      const viewer = await fx.identity(`racing-role-${round}`, 'member', 'viewer');
      expect((await listRoot(app, viewer.token)).status).toBe(200);
      expect((await listRoot(other, viewer.token)).status).toBe(200);
      const before = Array.from({ length: 4 }, () => listRoot(app, viewer.token));
      const removed = removeMembership(viewer.id);
      const during = Array.from({ length: 4 }, () => listRoot(app, viewer.token));
      expect((await removed).status).toBe(200);
      await Promise.all([...before, ...during]);
      expectRefused((await listRoot(app, viewer.token)).status);
      expectRefused((await listRoot(other, viewer.token)).status);
    }
  });
});

describe('another server on the same database', () => {
  test('a token revoked through one server is refused by the next request through the other', async () => {
    const { token } = await fx.identity('revoked-elsewhere', 'member', 'viewer');
    for (let read = 0; read < 3; read++) expect((await listRoot(other, token)).status).toBe(200);
    expect((await revoke(token)).status).toBe(200);
    expect((await listRoot(other, token)).status).toBe(401);
  });

  test('a role changed through one server holds for the next request through the other', async () => {
    const viewer = await fx.identity('demoted-elsewhere', 'member', 'viewer');
    for (let read = 0; read < 3; read++) expect((await listRoot(other, viewer.token)).status).toBe(200);
    await fx.call('PATCH', `/api/v2/workspace/${fx.projectId}/identity-memberships/${viewer.id}`, { roles: [{ role: 'no-access' }] });
    expect((await listRoot(other, viewer.token)).status).toBe(403);
  });

  // The data-loss case: a folder that vanished must be a 404, never an empty listing (an operator reading the
  // empty listing would empty the Secret synced from it).
  test('a folder deleted through one server is a 404 on the next request through the other, not an empty listing', async () => {
    await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/', name: 'vanishing' });
    await fx.call('POST', '/api/v3/secrets/raw/IN_FOLDER', { workspaceId: fx.projectId, environment: 'dev', secretPath: '/vanishing', secretValue: 'v' });
    const listFolder = () =>
      other.request('GET', '/api/v3/secrets/raw', { token: fx.token, query: { workspaceId: fx.projectId, environment: 'dev', secretPath: '/vanishing' } });
    for (let read = 0; read < 3; read++) expect((await listFolder()).body.secrets).toHaveLength(1);
    await fx.call('DELETE', '/api/v1/folders/vanishing', { workspaceId: fx.projectId, environment: 'dev', path: '/' });
    const after = await listFolder();
    expect(after.status).toBe(404);
    expect(after.body.secrets).toBeUndefined();
  });

  // A machine caller's get is answered from the folder's listing kept by revision (secret-reader.ts): a change
  // committed through the other server is in the next get, and a deleted secret is a 404, not its last value.
  test('a secret updated or deleted through one server is read as it now is by the next get through the other', async () => {
    const { token } = await fx.identity('getter-elsewhere', 'member', 'viewer');
    await fx.call('POST', '/api/v3/secrets/raw/GOT', { workspaceId: fx.projectId, environment: 'dev', secretValue: 'first' });
    const get = () => other.request('GET', '/api/v3/secrets/raw/GOT', { token, query: { workspaceId: fx.projectId, environment: 'dev' } });
    for (let read = 0; read < 3; read++) expect((await get()).body.secret.secretValue).toBe('first');
    await fx.call('PATCH', '/api/v3/secrets/raw/GOT', { workspaceId: fx.projectId, environment: 'dev', secretValue: 'second' });
    const updated = await get();
    expect(updated.body.secret).toMatchObject({ secretKey: 'GOT', secretValue: 'second', version: 2 });
    await fx.call('DELETE', '/api/v3/secrets/raw/GOT', { workspaceId: fx.projectId, environment: 'dev' });
    const deleted = await get();
    expect(deleted.status).toBe(404);
    expect(deleted.body.secret).toBeUndefined();
  });

  // Every shared write looks up its environment's approval policies through a versioned cache: a policy made or
  // removed through one server decides the very next write through the other.
  test('an approval policy created or deleted through one server holds for the next write through the other', async () => {
    const writer = await fx.identity('writer-elsewhere', 'member', 'member');
    const write = (value: string) =>
      other.request('PATCH', '/api/v3/secrets/raw/CACHED', { token: writer.token, body: { workspaceId: fx.projectId, environment: 'dev', secretValue: value } });
    for (let attempt = 0; attempt < 3; attempt++) expect((await write(`before-${attempt}`)).status).toBe(200);
    const approver = await insertUser(app.database.db, {
      email: 'approver@cache.example',
      username: 'approver@cache.example',
      firstName: 'A',
      lastName: null,
      passwordHash: null,
    });
    await insertUserOrgMembership(app.database.db, { orgId: fx.orgId, userId: approver.id, role: 'member', status: 'accepted', inviteEmail: null });
    await fx.call('POST', `/api/v2/workspace/${fx.projectId}/memberships`, { emails: [approver.email], roleSlugs: ['admin'] });
    const policy = await fx.call('POST', '/api/v1/secret-approvals', {
      workspaceId: fx.projectId,
      name: 'cache gate',
      environment: 'dev',
      secretPath: '/',
      approvers: [{ type: 'user', id: approver.id }],
      approvals: 1,
    });
    const refused = await write('while-protected');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('ApprovalRequired');
    await fx.call('DELETE', `/api/v1/secret-approvals/${policy.approval.id}`);
    expect((await write('after')).status).toBe(200);
  });

  // Who may use a project (a SecretsProject's claim and the namespace grants) is a versioned look-up too, which every
  // reconcile of every resource using the project asks: a grant revoked through one server refuses the very next
  // use the other server's operator checks.
  test('a namespace grant revoked through one server refuses the next use checked through the other', async () => {
    const operator = await fx.operatorActor('claims-elsewhere');
    const declaring = { cluster: 'local', namespace: 'owner-elsewhere', name: 'declared', uid: 'uid-elsewhere' };
    const { projectId } = await app.services.projectClaims.declare(operator, declaring, { slug: 'claimed-elsewhere', name: 'Claimed elsewhere' });
    const use = (namespace: string) => other.services.projectClaims.authorizeUse(operator, { ...declaring, allowedNamespaces: [] }, { cluster: 'local', namespace });
    for (let check = 0; check < 3; check++) expect(await use('owner-elsewhere')).toEqual({ projectId, slug: 'claimed-elsewhere' });
    await expect(use('guest-elsewhere')).rejects.toMatchObject({ code: 'Forbidden' });
    const granted = await fx.call('POST', `/api/v1/workspace/${projectId}/namespace-grants`, { namespace: 'guest-elsewhere' });
    expect(await use('guest-elsewhere')).toEqual({ projectId, slug: 'claimed-elsewhere' });
    await fx.call('DELETE', `/api/v1/workspace/${projectId}/namespace-grants/${granted.grant.id}`);
    await expect(use('guest-elsewhere')).rejects.toMatchObject({ code: 'Forbidden' });
    const own = (await fx.call('GET', `/api/v1/workspace/${projectId}/namespace-grants`)).grants.find(
      (grant: { namespace: string }) => grant.namespace === 'owner-elsewhere',
    );
    await fx.call('DELETE', `/api/v1/workspace/${projectId}/namespace-grants/${own.id}`);
    await expect(use('owner-elsewhere')).rejects.toMatchObject({ code: 'GrantRevoked' });
  });

  test('an environment and a project deleted through one server are 404 through the other', async () => {
    const created = await fx.call('POST', '/api/v2/workspace', { projectName: 'Doomed', slug: 'doomed-cache' });
    const projectId: string = created.project.id;
    await fx.call('POST', '/api/v3/secrets/raw/DOOMED', { workspaceId: projectId, environment: 'staging', secretValue: 'v' });
    const list = (environment: string) => other.request('GET', '/api/v3/secrets/raw', { token: fx.token, query: { workspaceId: projectId, environment } });
    expect((await list('staging')).status).toBe(200);
    const environments: { id: string; slug: string }[] = (await fx.call('GET', `/api/v1/workspace/${projectId}`)).workspace.environments;
    const staging = environments.find((environment) => environment.slug === 'staging')!;
    await fx.call('DELETE', `/api/v1/workspace/${projectId}/environments/${staging.id}`);
    expect((await list('staging')).status).toBe(404);
    expect((await list('dev')).status).toBe(200);
    await fx.call('DELETE', `/api/v1/workspace/${projectId}`);
    expect((await list('dev')).status).toBe(404);
  });
});

/** Refused: 403 for a project the caller is no longer a member of (404 where a project's existence is hidden). */
function expectRefused(status: number): void {
  expect([403, 404]).toContain(status);
}

/** Until `count` statements wait on the held audit log. */
async function waitForBlocked(client: pg.Client, count: number): Promise<void> {
  for (;;) {
    const waiting = await client.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'audit_logs' AND NOT l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    if (waiting.rows[0]!.count >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
