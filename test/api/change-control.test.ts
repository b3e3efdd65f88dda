import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { insertUser } from '../../src/users/user-store.ts';
import { insertUserOrgMembership } from '../../src/orgs/org-store.ts';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Change control (issue 33): approval policies and change requests, and point-in-time restore. Both backends.
 */
let app: TestApp;
let admin: Awaited<ReturnType<typeof bootstrap>>;
let projectId: string;
const users: Record<'committer' | 'approverA' | 'approverB', { id: string; token: string }> = {} as never;

async function call(method: string, url: string, token: string, body?: unknown, query?: Record<string, string>) {
  return app.request(method, url, { token, body, query });
}

async function ok(method: string, url: string, token: string, body?: unknown, query?: Record<string, string>) {
  const response = await call(method, url, token, body, query);
  if (response.status !== 200) throw new Error(`${method} ${url} → ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

async function makeUser(name: string, role: string) {
  const user = await insertUser(app.database.db, { email: `${name}@example.com`, username: `${name}@example.com`, firstName: name, lastName: null, passwordHash: null });
  await insertUserOrgMembership(app.database.db, { orgId: admin.orgId, userId: user.id, role: 'member', status: 'accepted', inviteEmail: null });
  await ok('POST', `/api/v2/workspace/${projectId}/memberships`, admin.token, { emails: [user.email], roleSlugs: [role] });
  const { accessToken } = await app.services.auth.issueUserToken(app.database.db, user.id, admin.orgId, {
    authMethod: 'email',
    origin: { ip: '127.0.0.1', userAgent: 'change-control-test', userAgentType: 'other' },
  });
  return { id: user.id, token: accessToken };
}

const latestRevision = async () => app.services.changes.latestRevision(app.database.db, projectId);
const secretRow = (key: string, environment = 'dev') =>
  app.database.db
    .selectFrom('secrets')
    .innerJoin('secretFolders', 'secretFolders.id', 'secrets.folderId')
    .innerJoin('projectEnvironments', 'projectEnvironments.id', 'secretFolders.envId')
    .select(['secrets.id', 'secrets.key', 'secrets.version'])
    .where('projectEnvironments.projectId', '=', projectId)
    .where('projectEnvironments.slug', '=', environment)
    .where('secrets.key', '=', key)
    .executeTakeFirst();
const auditCount = async (type: string) => (await app.database.db.selectFrom('auditLogs').select('id').where('eventType', '=', type).execute()).length;
const valueOf = async (key: string, environment = 'dev') =>
  (await ok('GET', `/api/v3/secrets/raw/${key}`, admin.token, undefined, { workspaceId: projectId, environment, secretPath: '/' })).secret.secretValue;
const write = (method: string, key: string, token: string, body: Record<string, unknown> = {}, environment = 'dev') =>
  call(method, `/api/v3/secrets/raw/${key}`, token, { workspaceId: projectId, environment, secretPath: '/', ...body });

beforeAll(async () => {
  app = await startTestApp();
  admin = await bootstrap(app);
  projectId = (await ok('POST', '/api/v2/workspace', admin.token, { projectName: 'Change control' })).project.id;
  users.committer = await makeUser('committer', 'member');
  users.approverA = await makeUser('approver-a', 'admin');
  users.approverB = await makeUser('approver-b', 'admin');
  await ok('POST', '/api/v3/secrets/raw/DB_URL', admin.token, { workspaceId: projectId, environment: 'dev', secretValue: 'postgres://one' });
});
afterAll(async () => app?.close());

describe('approval policies and change requests', () => {
  let policyId: string;

  test('a policy names its approvers and how many approvals a change needs', async () => {
    const body = await ok('POST', '/api/v1/secret-approvals', admin.token, {
      workspaceId: projectId,
      name: 'production gate',
      environment: 'dev',
      secretPath: '/**',
      approvers: [{ type: 'user', id: users.approverA.id }, { id: users.approverB.id }],
      approvals: 2,
    });
    policyId = body.approval.id;
    expect(body.approval).toMatchObject({ name: 'production gate', secretPath: '/**', approvals: 2, enforcementLevel: 'hard', environment: { slug: 'dev' } });
    expect(body.approval.approvers.map((approver: { id: string }) => approver.id).sort()).toEqual([users.approverA.id, users.approverB.id].sort());
    const rows = await app.database.db.selectFrom('secretApprovalPolicyApprovers').select('userId').where('policyId', '=', policyId).execute();
    expect(rows).toHaveLength(2);
    expect(await auditCount('create-secret-approval-policy')).toBe(1);
  });

  test.each([
    ['more approvals than approvers', { approvals: 3 }, 400, 'TooFewApprovers'],
    ['an approver outside the project', { approvers: [{ id: '9d0f7c3e-1111-4111-8111-111111111111' }] }, 400, 'ApproverNotMember'],
    ['an approver id that is no user id', { approvers: [{ id: 'not-a-user-id' }], approvals: 1 }, 400, 'ApproverNotMember'],
    ['a taken name', {}, 400, 'PolicyExists'],
    ['no approvers', { approvers: [] }, 422, 'ValidationFailure'],
  ])('%s → refused, nothing written', async (_name, change, status, code) => {
    const before = await snapshotDatabase(app.database);
    const response = await call('POST', '/api/v1/secret-approvals', admin.token, {
      workspaceId: projectId,
      name: 'production gate',
      environment: 'dev',
      secretPath: '/**',
      approvers: [{ id: users.approverA.id }, { id: users.approverB.id }],
      approvals: 2,
      ...change,
    });
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, reqId: expect.any(String) });
    if (status === 400) expect(response.body.code).toBe(code);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test("a user's write becomes a request: nothing reaches the secrets or the change feed", async () => {
    const revision = await latestRevision();
    const response = await write('POST', 'API_KEY', users.committer.token, { secretValue: 'proposed-value-1' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      approval: expect.objectContaining({ policyId, status: 'open', hasMerged: false, committerUserId: users.committer.id, isReplicated: false, bypassReason: null }),
    });
    expect(await secretRow('API_KEY')).toBeUndefined();
    expect(await latestRevision()).toBe(revision);
    expect(await auditCount('secret-approval-request')).toBe(1);
    const stored = await app.database.db.selectFrom('secretApprovalRequestSecrets').selectAll().execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.encryptedValue!.toString('utf8')).not.toContain('proposed-value-1');
  });

  test('the requests listed by committer: the committer’s own; a committer that is no user id matches none (200, not a database error)', async () => {
    const list = (committer: string) => call('GET', '/api/v1/secret-approval-requests', admin.token, undefined, { workspaceId: projectId, committer });
    const own = await list(users.committer.id);
    expect(own.status).toBe(200);
    expect(own.body.approvals.length).toBeGreaterThan(0);
    expect(await list('not-a-user-id')).toMatchObject({ status: 200, body: { approvals: [] } });
  });

  test("a user's single write through v4 (the console's) becomes a request as through v3: create, update and delete", async () => {
    const revision = await latestRevision();
    const requests = (await app.database.db.selectFrom('secretApprovalRequests').select('id').execute()).length;
    const v4 = (method: string, key: string, body: Record<string, unknown> = {}) =>
      app.request(method, `/api/v4/secrets/${key}`, { token: users.committer.token, body: { projectId, environment: 'dev', secretPath: '/', ...body } });
    const before = await secretRow('DB_URL');
    for (const [method, key, body] of [
      ['POST', 'V4_KEY', { secretValue: 'proposed-through-v4' }],
      ['PATCH', 'DB_URL', { secretValue: 'changed-through-v4' }],
      ['DELETE', 'DB_URL', {}],
    ] as const) {
      const response = await v4(method, key, body);
      expect(response.status, `${method} ${JSON.stringify(response.body)}`).toBe(200);
      expect(response.body).toEqual({ approval: expect.objectContaining({ policyId, status: 'open', committerUserId: users.committer.id }) });
    }
    expect(await secretRow('V4_KEY')).toBeUndefined();
    expect(await secretRow('DB_URL')).toEqual(before);
    expect(await latestRevision()).toBe(revision);
    expect((await app.database.db.selectFrom('secretApprovalRequests').select('id').execute()).length).toBe(requests + 3);
  });

  test('a machine identity under a hard policy is refused, nothing written', async () => {
    const before = await snapshotDatabase(app.database);
    const response = await write('PATCH', 'DB_URL', admin.token, { secretValue: 'postgres://direct' });
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ code: 'ApprovalRequired' });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('two approvers, a conflicting change merged meanwhile, then a clean merge', async () => {
    const first = (await write('PATCH', 'DB_URL', users.committer.token, { secretValue: 'postgres://two' })).body.approval.id as string;
    const second = (await write('PATCH', 'DB_URL', users.committer.token, { secretValue: 'postgres://three' })).body.approval.id as string;
    const requests = '/api/v1/secret-approval-requests';

    const detail = await ok('GET', `${requests}/${first}`, users.approverA.token);
    expect(detail.approval.commits).toEqual([
      expect.objectContaining({ op: 'update', secretKey: 'DB_URL', secretValue: 'postgres://two', secret: expect.objectContaining({ secretValue: 'postgres://one' }) }),
    ]);

    expect((await call('POST', `${requests}/${first}/review`, users.committer.token, { status: 'approved' })).status).toBe(403);
    expect((await call('POST', `${requests}/${first}/merge`, users.approverA.token, {})).body).toMatchObject({ statusCode: 400, code: 'NotEnoughApprovals' });
    for (const request of [first, second]) {
      for (const approver of [users.approverA, users.approverB]) await ok('POST', `${requests}/${request}/review`, approver.token, { status: 'approved' });
    }

    const revision = await latestRevision();
    const merged = await ok('POST', `${requests}/${second}/merge`, users.approverB.token, {});
    expect(merged.approval).toMatchObject({ hasMerged: true, status: 'closed', statusChangedByUserId: users.approverB.id });
    expect(await valueOf('DB_URL')).toBe('postgres://three');
    const feed = await app.services.changes.changesCommittedWith(app.database.db, await latestRevision());
    expect(feed).toEqual([expect.objectContaining({ kind: 'secret', environmentSlug: 'dev', secretPath: '/' })]);
    expect(feed[0]!.revision).toBe(revision + 1);

    const before = await snapshotDatabase(app.database);
    const conflict = await call('POST', `${requests}/${first}/merge`, users.approverA.token, {});
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ statusCode: 409, code: 'MergeConflict', message: expect.stringContaining('DB_URL') });
    expect(await snapshotDatabase(app.database)).toEqual(before);
    expect(await valueOf('DB_URL')).toBe('postgres://three');

    const listed = await ok('GET', requests, users.committer.token, undefined, { workspaceId: projectId, status: 'close' });
    expect(listed.approvals).toEqual([expect.objectContaining({ id: second, hasMerged: true, mergedRevision: revision + 1, reviewers: expect.any(Array) })]);
    expect(JSON.stringify(listed)).not.toContain('postgres://');
    expect(await auditCount('secret-approval-merged')).toBe(1);
  });

  test('close and reopen by the committer, audited; a stranger to the request may not', async () => {
    const id = (await write('DELETE', 'DB_URL', users.committer.token)).body.approval.id as string;
    const url = `/api/v1/secret-approval-requests/${id}/status`;
    expect((await ok('POST', url, users.committer.token, { status: 'close' })).approval.status).toBe('closed');
    expect((await ok('POST', url, users.committer.token, { status: 'open' })).approval.status).toBe('open');
    expect(await auditCount('secret-approval-closed')).toBe(1);
    expect(await auditCount('secret-approval-reopened')).toBe(1);
    expect((await call('POST', url, admin.token, { status: 'close' })).body).toMatchObject({ statusCode: 403, code: 'UserRequired' });
    const counts = await ok('GET', '/api/v1/secret-approval-requests/count', users.committer.token, undefined, { workspaceId: projectId });
    expect(counts.approvals.open).toBeGreaterThanOrEqual(2);
  });

  test('a soft policy lets an approver merge early with an audited reason, and identities write directly (audited)', async () => {
    await ok('PATCH', `/api/v1/secret-approvals/${policyId}`, admin.token, { enforcementLevel: 'soft' });
    const id = (await write('POST', 'FEATURE_FLAG', users.committer.token, { secretValue: 'on' })).body.approval.id as string;
    const merged = await ok('POST', `/api/v1/secret-approval-requests/${id}/merge`, users.approverA.token, { bypassReason: 'incident 42' });
    expect(merged.approval).toMatchObject({ hasMerged: true, bypassReason: 'incident 42' });
    expect(await valueOf('FEATURE_FLAG')).toBe('on');
    expect((await write('PATCH', 'FEATURE_FLAG', admin.token, { secretValue: 'off' })).status).toBe(200);
    const audit = await app.database.db
      .selectFrom('auditLogs')
      .select('eventMetadata')
      .where('eventType', '=', 'update-secret')
      .orderBy('createdAt', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit.eventMetadata).toMatchObject({ approvalBypass: { policyId } });
    await ok('DELETE', `/api/v1/secret-approvals/${policyId}`, admin.token);
  });
});

describe("a user's batch write to a protected place", () => {
  const env = 'prod';
  const requests = '/api/v1/secret-approval-requests';
  let policyId: string;
  /** The shared secrets of prod, as stored (values sealed, so a changed value shows as a changed row). */
  const rows = () =>
    app.database.db
      .selectFrom('secrets')
      .innerJoin('secretFolders', 'secretFolders.id', 'secrets.folderId')
      .innerJoin('projectEnvironments', 'projectEnvironments.id', 'secretFolders.envId')
      .select(['secrets.id', 'secrets.key', 'secrets.version', 'secrets.type', 'secrets.encryptedValue'])
      .where('projectEnvironments.projectId', '=', projectId)
      .where('projectEnvironments.slug', '=', env)
      .orderBy('secrets.key')
      .orderBy('secrets.type')
      .execute();
  const batch = (method: string, token: string, secrets: unknown[], url = '/api/v3/secrets/batch/raw') =>
    call(method, url, token, { workspaceId: projectId, environment: env, secretPath: '/', secrets });
  const approve = async (requestId: string) => {
    for (const approver of [users.approverA, users.approverB]) await ok('POST', `${requests}/${requestId}/review`, approver.token, { status: 'approved' });
  };
  const merge = (requestId: string) => call('POST', `${requests}/${requestId}/merge`, users.approverA.token, {});

  beforeAll(async () => {
    for (const key of ['U1', 'U2', 'U3', 'D1', 'D2', 'D3']) await write('POST', key, admin.token, { secretValue: `${key}-old` }, env);
    const policy = await ok('POST', '/api/v1/secret-approvals', admin.token, {
      workspaceId: projectId,
      name: 'prod gate',
      environment: env,
      secretPath: '/**',
      approvers: [{ id: users.approverA.id }, { id: users.approverB.id }],
      approvals: 2,
    });
    policyId = policy.approval.id;
  });
  afterAll(async () => {
    await ok('DELETE', `/api/v1/secret-approvals/${policyId}`, admin.token);
  });

  test.each([
    ['create', 'POST', '/api/v3/secrets/batch/raw', ['C1', 'C2', 'C3'].map((key) => ({ secretKey: key, secretValue: `${key}-new` }))],
    ['update', 'PATCH', '/api/v4/secrets/batch', ['U1', 'U2', 'U3'].map((key) => ({ secretKey: key, secretValue: `${key}-new` }))],
    ['delete', 'DELETE', '/api/v3/secrets/batch/raw', ['D1', 'D2', 'D3'].map((key) => ({ secretKey: key }))],
  ] as const)('%s batch: 3 secrets open one request and write nothing; two approvals merge all 3 as one revision', async (op, method, url, items) => {
    const keys = items.map((item) => item.secretKey);
    const before = await rows();
    const revision = await latestRevision();
    const opened = await auditCount('secret-approval-request');

    const response = await batch(method, users.committer.token, [...items], url);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      approval: expect.objectContaining({ policyId, status: 'open', hasMerged: false, committerUserId: users.committer.id, isReplicated: false, bypassReason: null }),
    });
    const requestId = response.body.approval.id as string;
    expect(await rows()).toEqual(before);
    expect(await latestRevision()).toBe(revision);
    expect(await auditCount('secret-approval-request')).toBe(opened + 1);
    const stored = await app.database.db
      .selectFrom('secretApprovalRequestSecrets')
      .select(['op', 'secretKey'])
      .where('requestId', '=', requestId)
      .orderBy('secretKey')
      .execute();
    expect(stored).toEqual(keys.map((secretKey) => ({ op, secretKey })));

    const detail = await ok('GET', `${requests}/${requestId}`, users.approverA.token);
    expect(detail.approval.commits).toEqual(
      keys.map((key) =>
        expect.objectContaining({
          op,
          secretKey: key,
          ...(op === 'delete' ? {} : { secretValue: `${key}-new` }),
          secret: op === 'create' ? null : expect.objectContaining({ secretKey: key, secretValue: `${key}-old` }),
        }),
      ),
    );

    await approve(requestId);
    const merged = await merge(requestId);
    expect(merged.status).toBe(200);
    expect(merged.body.approval).toMatchObject({ id: requestId, hasMerged: true, status: 'closed' });
    const after = await rows();
    const untouched = before.filter((row) => !keys.includes(row.key));
    expect(after.filter((row) => !keys.includes(row.key))).toEqual(untouched);
    const changed = after.filter((row) => keys.includes(row.key));
    if (op === 'delete') expect(changed).toEqual([]);
    else expect(changed.map((row) => [row.key, row.version])).toEqual(keys.map((key) => [key, op === 'create' ? 1 : 2]));
    for (const key of op === 'delete' ? [] : keys) expect(await valueOf(key, env)).toBe(`${key}-new`);
    expect(await latestRevision()).toBe(revision + 1);
    expect(await app.services.changes.changesCommittedWith(app.database.db, revision + 1)).toEqual([
      expect.objectContaining({ kind: 'secret', environmentSlug: env, secretPath: '/' }),
    ]);
  });

  test('a single change merged meanwhile to one of the batch makes its merge 409, nothing applied', async () => {
    const batchId = (
      await batch(
        'PATCH',
        users.committer.token,
        ['U1', 'U2', 'U3'].map((key) => ({ secretKey: key, secretValue: `${key}-batch` })),
      )
    ).body.approval.id as string;
    const singleId = (await write('PATCH', 'U2', users.committer.token, { secretValue: 'U2-single' }, env)).body.approval.id as string;
    await approve(singleId);
    expect((await merge(singleId)).status).toBe(200);

    await approve(batchId);
    const before = await snapshotDatabase(app.database);
    const conflict = await merge(batchId);
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ statusCode: 409, code: 'MergeConflict', details: { conflicts: [{ secretKey: 'U2', op: 'update' }] } });
    expect(await snapshotDatabase(app.database)).toEqual(before);
    expect(await valueOf('U1', env)).toBe('U1-new');
    expect(await valueOf('U2', env)).toBe('U2-single');
  });

  test('a batch mixing shared secrets (protected) and personal ones (not) is refused, 400 BatchNeedsSplit, nothing written; each half alone goes its way', async () => {
    expect((await write('POST', 'U1', users.committer.token, { secretValue: 'mine', type: 'personal' }, env)).status).toBe(200);
    const before = await snapshotDatabase(app.database);
    const mixed = await batch('DELETE', users.committer.token, [
      { secretKey: 'U3', type: 'shared' },
      { secretKey: 'U1', type: 'personal' },
    ]);
    expect(mixed.status).toBe(400);
    expect(mixed.body).toMatchObject({ statusCode: 400, code: 'BatchNeedsSplit', message: expect.stringContaining('split it') });
    expect(await snapshotDatabase(app.database)).toEqual(before);

    const personal = await batch('DELETE', users.committer.token, [{ secretKey: 'U1', type: 'personal' }]);
    expect(personal.body).toEqual({ secrets: [expect.objectContaining({ secretKey: 'U1', type: 'personal' })] });
    const shared = await batch('DELETE', users.committer.token, [{ secretKey: 'U3', type: 'shared' }]);
    expect(shared.body).toEqual({ approval: expect.objectContaining({ policyId, status: 'open' }) });
  });

  test("a machine identity's batch under a hard policy is refused as before, nothing written", async () => {
    const before = await snapshotDatabase(app.database);
    const response = await batch('PATCH', admin.token, [{ secretKey: 'U1', secretValue: 'direct' }]);
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ code: 'ApprovalRequired' });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('snapshots and point-in-time restore', () => {
  const env = 'staging';
  const rows = () =>
    app.database.db
      .selectFrom('secrets')
      .innerJoin('secretFolders', 'secretFolders.id', 'secrets.folderId')
      .innerJoin('projectEnvironments', 'projectEnvironments.id', 'secretFolders.envId')
      .select(['secrets.id', 'secrets.key', 'secrets.encryptedValue', 'secrets.encryptedComment', 'secrets.skipMultilineEncoding', 'secrets.folderId'])
      .where('projectEnvironments.projectId', '=', projectId)
      .where('projectEnvironments.slug', '=', env)
      .where('secrets.type', '=', 'shared')
      .orderBy('secrets.key')
      .execute();

  test('a restore to a revision 50 changes back gives exactly the old rows, as one new change, and is reversible', async () => {
    await ok('POST', '/api/v1/folders', admin.token, { workspaceId: projectId, environment: env, path: '/', name: 'app' });
    for (const key of ['A', 'B', 'C']) await write('POST', key, admin.token, { secretValue: `${key}-0` }, env);
    await ok('POST', '/api/v3/secrets/raw/NESTED', admin.token, { workspaceId: projectId, environment: env, secretPath: '/app', secretValue: 'n-0' });
    const then = await latestRevision();
    const old = await rows();

    for (let step = 1; step <= 50; step++) {
      const key = ['A', 'B', 'C', 'D'][step % 4]!;
      const exists = (await rows()).some((row) => row.key === key);
      const response =
        step % 7 === 0 && exists
          ? await write('DELETE', key, admin.token, {}, env)
          : await write(exists ? 'PATCH' : 'POST', key, admin.token, { secretValue: `${key}-${step}` }, env);
      expect(response.status).toBe(200);
    }
    expect(await latestRevision()).toBe(then + 50);
    const changed = await rows();
    expect(changed).not.toEqual(old);

    const restored = await ok('POST', `/api/v1/workspace/${projectId}/secrets/restore`, admin.token, {
      environment: env,
      secretPath: '/',
      recursive: true,
      revision: then,
    });
    expect(restored).toMatchObject({
      revision: then,
      folders: [expect.objectContaining({ secretPath: '/' }), expect.objectContaining({ secretPath: '/app', created: 0, updated: 0, deleted: 0 })],
    });
    expect(await rows()).toEqual(old);
    expect(await latestRevision()).toBe(then + 51);
    expect(await auditCount('restore-secrets')).toBe(1);

    await ok('POST', `/api/v1/workspace/${projectId}/secrets/restore`, admin.token, { environment: env, secretPath: '/', revision: then + 50 });
    expect(await rows()).toEqual(changed);
  });

  test("a folder's snapshots list its writes; one shows its values and rolls the folder back", async () => {
    const list = await ok('GET', `/api/v1/workspace/${projectId}/secret-snapshots`, admin.token, undefined, { environment: env, path: '/', limit: '100' });
    const count = await ok('GET', `/api/v1/workspace/${projectId}/secret-snapshots/count`, admin.token, undefined, { environment: env, path: '/' });
    expect(list.secretSnapshots).toHaveLength(count.count);
    const first = list.secretSnapshots.at(-1);
    const snapshot = await ok('GET', `/api/v1/secret-snapshot/${first.id}`, admin.token);
    expect(snapshot.secretSnapshot.secretVersions.map((version: { secretKey: string; secretValue: string }) => [version.secretKey, version.secretValue])).toEqual([
      ['A', 'A-0'],
    ]);
    const rolled = await ok('POST', `/api/v1/secret-snapshot/${first.id}/rollback`, admin.token);
    expect(rolled.secretSnapshot.restored).toMatchObject({ secretPath: '/' });
    expect((await rows()).filter((row) => row.folderId !== undefined && row.key.length === 1).map((row) => row.key)).toContain('A');
    expect(await valueOf('A', env)).toBe('A-0');
  });

  test.each([
    ['a revision not yet committed', { revision: 10_000_000 }, 400],
    ['both a revision and a time', { revision: 1, at: '2020-01-01T00:00:00Z' }, 400],
    ['neither', {}, 400],
    ['an unknown environment', { environment: 'nope', revision: 1 }, 404],
  ])('%s → refused, nothing changed', async (_name, body, status) => {
    const before = await snapshotDatabase(app.database);
    const response = await call('POST', `/api/v1/workspace/${projectId}/secrets/restore`, admin.token, { environment: env, ...body });
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, reqId: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('a restore that would change a place an approval policy protects: refused under hard, nothing changed; under soft an identity restores, audited', async () => {
    const then = await latestRevision();
    await write('PATCH', 'A', admin.token, { secretValue: 'A-after-gate' }, env);
    const policy = await ok('POST', '/api/v1/secret-approvals', admin.token, {
      workspaceId: projectId,
      name: 'staging gate',
      environment: env,
      secretPath: '/',
      approvers: [{ id: users.approverA.id }],
      approvals: 1,
    });
    const restore = (token: string) =>
      call('POST', `/api/v1/workspace/${projectId}/secrets/restore`, token, { environment: env, secretPath: '/', recursive: true, revision: then });
    // a restore that changes only unprotected folders (the policy names '/', not '/app') passes
    expect((await call('POST', `/api/v1/workspace/${projectId}/secrets/restore`, admin.token, { environment: env, secretPath: '/app', revision: then })).status).toBe(
      200,
    );
    for (const caller of [admin.token, users.approverA.token]) {
      const before = await snapshotDatabase(app.database);
      const refused = await restore(caller);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'ApprovalRequired', message: expect.stringContaining('staging gate') });
      expect(await snapshotDatabase(app.database)).toEqual(before);
    }
    await ok('PATCH', `/api/v1/secret-approvals/${policy.approval.id}`, admin.token, { enforcementLevel: 'soft' });
    expect((await restore(users.approverA.token)).status).toBe(403);
    expect((await restore(admin.token)).status).toBe(200);
    expect(await valueOf('A', env)).toBe('A-0');
    const audit = await app.database.db
      .selectFrom('auditLogs')
      .select('eventMetadata')
      .where('eventType', '=', 'restore-secrets')
      .orderBy('createdAt', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit.eventMetadata).toMatchObject({
      folders: expect.arrayContaining([expect.objectContaining({ secretPath: '/', approvalBypass: { policyId: policy.approval.id, policyName: 'staging gate' } })]),
    });
    await ok('DELETE', `/api/v1/secret-approvals/${policy.approval.id}`, admin.token);
  });

  test('an unknown snapshot → 404', async () => {
    expect((await call('GET', '/api/v1/secret-snapshot/999999999', admin.token)).status).toBe(404);
    expect((await call('GET', '/api/v1/secret-snapshot/abc', admin.token)).status).toBe(404);
  });
});

describe('a recursive restore brings back folders deleted since', () => {
  const env = 'qa';
  const restore = (body: Record<string, unknown>) => ok('POST', `/api/v1/workspace/${projectId}/secrets/restore`, admin.token, { environment: env, ...body });
  const put = (path: string, key: string, value: string, method = 'POST') =>
    ok(method, `/api/v3/secrets/raw/${key}`, admin.token, {
      workspaceId: projectId,
      environment: env,
      secretPath: path,
      secretValue: value,
      secretComment: `about ${key}`,
    });
  /** A folder's secrets as the API lists them, with values. */
  const listed = async (path: string) =>
    (await ok('GET', '/api/v3/secrets/raw', admin.token, undefined, { workspaceId: projectId, environment: env, secretPath: path })).secrets.map(
      (secret: { secretKey: string; secretValue: string; secretComment: string }) => [secret.secretKey, secret.secretValue, secret.secretComment],
    );
  const folders = async (path: string) =>
    (await ok('GET', '/api/v1/folders', admin.token, undefined, { workspaceId: projectId, environment: env, path })).folders.map(
      (folder: { name: string }) => folder.name,
    );
  const deleteFolder = (path: string, name: string) => ok('DELETE', `/api/v1/folders/${name}`, admin.token, { workspaceId: projectId, environment: env, path });
  const latestRestoreAudit = async () =>
    (
      await app.database.db
        .selectFrom('auditLogs')
        .select('eventMetadata')
        .where('eventType', '=', 'restore-secrets')
        .where('projectId', '=', projectId)
        .orderBy('createdAt', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow()
    ).eventMetadata;

  beforeAll(async () => {
    await ok('POST', `/api/v1/workspace/${projectId}/environments`, admin.token, { name: 'QA', slug: env });
  });

  test('a folder deleted after the revision comes back with exactly its secrets then, /app goes back too, audited; restoring the revision before undoes it', async () => {
    await ok('POST', '/api/v1/folders', admin.token, { workspaceId: projectId, environment: env, path: '/', name: 'app' });
    await ok('POST', '/api/v1/folders', admin.token, { workspaceId: projectId, environment: env, path: '/app', name: 'db' });
    await put('/app', 'APP_KEY', 'app-1');
    await put('/app/db', 'DB_USER', 'user-1');
    await put('/app/db', 'DB_PASS', 'pass-1');
    await put('/app/db', 'DB_PASS', 'pass-2', 'PATCH');
    const revision = await latestRevision();
    const appThen = await listed('/app');
    const dbThen = await listed('/app/db');
    expect(dbThen).toEqual([
      ['DB_PASS', 'pass-2', 'about DB_PASS'],
      ['DB_USER', 'user-1', 'about DB_USER'],
    ]);

    await deleteFolder('/app', 'db');
    await put('/app', 'APP_KEY', 'app-2', 'PATCH');
    expect(await folders('/app')).toEqual([]);

    const beforeRestore = await latestRevision();
    const restored = await restore({ secretPath: '/app', recursive: true, revision });
    expect(restored).toMatchObject({ recreatedFolders: ['/app/db'], removedFolders: [] });
    expect(restored.folders).toEqual([
      expect.objectContaining({ secretPath: '/app', updated: 1 }),
      expect.objectContaining({ secretPath: '/app/db', created: 2, updated: 0, deleted: 0 }),
    ]);
    expect(await folders('/app')).toEqual(['db']);
    expect(await listed('/app/db')).toEqual(dbThen);
    expect(await listed('/app')).toEqual(appThen);
    expect(await latestRestoreAudit()).toMatchObject({ secretPath: '/app', revision, recreatedFolders: ['/app/db'], removedFolders: [] });
    // operators see the folder and its secrets come back
    const changes = await app.database.db
      .selectFrom('changeLog')
      .select(['kind', 'secretPath'])
      .where('projectId', '=', projectId)
      .where('revision', '>', beforeRestore)
      .orderBy('revision')
      .execute();
    expect(changes).toEqual(
      expect.arrayContaining([
        { kind: 'folder', secretPath: '/app/db' },
        { kind: 'secret', secretPath: '/app/db' },
      ]),
    );

    const undone = await restore({ secretPath: '/app', recursive: true, revision: beforeRestore });
    expect(undone).toMatchObject({ recreatedFolders: [], removedFolders: ['/app/db'] });
    expect(await folders('/app')).toEqual([]);
    expect(await listed('/app')).toEqual([['APP_KEY', 'app-2', 'about APP_KEY']]);
  });

  test('a folder deleted before the revision, or made after it, is not recreated; a restore of one folder that is gone → 404', async () => {
    await ok('POST', '/api/v1/folders', admin.token, { workspaceId: projectId, environment: env, path: '/', name: 'svc' });
    await ok('POST', '/api/v1/folders', admin.token, { workspaceId: projectId, environment: env, path: '/svc', name: 'old' });
    await put('/svc/old', 'OLD', 'old-1');
    await deleteFolder('/svc', 'old');
    await put('/svc', 'SVC', 'svc-1');
    const revision = await latestRevision();
    await ok('POST', '/api/v1/folders', admin.token, { workspaceId: projectId, environment: env, path: '/svc', name: 'late' });
    await put('/svc/late', 'LATE', 'late-1');
    await deleteFolder('/svc', 'late');

    const restored = await restore({ secretPath: '/svc', recursive: true, revision });
    expect(restored).toMatchObject({
      recreatedFolders: [],
      removedFolders: [],
      folders: [expect.objectContaining({ secretPath: '/svc', created: 0, updated: 0, deleted: 0 })],
    });
    expect(await folders('/svc')).toEqual([]);

    const missing = await call('POST', `/api/v1/workspace/${projectId}/secrets/restore`, admin.token, { environment: env, secretPath: '/svc/old', revision });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ statusCode: 404, message: expect.stringContaining('/svc/old') });
  });
});
