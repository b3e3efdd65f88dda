import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'kysely';
import { AuditStreamDispatcher, DEFAULT_STREAM_LIMITS, STREAM_ID_HEADER, type StreamLimits } from '../../src/audit-streams/audit-stream-dispatcher.ts';
import { MAX_STREAMS_PER_ORG } from '../../src/audit-streams/audit-stream-service.ts';
import { SIGNATURE_HEADER, verifyDelivery } from '../../src/outbound/delivery-signature.ts';
import { Outbound } from '../../src/outbound/outbound.ts';
import { type Received, Receiver, receiverSet } from '../support/http-receiver.ts';
import { signatureRecipe } from '../support/readme.ts';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/** Audit log streams (issue 33 part 4): every audit entry of the organization, as signed JSON lines, at least once, in order. Both backends. */

/** A clock that moves only when the test says so. */
const clock = { ms: Date.now(), now: () => clock.ms };

let app: TestApp;
let admin: Awaited<ReturnType<typeof bootstrap>>;
let projectId: string;
const receiver = new Receiver();

const dispatcher = (limits: Partial<StreamLimits> = {}, timeoutMs = 2_000) =>
  new AuditStreamDispatcher(app.services, app.services.database.db, new Outbound({ timeoutMs, denyPrivateAddresses: false }), clock, limits);
const streamRow = (id: string) => app.database.db.selectFrom('auditLogStreams').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const linesOf = (entries: Received[]) =>
  entries.flatMap((entry) =>
    entry.body
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; event: { type: string } }),
  );

/** The organization's audit row ids after the stream's starting cursor, in stream order: what the receiver must get. */
async function expectedIds(start: { xact: number; sequence: number }): Promise<string[]> {
  const rows = await app.database.db
    .selectFrom('auditLogs')
    .select(['id', 'xact', 'sequence'])
    .where('orgId', '=', admin.orgId)
    .orderBy('xact')
    .orderBy('sequence')
    .execute();
  return rows.filter((row) => Number(row.xact) > start.xact || (Number(row.xact) === start.xact && Number(row.sequence) > start.sequence)).map((row) => row.id);
}

/**
 * Runs passes until the receiver holds `ids` (entries of transactions still running elsewhere on the server wait
 * until those end: a later pass delivers them), or fails after 60 s.
 */
async function deliverUntil(hooks: AuditStreamDispatcher, target: Receiver, ids: string[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!ids.every((id) => linesOf(target.received).some((line) => line.id === id))) {
    if (Date.now() > deadline) throw new Error(`not delivered within 60 s: ${ids.length - linesOf(target.received).length} entries`);
    clock.ms += 1;
    await hooks.runOnce();
  }
}

/**
 * Waits (at most 60 s) until every audit row of the organization is settled, its transaction below the oldest one
 * running anywhere on the server: only those are delivered. Other test files' transactions on the shared PostgreSQL
 * server (a DROP DATABASE waiting for its checkpoint) can hold that back for seconds.
 */
async function settled(): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { rows } = await sql<{ unsettled: boolean }>`
      SELECT EXISTS (SELECT 1 FROM audit_logs WHERE org_id = ${admin.orgId} AND xact >= pg_snapshot_xmin(pg_current_snapshot())::text::bigint) AS unsettled`.execute(
      app.database.db,
    );
    if (!rows[0]!.unsettled) return;
    if (Date.now() > deadline) throw new Error('the audit rows were not settled within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const write = async (key: string) => {
  const response = await app.request('POST', `/api/v3/secrets/raw/${key}`, {
    token: admin.token,
    body: { workspaceId: projectId, environment: 'dev', secretPath: '/', secretValue: `${key}-value` },
  });
  expect(response.status).toBe(200);
};
const credentials = [{ key: 'Authorization', value: 'Bearer receiver-token-123' }];
const createStream = async (body: Record<string, unknown>) => app.request('POST', '/api/v1/audit-log-streams', { token: admin.token, body });

beforeAll(async () => {
  app = await startTestApp();
  admin = await bootstrap(app);
  projectId = (await app.request('POST', '/api/v2/workspace', { token: admin.token, body: { projectName: 'Streamed' } })).body.project.id;
  await receiver.start();
  // due from creation: the injected clock runs ahead of the database's
  clock.ms = Date.now() + 60_000;
});
afterAll(async () => {
  await receiver.stop();
  await app?.close();
});

describe('audit log streams', () => {
  let streamId: string;
  let signingKey: string;
  let start: { xact: number; sequence: number };

  test('creating one answers its signing key once, keeps it and the header values sealed, audited', async () => {
    const created = await createStream({ url: receiver.url, headers: [{ key: 'Authorization', value: 'Bearer receiver-token-123' }] });
    expect(created.status).toBe(200);
    streamId = created.body.auditLogStream.id;
    signingKey = created.body.signingKey;
    expect(signingKey).toMatch(/^[0-9a-f]{64}$/);
    expect(created.body.auditLogStream).toMatchObject({ orgId: admin.orgId, url: receiver.url, headerKeys: ['Authorization'] });
    const row = await streamRow(streamId);
    start = { xact: Number(row.cursorXact), sequence: Number(row.cursorSequence) };
    for (const sealed of [row.encryptedSecretKey, row.encryptedHeaders]) expect(sealed.toString('latin1')).not.toMatch(new RegExp(`${signingKey}|receiver-token-123`));
    const listed = await app.request('GET', '/api/v1/audit-log-streams', { token: admin.token });
    expect(listed.body.auditLogStreams.map((stream: { id: string }) => stream.id)).toEqual([streamId]);
    expect(JSON.stringify(listed.body)).not.toMatch(new RegExp(`${signingKey}|receiver-token-123`));
    const audit = await app.database.db.selectFrom('auditLogs').select('eventMetadata').where('eventType', '=', 'create-audit-log-stream').executeTakeFirstOrThrow();
    expect(audit.eventMetadata).toEqual({ auditLogStreamId: streamId, headerKeys: ['Authorization'] });
  });

  test.each([
    ['credentials in the URL', { url: 'http://user:pass@127.0.0.1/x' }, 400],
    ['not http', { url: 'ftp://127.0.0.1/x' }, 400],
    ['a header the delivery sets', { url: 'http://127.0.0.1/x', headers: [{ key: 'X-Coffer-Signature', value: 'forged' }] }, 400],
    ['a header name that is no token', { url: 'http://127.0.0.1/x', headers: [{ key: 'a b', value: 'x' }] }, 400],
    [
      'a header twice',
      {
        url: 'http://127.0.0.1/x',
        headers: [
          { key: 'A', value: '1' },
          { key: 'a', value: '2' },
        ],
      },
      400,
    ],
    ['too many headers', { url: 'http://127.0.0.1/x', headers: Array.from({ length: 11 }, (_, n) => ({ key: `h${n}`, value: 'x' })) }, 422],
    ['no URL', {}, 422],
  ])('%s → refused, nothing written', async (_name, body, status) => {
    const before = await snapshotDatabase(app.database);
    const response = await createStream(body);
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, reqId: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('the receiver gets every audit entry of the organization in order, as JSON lines exactly as signed, with its headers', async () => {
    for (const key of ['ONE', 'TWO', 'THREE']) await write(key);
    expect((await app.request('GET', '/api/v3/secrets/raw', { token: admin.token, query: { workspaceId: projectId, environment: 'dev' } })).status).toBe(200);
    const ids = await expectedIds(start);
    expect(ids.length).toBeGreaterThanOrEqual(5);
    await deliverUntil(dispatcher({ linesPerRequest: 2 }), receiver, ids);
    const lines = linesOf(receiver.received);
    expect(lines.map((line) => line.id)).toEqual(ids);
    // The stream starts below the oldest transaction running anywhere on the server when it was made (no later commit can
    // come before it), so on a busy server the organization's entries just before its creation may come first.
    expect(lines.map((line) => line.event.type)).toEqual(expect.arrayContaining(['create-audit-log-stream', 'create-secret', 'get-secrets']));
    // the export's shape, line for line
    const exported = await app.request('GET', '/api/v1/organization/audit-logs', { token: admin.token, query: { limit: '100' } });
    const byId = new Map(exported.body.auditLogs.map((entry: { id: string }) => [entry.id, entry]));
    for (const line of lines) expect(line).toEqual(byId.get(line.id));
    for (const entry of receiver.received) {
      expect(entry.body.trimEnd().split('\n').length).toBeLessThanOrEqual(2);
      expect(entry.headers['content-type']).toBe('application/x-ndjson');
      expect(entry.headers.authorization).toBe('Bearer receiver-token-123');
      expect(entry.headers[STREAM_ID_HEADER]).toBe(streamId);
      expect(verifyDelivery(signingKey, String(entry.headers[SIGNATURE_HEADER]), entry.body, clock.now())).toBe(true);
      expect(verifyDelivery(signingKey, String(entry.headers[SIGNATURE_HEADER]), `${entry.body} `, clock.now())).toBe(false);
    }
    expect(receiver.received.some((entry) => entry.body.includes('-value'))).toBe(false);
    const status = (await app.request('GET', `/api/v1/audit-log-streams/${streamId}`, { token: admin.token })).body.auditLogStream.status;
    expect(status).toMatchObject({ lastDeliveredId: ids.at(-1), consecutiveFailures: 0, lastError: null });
  });

  test("the README's webhook verification recipe verifies a stream's delivery unchanged", async () => {
    const verify = await signatureRecipe();
    const entry = receiver.received[0]!;
    const tolerance = Math.abs(Date.now() - clock.now()) + 60_000;
    expect(verify(signingKey, String(entry.headers[SIGNATURE_HEADER]), entry.body, tolerance)).toBe(true);
    expect(verify(signingKey, String(entry.headers[SIGNATURE_HEADER]), entry.body.replace('"id":', '"id": '), tolerance)).toBe(false);
  });

  test('a receiver that is down misses nothing: failures back off with a fixed sentence as status, then it catches up in order', async () => {
    await receiver.stop();
    const before = receiver.received.length;
    await write('DOWN_1');
    await write('DOWN_2');
    await settled();
    const hooks = dispatcher();
    const started = clock.ms;
    const attempts: number[] = [];
    while (clock.ms - started < 30_000) {
      const row = await streamRow(streamId);
      await hooks.runOnce();
      if ((await streamRow(streamId)).consecutiveFailures > row.consecutiveFailures) attempts.push(clock.ms - started);
      clock.ms += 1_000;
    }
    // due after 1, 2, 4, 8, 16 s: attempts at 0, 1, 3, 7 and 15 s
    expect(attempts).toEqual([0, 1_000, 3_000, 7_000, 15_000]);
    const down = (await app.request('GET', `/api/v1/audit-log-streams/${streamId}`, { token: admin.token })).body.auditLogStream.status;
    expect(down).toMatchObject({ consecutiveFailures: 5, lastError: 'The receiver refused the connection' });
    expect(receiver.received.length).toBe(before);
    await receiver.start();
    clock.ms = (await streamRow(streamId)).nextAttemptAt.getTime();
    const ids = await expectedIds(start);
    await deliverUntil(hooks, receiver, ids);
    expect(linesOf(receiver.received).map((line) => line.id)).toEqual(ids);
    expect((await streamRow(streamId)).consecutiveFailures).toBe(0);
  });

  test('a receiver answering 500 is retried; the status names the code, never its body', async () => {
    const failing = new Receiver(500);
    await failing.start();
    try {
      const patched = await app.request('PATCH', `/api/v1/audit-log-streams/${streamId}`, { token: admin.token, body: { url: failing.url, headers: credentials } });
      expect(patched.status).toBe(200);
      await settled();
      await dispatcher().runOnce();
      expect(failing.received.length).toBe(1);
      const status = (await app.request('GET', `/api/v1/audit-log-streams/${streamId}`, { token: admin.token })).body.auditLogStream.status;
      expect(status).toMatchObject({ consecutiveFailures: 1, lastError: 'The receiver answered with HTTP status 500, not 2xx' });
      // the entry it refused (the stream's own update) reaches the next receiver
      await app.request('PATCH', `/api/v1/audit-log-streams/${streamId}`, { token: admin.token, body: { url: receiver.url, headers: credentials } });
      const ids = await expectedIds(start);
      await deliverUntil(dispatcher(), receiver, ids);
      expect(linesOf(receiver.received).map((line) => line.id)).toEqual(ids);
    } finally {
      await failing.stop();
    }
  });

  test('two replicas running at once deliver each entry once', async () => {
    const before = linesOf(receiver.received).length;
    await write('PARALLEL_1');
    await write('PARALLEL_2');
    const ids = await expectedIds(start);
    const results = await Promise.all([dispatcher().runOnce(), dispatcher().runOnce()]);
    await deliverUntil(dispatcher(), receiver, ids);
    expect(linesOf(receiver.received).map((line) => line.id)).toEqual(ids);
    expect(results.reduce((sum, result) => sum + result.delivered, 0)).toBeLessThanOrEqual(ids.length - before);
  });

  test(`an organization has at most ${MAX_STREAMS_PER_ORG} streams; deleting one stops it, audited`, async () => {
    const extra: string[] = [];
    for (let n = 1; n < MAX_STREAMS_PER_ORG; n++) extra.push((await createStream({ url: `http://127.0.0.1:9/extra-${n}` })).body.auditLogStream.id);
    const refused = await createStream({ url: 'http://127.0.0.1:9/one-too-many' });
    expect(refused.body).toMatchObject({ statusCode: 400, code: 'TooManyAuditLogStreams' });
    for (const id of extra) expect((await app.request('DELETE', `/api/v1/audit-log-streams/${id}`, { token: admin.token })).status).toBe(200);
    const deleted = await app.request('DELETE', `/api/v1/audit-log-streams/${streamId}`, { token: admin.token });
    expect(deleted.body.auditLogStream.id).toBe(streamId);
    expect((await app.request('GET', `/api/v1/audit-log-streams/${streamId}`, { token: admin.token })).status).toBe(404);
    const before = receiver.received.length;
    await write('AFTER_DELETE');
    expect((await dispatcher().runOnce()).delivered).toBe(0);
    expect(receiver.received.length).toBe(before);
    // the lease, renewed before each request, outlasts one request's 10 s timeout
    expect(DEFAULT_STREAM_LIMITS.leaseMs).toBeGreaterThan(10_000);
  });
});

describe('one pass over several streams', () => {
  const receivers = receiverSet();
  const started = receivers.start;
  afterAll(receivers.stopAll);
  const created = async (url: string, headers: { key: string; value: string }[] = []) => {
    const response = await createStream({ url, headers });
    expect(response.status).toBe(200);
    return response.body.auditLogStream.id as string;
  };
  const deleteAll = async () => {
    const listed = await app.request('GET', '/api/v1/audit-log-streams', { token: admin.token });
    for (const { id } of listed.body.auditLogStreams as { id: string }[]) await app.request('DELETE', `/api/v1/audit-log-streams/${id}`, { token: admin.token });
  };

  test('a receiver that answers 200 and trickles its body is delivered on its status, without its body being waited for', async () => {
    const trickling = await started('trickle');
    const id = await created(trickling.url);
    const start = await streamRow(id);
    await write('TRICKLED');
    // undici's body timeout is reset by every byte: before the total deadline the first pass never ended
    await deliverUntil(dispatcher({}, 2_000), trickling, await expectedIds({ xact: Number(start.cursorXact), sequence: Number(start.cursorSequence) }));
    expect(linesOf(trickling.received).map((line) => line.event.type)).toEqual(expect.arrayContaining(['create-audit-log-stream', 'create-secret']));
    expect((await streamRow(id)).consecutiveFailures).toBe(0);
    await deleteAll();
  });

  test("another stream's delivery is made in the same pass while one receiver holds its answer", async () => {
    const [first, second] = [await started(), await started()];
    // each answers only once the other has its delivery: delivered one after the other, the first would time out
    first.holdUntil = () => second.waitFor(1);
    second.holdUntil = () => first.waitFor(1);
    const ids = [await created(first.url), await created(second.url)];
    await write('HELD');
    // settled for both streams before the pass: another test file's transaction on the shared server could otherwise
    // hold back one stream's entries in the pass that delivers the other's (seen once in a full run)
    await settled();
    const hooks = dispatcher({}, 10_000);
    // a pass delivers nothing while another transaction on the server keeps the entries unsettled
    for (let pass = 0; pass < 100 && first.received.length + second.received.length === 0; pass++) await hooks.runOnce();
    expect([first.received.length, second.received.length]).toEqual([1, 1]);
    for (const id of ids) expect(await streamRow(id)).toMatchObject({ consecutiveFailures: 0, lastError: null, leaseUntil: null });
    await deleteAll();
  });

  test('a new url without headers is refused while the stream has headers: nothing is sent with the old headers to the new URL', async () => {
    const [old, moved] = [await started(), await started()];
    const id = await created(old.url, credentials);
    const before = await snapshotDatabase(app.database);
    const refused = await app.request('PATCH', `/api/v1/audit-log-streams/${id}`, { token: admin.token, body: { url: moved.url } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ statusCode: 400, code: 'HeadersRequiredForNewUrl', reqId: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
    // moving while a pass delivers (from the old receiver's handler): the next request carries the new headers only
    old.onRequest = async () => {
      old.onRequest = null;
      const patched = await app.request('PATCH', `/api/v1/audit-log-streams/${id}`, {
        token: admin.token,
        body: { url: moved.url, headers: [{ key: 'Authorization', value: 'Bearer new-receiver' }] },
      });
      expect(patched.status).toBe(200);
    };
    await write('MOVED');
    await deliverUntil(dispatcher({ linesPerRequest: 1 }), moved, await expectedIds({ xact: 0, sequence: 0 }).then((all) => all.slice(-1)));
    expect(old.received.length).toBeGreaterThanOrEqual(1);
    expect(old.received.every((entry) => entry.headers.authorization === 'Bearer receiver-token-123')).toBe(true);
    expect(moved.received.length).toBeGreaterThanOrEqual(1);
    expect(moved.received.every((entry) => entry.headers.authorization === 'Bearer new-receiver')).toBe(true);
    // a stream without headers moves with its url alone; the audit entry says whether the URL changed, never which
    const bare = await created(old.url);
    expect((await app.request('PATCH', `/api/v1/audit-log-streams/${bare}`, { token: admin.token, body: { url: moved.url } })).status).toBe(200);
    expect((await app.request('PATCH', `/api/v1/audit-log-streams/${bare}`, { token: admin.token, body: { headers: [] } })).status).toBe(200);
    const audits = await app.database.db
      .selectFrom('auditLogs')
      .select('eventMetadata')
      .where('eventType', '=', 'update-audit-log-stream')
      .orderBy('xact', 'desc')
      .orderBy('sequence', 'desc')
      .limit(2)
      .execute();
    expect(audits.map((audit) => audit.eventMetadata)).toEqual([
      { auditLogStreamId: bare, headerKeys: [], urlChanged: false },
      { auditLogStreamId: bare, headerKeys: [], urlChanged: true },
    ]);
    expect(JSON.stringify(audits)).not.toContain(moved.url);
    await deleteAll();
  });
});
