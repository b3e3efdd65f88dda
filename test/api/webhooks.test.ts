import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Outbound } from '../../src/outbound/outbound.ts';
import { DEFAULT_DISPATCH_LIMITS, WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher.ts';
import { SIGNATURE_HEADER, verifyDelivery } from '../../src/outbound/delivery-signature.ts';
import { type Received, Receiver, receiverSet } from '../support/http-receiver.ts';
import { signatureRecipe } from '../support/readme.ts';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';
import { issueTestToken } from '../support/access-fixture.ts';
import { waitUntil } from '../support/event-stream.ts';

/** Webhooks (issue 33 part 3): signed deliveries from the change feed, retries, disabling, replay. Both backends. */

const signatureOf = (entry: Received) => String(entry.headers[SIGNATURE_HEADER]);
const revisionsOf = (receiver: Receiver) => receiver.received.map((entry) => JSON.parse(entry.body).revision as number);

/** A clock that moves only when the test says so. */
const clock = { ms: Date.now(), now: () => clock.ms };

let app: TestApp;
let admin: Awaited<ReturnType<typeof bootstrap>>;
let projectId: string;
const receiver = new Receiver();

const dispatcher = (limits: Partial<typeof DEFAULT_DISPATCH_LIMITS> = {}, timeoutMs = 2_000) =>
  new WebhookDispatcher(app.services, app.services.database.db, new Outbound({ timeoutMs, denyPrivateAddresses: false }), clock, limits);
const write = async (key: string, environment = 'dev', secretPath = '/', project = projectId) => {
  const response = await app.request('POST', `/api/v3/secrets/raw/${key}`, {
    token: admin.token,
    body: { workspaceId: project, environment, secretPath, secretValue: `${key}-value` },
  });
  expect(response.status).toBe(200);
  return Number(response.headers['coffer-revision']);
};
const webhookRow = (id: string) => app.database.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const createWebhook = async (url: string, secretPath = '/', project = projectId) => {
  const response = await app.request('POST', '/api/v1/webhooks', {
    token: admin.token,
    body: { workspaceId: project, environment: 'dev', webhookUrl: url, secretPath },
  });
  expect(response.status).toBe(200);
  return response.body as { webhook: { id: string }; webhookSecretKey: string };
};

beforeAll(async () => {
  app = await startTestApp();
  admin = await bootstrap(app);
  projectId = (await app.request('POST', '/api/v2/workspace', { token: admin.token, body: { projectName: 'Hooks' } })).body.project.id;
  await receiver.start();
});
afterAll(async () => {
  await receiver.stop();
  await app?.close();
});

describe('webhooks', () => {
  let webhookId: string;
  let secretKey: string;
  const delivered: number[] = [];

  test('creating one answers its signing key once and stores it sealed, audited', async () => {
    const created = await createWebhook(receiver.url, '/**');
    webhookId = created.webhook.id;
    secretKey = created.webhookSecretKey;
    expect(created.webhook).toMatchObject({ url: receiver.url, secretPath: '/**', isDisabled: false, type: 'general', environment: { slug: 'dev' } });
    expect(secretKey).toMatch(/^[0-9a-f]{64}$/);
    const row = await webhookRow(webhookId);
    expect(row.encryptedSecretKey.toString('latin1')).not.toContain(secretKey);
    const listed = await app.request('GET', '/api/v1/webhooks', { token: admin.token, query: { workspaceId: projectId } });
    expect(JSON.stringify(listed.body)).not.toContain(secretKey);
    const audit = await app.database.db.selectFrom('auditLogs').select('eventMetadata').where('eventType', '=', 'create-webhook').executeTakeFirstOrThrow();
    expect(audit.eventMetadata).toEqual({ webhookId, environment: 'dev', secretPath: '/**', isDisabled: false });
  });

  test.each([
    ['credentials in the URL', { webhookUrl: 'http://user:pass@127.0.0.1/x' }, 400],
    ['not http', { webhookUrl: 'ftp://127.0.0.1/x' }, 400],
    ['a bad glob', { webhookUrl: 'http://127.0.0.1/x', secretPath: '/[' }, 400],
    ['an unknown environment', { webhookUrl: 'http://127.0.0.1/x', environment: 'nope' }, 404],
  ])('%s → refused, nothing written', async (_name, change, status) => {
    const before = await snapshotDatabase(app.database);
    const response = await app.request('POST', '/api/v1/webhooks', { token: admin.token, body: { workspaceId: projectId, environment: 'dev', ...change } });
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, reqId: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('every matching change arrives in order, exactly as signed; other environments do not', async () => {
    for (const key of ['ONE', 'TWO']) delivered.push(await write(key));
    await write('ELSEWHERE', 'staging');
    await app.request('POST', '/api/v1/folders', { token: admin.token, body: { workspaceId: projectId, environment: 'dev', path: '/', name: 'nested' } });
    delivered.push(Number(await app.services.changes.latestRevision(app.database.db, projectId)));
    delivered.push(await write('THREE', 'dev', '/nested'));
    // due from its creation: the dispatcher's clock is set past it (the database's clock set the default)
    clock.ms = Date.now() + 60_000;
    expect(await dispatcher().runOnce()).toBe(4);
    expect(revisionsOf(receiver)).toEqual(delivered);
    for (const entry of receiver.received) expect(verifyDelivery(secretKey, signatureOf(entry), entry.body, clock.now())).toBe(true);
    expect(verifyDelivery(secretKey, signatureOf(receiver.received[0]!), `${receiver.received[0]!.body} `, clock.now())).toBe(false);
    expect(verifyDelivery('another-key', signatureOf(receiver.received[0]!), receiver.received[0]!.body, clock.now())).toBe(false);
    expect(JSON.parse(receiver.received[0]!.body)).toEqual({
      event: 'secrets.modified',
      project: { workspaceId: projectId, environment: 'dev', secretPath: '/' },
      revision: delivered[0],
      kind: 'secret',
      timestamp: clock.now(),
    });
    expect(receiver.received.some((entry) => entry.body.includes('-value'))).toBe(false);
    const log = await app.request('GET', `/api/v1/webhooks/${webhookId}/deliveries`, { token: admin.token });
    expect(log.body.deliveries.map((delivery: { status: string }) => delivery.status)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
    expect((await webhookRow(webhookId)).cursorRevision).toBe(await app.services.changes.latestRevision(app.database.db));
  });

  test("the README's verification recipe accepts a real delivery and refuses a changed one", async () => {
    const verify = await signatureRecipe();
    const entry = receiver.received[0]!;
    const tolerance = Math.abs(Date.now() - clock.now()) + 60_000;
    expect(verify(secretKey, signatureOf(entry), entry.body, tolerance)).toBe(true);
    expect(verify(secretKey, signatureOf(entry), entry.body.replace('"revision":', '"revision": '), tolerance)).toBe(false);
    expect(verify('another-key', signatureOf(entry), entry.body, tolerance)).toBe(false);
  });

  test('a receiver down for 30 s misses nothing: retries back off, then it catches up in order', async () => {
    await receiver.stop();
    const missed = [await write('DOWN_1'), await write('DOWN_2')];
    const hooks = dispatcher({ maxFailures: 10 });
    const started = clock.ms;
    let attempts = 0;
    while (clock.ms - started < 30_000) {
      attempts += await hooks.runOnce();
      clock.ms += 1_000;
    }
    // due after 1, 2, 4, 8 s: attempts at 0, 1, 3, 7 and 15 s
    expect(attempts).toBe(5);
    const row = await webhookRow(webhookId);
    expect(row).toMatchObject({ consecutiveFailures: 5, lastStatus: 'failed', isDisabled: false });
    expect(row.lastRunErrorMessage).toBe('ECONNREFUSED');
    await receiver.start();
    clock.ms = row.nextAttemptAt.getTime();
    expect(await hooks.runOnce()).toBe(2);
    expect(revisionsOf(receiver).slice(-2)).toEqual(missed);
    expect(await webhookRow(webhookId)).toMatchObject({ consecutiveFailures: 0, lastStatus: 'success' });
    delivered.push(...missed);
  });

  test('replay from a revision delivers every matching change after it again, from the change feed', async () => {
    const before = receiver.received.length;
    const response = await app.request('POST', `/api/v1/webhooks/${webhookId}/replay`, { token: admin.token, body: { fromRevision: delivered[0]! } });
    expect(response.status).toBe(200);
    expect(await dispatcher().runOnce()).toBe(delivered.length - 1);
    expect(revisionsOf(receiver).slice(before)).toEqual(delivered.slice(1));
    const ahead = await app.request('POST', `/api/v1/webhooks/${webhookId}/replay`, { token: admin.token, body: { fromRevision: 99_999_999 } });
    expect(ahead.body).toMatchObject({ statusCode: 400, code: 'RevisionAhead' });
  });

  test('two replicas running at once deliver each change once', async () => {
    const before = receiver.received.length;
    const revisions = [await write('PARALLEL_1'), await write('PARALLEL_2')];
    const counts = await Promise.all([dispatcher().runOnce(), dispatcher().runOnce()]);
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(2);
    expect(revisionsOf(receiver).slice(before)).toEqual(revisions);
  });

  test('private addresses are refused when the switch is on', async () => {
    const before = receiver.received.length;
    const refused = await new Outbound({ timeoutMs: 2_000, denyPrivateAddresses: true }).post(receiver.url, '{}', {});
    expect(refused).toEqual({ ok: false, status: null, error: 'PRIVATE_ADDRESS' });
    const allowed = await new Outbound({ timeoutMs: 2_000, denyPrivateAddresses: false }).post(receiver.url, '{}', {});
    expect(allowed).toMatchObject({ ok: true, status: 204 });
    expect(receiver.received.length).toBe(before + 1);
  });

  test('disabling stops deliveries until it is enabled again, audited', async () => {
    expect((await app.request('PATCH', `/api/v1/webhooks/${webhookId}`, { token: admin.token, body: { isDisabled: true } })).body.webhook.isDisabled).toBe(true);
    const revision = await write('WHILE_DISABLED');
    expect(await dispatcher().runOnce()).toBe(0);
    expect((await app.request('PATCH', `/api/v1/webhooks/${webhookId}`, { token: admin.token, body: { isDisabled: false } })).body.webhook.isDisabled).toBe(false);
    expect(await dispatcher().runOnce()).toBe(1);
    expect(revisionsOf(receiver).at(-1)).toBe(revision);
    const audits = await app.database.db.selectFrom('auditLogs').select('eventMetadata').where('eventType', '=', 'update-webhook-status').execute();
    expect(audits.length).toBeGreaterThanOrEqual(3);
  });
});

// Found by a hostile review: a webhook tells its receiver which places changed, so a role that may read only
// dev:/app/** could aim one at prod or at /** (and replay the project's history) and learn every changed path.
describe('who may aim a webhook', () => {
  test('a role limited to dev:/app/** may hear of dev:/app/** only: prod, /** or a deeper-reaching glob are 403, nothing written; replay is checked too', async () => {
    const call = async (method: string, url: string, body: unknown, token = admin.token) => {
      const response = await app.request(method, url, { token, body });
      expect(response.status, `${method} ${url} ${JSON.stringify(response.body)}`).toBe(200);
      return response.body;
    };
    await call('POST', `/api/v1/workspace/${projectId}/roles`, {
      slug: 'app-hooks',
      name: 'App hooks',
      permissions: [
        { subject: 'secrets', action: ['read'], conditions: { environment: 'dev', secretPath: { $glob: '/app/**' } } },
        { subject: 'webhooks', action: ['read', 'create', 'edit', 'delete'] },
      ],
    });
    const { identity } = await call('POST', '/api/v1/identities', { name: 'app-hooks', organizationId: admin.orgId, role: 'member' });
    await call('POST', `/api/v2/workspace/${projectId}/identity-memberships/${identity.id}`, { roles: [{ role: 'app-hooks' }] });
    const token = await issueTestToken(app, identity.id);
    const aim = (environment: string, secretPath: string) =>
      app.request('POST', '/api/v1/webhooks', { token, body: { workspaceId: projectId, environment, webhookUrl: receiver.url, secretPath } });

    const before = await snapshotDatabase(app.database);
    for (const [environment, secretPath] of [
      ['prod', '/**'],
      ['dev', '/**'],
      ['dev', '/'],
      ['dev', '/ops'],
      ['dev', '/*'],
    ]) {
      const refused = await aim(environment!, secretPath!);
      expect(refused.status, `${environment}:${secretPath}`).toBe(403);
      expect(refused.body).toMatchObject({ statusCode: 403, code: 'PermissionDenied', message: expect.stringContaining('may not read') });
    }
    expect(await snapshotDatabase(app.database)).toEqual(before);

    const allowed = await aim('dev', '/app/**');
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect((await aim('dev', '/app/db')).status).toBe(200);
    // a webhook someone else aimed wider cannot be replayed by this role
    const wide = await createWebhook(receiver.url, '/**');
    const replay = await app.request('POST', `/api/v1/webhooks/${wide.webhook.id}/replay`, { token, body: { fromRevision: 0 } });
    expect(replay.status).toBe(403);
    const own = await app.request('POST', `/api/v1/webhooks/${allowed.body.webhook.id}/replay`, { token, body: { fromRevision: 0 } });
    expect(own.status).toBe(200);
    for (const id of [wide.webhook.id, allowed.body.webhook.id]) expect((await app.request('DELETE', `/api/v1/webhooks/${id}`, { token: admin.token })).status).toBe(200);
  });
});

describe('a test delivery (POST /api/v1/webhooks/:id/test)', () => {
  const refusing = new Receiver(500);
  const silent = new Receiver('silent');
  afterAll(async () => Promise.all([refusing.stop(), silent.stop()]));
  const test_ = (id: string, token = admin.token) => app.request('POST', `/api/v1/webhooks/${id}/test`, { token });

  test('arrives signed with the webhook key, answers what the receiver said, and is audited without the URL; no cursor, log or failure moves', async () => {
    const created = await createWebhook(receiver.url, '/test-me/**');
    const before = { row: await webhookRow(created.webhook.id), received: receiver.received.length };
    const answer = await test_(created.webhook.id);
    expect(answer.status).toBe(200);
    expect(answer.body.result).toMatchObject({ ok: true, responseStatus: 204, error: null });
    const arrived = receiver.received[before.received]!;
    expect(verifyDelivery(created.webhookSecretKey, signatureOf(arrived), arrived.body, Date.now())).toBe(true);
    expect(JSON.parse(arrived.body)).toMatchObject({ event: 'test', project: { workspaceId: projectId, environment: 'dev', secretPath: '/test-me/**' } });
    const after = await webhookRow(created.webhook.id);
    expect([after.cursorRevision, after.consecutiveFailures, after.lastStatus]).toEqual([before.row.cursorRevision, 0, before.row.lastStatus]);
    expect((await app.request('GET', `/api/v1/webhooks/${created.webhook.id}/deliveries`, { token: admin.token })).body.deliveries).toEqual([]);
    const audit = await app.database.db
      .selectFrom('auditLogs')
      .select('eventMetadata')
      .where('eventType', '=', 'test-webhook')
      .orderBy('createdAt', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit.eventMetadata).toEqual({
      webhookId: created.webhook.id,
      environment: 'dev',
      secretPath: '/test-me/**',
      isDisabled: false,
      ok: true,
      responseStatus: 204,
      error: null,
    });
  });

  test('a receiver that refuses tests is told apart (status, never its body) and never disables the webhook; unknown ids are 404', async () => {
    await refusing.start();
    const created = await createWebhook(refusing.url);
    for (let attempt = 0; attempt <= DEFAULT_DISPATCH_LIMITS.maxFailures; attempt++) {
      const answer = await test_(created.webhook.id);
      expect(answer.status).toBe(200);
      expect(answer.body.result).toMatchObject({ ok: false, responseStatus: 500, error: 'HTTP 500' });
      expect(JSON.stringify(answer.body)).not.toContain('secret internal detail');
    }
    expect(await webhookRow(created.webhook.id)).toMatchObject({ isDisabled: false, consecutiveFailures: 0 });
    expect((await test_('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await app.request('DELETE', `/api/v1/webhooks/${created.webhook.id}`, { token: admin.token })).status).toBe(200);
  });

  test('two tests per caller at once: a third is 429 while they wait on the receiver', async () => {
    await silent.start();
    const created = await createWebhook(silent.url);
    const held = [test_(created.webhook.id), test_(created.webhook.id)];
    await silent.waitFor(2);
    const third = await test_(created.webhook.id);
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ statusCode: 429, message: expect.stringContaining('webhook tests') });
    silent.answer = 204;
    await silent.stop(); // the held ones end now: their connections are closed
    for (const answer of await Promise.all(held)) expect(answer.body.result).toMatchObject({ ok: false, responseStatus: null });
    expect((await test_(created.webhook.id)).status).toBe(200);
    expect((await app.request('DELETE', `/api/v1/webhooks/${created.webhook.id}`, { token: admin.token })).status).toBe(200);
  });
});

describe('a receiver that never answers', () => {
  const silent = new Receiver('silent');
  afterAll(async () => silent.stop());

  test(`is disabled after ${DEFAULT_DISPATCH_LIMITS.maxFailures} timed-out deliveries, audited, the log showing each`, async () => {
    await silent.start();
    const { webhook } = await createWebhook(silent.url);
    await write('UNHEARD');
    clock.ms = Math.max(clock.ms, Date.now() + 60_000);
    const hooks = dispatcher({}, 200);
    for (let attempt = 0; attempt < DEFAULT_DISPATCH_LIMITS.maxFailures; attempt++) {
      await hooks.runOnce();
      clock.ms = (await webhookRow(webhook.id)).nextAttemptAt.getTime();
    }
    expect(await webhookRow(webhook.id)).toMatchObject({
      isDisabled: true,
      consecutiveFailures: DEFAULT_DISPATCH_LIMITS.maxFailures,
      lastRunErrorMessage: 'TIMEOUT',
    });
    const log = await app.request('GET', `/api/v1/webhooks/${webhook.id}/deliveries`, { token: admin.token });
    expect(log.body.deliveries).toHaveLength(DEFAULT_DISPATCH_LIMITS.maxFailures);
    expect(log.body.deliveries.every((delivery: { status: string }) => delivery.status === 'failed')).toBe(true);
    const audits = await app.database.db.selectFrom('auditLogs').select('eventMetadata').where('eventType', '=', 'update-webhook-status').execute();
    expect(audits.map((audit) => audit.eventMetadata)).toContainEqual(expect.objectContaining({ webhookId: webhook.id, isDisabled: true }));
    clock.ms += 3_600_000;
    expect(await hooks.runOnce()).toBe(0);
    expect((await app.request('DELETE', `/api/v1/webhooks/${webhook.id}`, { token: admin.token })).status).toBe(200);
  });
});

describe('one pass over several webhooks', () => {
  const receivers = receiverSet();
  const started = receivers.start;
  let project: string;
  beforeAll(async () => {
    project = (await app.request('POST', '/api/v2/workspace', { token: admin.token, body: { projectName: 'Several hooks' } })).body.project.id;
    clock.ms = Math.max(clock.ms, Date.now() + 60_000);
  });
  afterAll(receivers.stopAll);
  /** Deletes the webhooks made so far, so the next test's pass delivers only to its own. */
  const deleteAll = async () => {
    const listed = await app.request('GET', '/api/v1/webhooks', { token: admin.token, query: { workspaceId: project } });
    for (const { id } of listed.body.webhooks as { id: string }[]) await app.request('DELETE', `/api/v1/webhooks/${id}`, { token: admin.token });
  };

  test('a receiver that answers 200 and trickles its body is delivered on its status, without its body being waited for', async () => {
    const trickling = await started('trickle');
    const { webhook } = await createWebhook(trickling.url, '/', project);
    const revision = await write('TRICKLED', 'dev', '/', project);
    // undici's body timeout is reset by every byte: before the total deadline this pass never ended
    expect(await dispatcher({}, 2_000).runOnce()).toBeGreaterThanOrEqual(1);
    expect(revisionsOf(trickling)).toEqual([revision]);
    const row = await webhookRow(webhook.id);
    expect([row.lastStatus, row.consecutiveFailures, Number(row.cursorRevision)]).toEqual(['success', 0, revision]);
    const log = await app.request('GET', `/api/v1/webhooks/${webhook.id}/deliveries`, { token: admin.token });
    expect(log.body.deliveries).toMatchObject([{ status: 'delivered', responseStatus: 200, error: null }]);
    await deleteAll();
  });

  test("another webhook's delivery is made in the same pass while one receiver holds its answer", async () => {
    const [first, second] = [await started(), await started()];
    // each answers only once the other has its delivery: delivered one after the other, the first would time out
    first.holdUntil = () => second.waitFor(1);
    second.holdUntil = () => first.waitFor(1);
    const hooks = [await createWebhook(first.url, '/', project), await createWebhook(second.url, '/', project)];
    const revision = await write('HELD', 'dev', '/', project);
    expect(await dispatcher({}, 10_000).runOnce()).toBe(2);
    expect([revisionsOf(first), revisionsOf(second)]).toEqual([[revision], [revision]]);
    for (const { webhook } of hooks) {
      const row = await webhookRow(webhook.id);
      expect([row.lastStatus, Number(row.cursorRevision), row.leaseUntil]).toEqual(['success', revision, null]);
    }
    await deleteAll();
  });

  test('a webhook deleted while it is delivered ends its own advance quietly; the others of the pass go on', async () => {
    const [deleting, other] = [await started(), await started()];
    const doomed = await createWebhook(deleting.url, '/', project);
    const kept = await createWebhook(other.url, '/', project);
    deleting.onRequest = async () => {
      expect((await app.request('DELETE', `/api/v1/webhooks/${doomed.webhook.id}`, { token: admin.token })).status).toBe(200);
    };
    const revisions = [await write('GONE_1', 'dev', '/', project), await write('GONE_2', 'dev', '/', project)];
    await dispatcher({}, 10_000).runOnce();
    expect(deleting.received).toHaveLength(1);
    expect(await app.database.db.selectFrom('webhooks').select('id').where('id', '=', doomed.webhook.id).execute()).toEqual([]);
    expect(revisionsOf(other)).toEqual(revisions);
    const row = await webhookRow(kept.webhook.id);
    expect([row.lastStatus, Number(row.cursorRevision), row.leaseUntil]).toEqual(['success', revisions[1], null]);
    await deleteAll();
  });
});

// `coffer serve` runs the dispatcher on every commit, passes at least `spacingMs` apart: a burst of writes is
// delivered by a few passes, each taking every change so far, in order.
describe('the running dispatcher', () => {
  const receivers = receiverSet();
  afterAll(receivers.stopAll);

  test('a burst of concurrent writes reaches the receiver, every change once and in revision order', async () => {
    const project = (await app.request('POST', '/api/v2/workspace', { token: admin.token, body: { projectName: 'Burst' } })).body.project.id as string;
    const burst = await receivers.start();
    await createWebhook(burst.url, '/', project);
    clock.ms = Math.max(clock.ms, Date.now() + 60_000);
    const stop = dispatcher({}, 10_000).start(pino({ level: 'silent' }), 60_000, 50);
    try {
      const revisions = await Promise.all(Array.from({ length: 12 }, (_, index) => write(`BURST_${index}`, 'dev', '/', project)));
      const expected = [...revisions].sort((a, b) => a - b);
      await waitUntil('every change delivered', () => revisionsOf(burst).length >= expected.length);
      expect(revisionsOf(burst)).toEqual(expected);
    } finally {
      stop();
    }
  });
});
