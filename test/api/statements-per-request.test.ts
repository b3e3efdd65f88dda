import { afterAll, beforeAll, expect, test } from 'vitest';
import { connectInProcess } from '../../src/operator/port/in-process.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

// The statements one warm request runs (Database.queryCount, BEGIN and COMMIT included) and the round trips they
// take (Database.roundTrips), one request at a time: what bench/RESULTS.md explains per statement. A request that
// needs more than these is a regression of the request path; run `npm run bench:compare` on a change that moves them.

let app: TestApp;
let fx: AccessFixture;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app, 'statements');
  ({ token } = await fx.identity('statements-ci', 'member', 'member'));
  const secrets = Array.from({ length: 100 }, (_, index) => ({ secretKey: `KEY_${index}`, secretValue: `value-${index}` }));
  await fx.call('POST', '/api/v3/secrets/batch/raw', { workspaceId: fx.projectId, environment: 'dev', secretPath: '/', secrets }, token);
});
afterAll(async () => {
  await app?.close();
});

const place = () => ({ workspaceId: fx.projectId, environment: 'dev', secretPath: '/' });
let written = 0;

async function statementsOf(request: () => Promise<{ status: number; body: unknown }>): Promise<number> {
  return (await costOf(request)).statements;
}

async function costOf(request: () => Promise<{ status: number; body: unknown }>): Promise<{ statements: number; roundTrips: number }> {
  for (let warm = 0; warm < 3; warm++) expect((await request()).status).toBe(200);
  const [statements, roundTrips] = [app.database.queryCount(), app.database.roundTrips()];
  expect((await request()).status).toBe(200);
  return { statements: app.database.queryCount() - statements, roundTrips: app.database.roundTrips() - roundTrips };
}

// PostgreSQL: the cache versions with the newest revision (one read), then the audit row (group commit).
// PGlite: the audit row only (its data directory is this process's: the versions are in memory).
test('a warm listing of 100 secrets and a warm get of one run one read and the audit row (none but the audit row on PGlite)', async () => {
  const most = app.backend === 'postgres' ? 2 : 1;
  expect(await statementsOf(() => app.request('GET', '/api/v3/secrets/raw', { token, query: place() }))).toBeLessThanOrEqual(most);
  expect(await statementsOf(() => app.request('GET', '/api/v3/secrets/raw/KEY_42', { token, query: place() }))).toBeLessThanOrEqual(most);
});

// The write's own: a create inserts the secret and its version in one statement (the unique index tells a taken
// key); an update locks the secret, then updates it and inserts its version (with the tags linked now) in one; then
// one statement writes the audit row and takes the change log's lock with its row. PostgreSQL adds the request's
// versions read, BEGIN, the versions read in the transaction, and COMMIT, and sends BEGIN with the versions read and
// the last statement with COMMIT (one message each: the lock is not held across a round trip); Kysely's COMMIT,
// already sent, is counted as a statement but costs no round trip. The environment's approval policies (a shared
// write to a protected place is refused or marked as a bypass) come from their versioned cache, checked against
// the versions read in the transaction. PGlite's BEGIN and COMMIT are its transaction's own, not counted.
test('a create and an update read the project, permissions, environment and folder from the caches, checked in the transaction', async () => {
  const create = () => app.request('POST', `/api/v3/secrets/raw/NEW_${written++}`, { token, body: { ...place(), environment: 'staging', secretValue: 'created' } });
  const update = () => app.request('PATCH', `/api/v3/secrets/raw/KEY_${written++ % 100}`, { token, body: { ...place(), secretValue: `updated-${written}` } });
  const postgres = app.backend === 'postgres';
  const created = await costOf(create);
  expect(created.statements).toBeLessThanOrEqual(postgres ? 6 : 2);
  expect(created.roundTrips).toBeLessThanOrEqual(postgres ? 4 : 2);
  const updated = await costOf(update);
  expect(updated.statements).toBeLessThanOrEqual(postgres ? 7 : 3);
  expect(updated.roundTrips).toBeLessThanOrEqual(postgres ? 5 : 3);
});

// Concurrent requests share the reads of the cache versions (each sent after every request that shares it began)
// and the audit inserts (group commit): 16 listings at once run fewer statements than one each.
test('16 concurrent listings run fewer statements than 16', async () => {
  const list = () => app.request('GET', '/api/v3/secrets/raw', { token, query: place() });
  expect((await list()).status).toBe(200);
  const before = app.database.queryCount();
  const answers = await Promise.all(Array.from({ length: 16 }, list));
  expect(answers.map((answer) => answer.status)).toEqual(Array(16).fill(200));
  expect(app.database.queryCount() - before).toBeLessThan(16);
});

// The same over real connections, where each request arrives in an I/O callback of its own: an embedded database
// (PGlite) runs a statement without giving the event loop a turn, so the audit rows of reads answered in the same
// turn must wait for that turn to end to share an INSERT (before they did not: one INSERT per listing on PGlite).
test('16 concurrent listings over HTTP connections run fewer statements than 16', async () => {
  const base = await app.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `${base}/api/v3/secrets/raw?${new URLSearchParams(place()).toString()}`;
  const list = () => fetch(url, { headers: { authorization: `Bearer ${token}` } }).then((response) => response.status);
  const sixteen = () => Promise.all(Array.from({ length: 16 }, list));
  // the first 16 open the connections; the next 16 are sent on them at once
  expect(await sixteen()).toEqual(Array(16).fill(200));
  // how many arrive in one turn of the event loop depends on the machine's load: the best of three rounds shows the
  // sharing (without it every round runs an INSERT per listing, 16 and more)
  const counts: number[] = [];
  for (let round = 0; round < 3; round++) {
    const before = app.database.queryCount();
    expect(await sixteen()).toEqual(Array(16).fill(200));
    counts.push(app.database.queryCount() - before);
  }
  expect(Math.min(...counts), `statements per round: ${counts.join(', ')}`).toBeLessThan(16);
});

// A look-up every request of a burst misses at once (a fleet's reconciles after a restart, after a write moved the
// version) is loaded once under that version, and the others share that load.
test('16 concurrent look-ups of a folder after its cache version moved load it once', async () => {
  await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'dev', path: '/', name: 'moves-the-version' });
  const { db, lookups } = app.services;
  const environment = await lookups.requireEnvironment(db, fx.projectId, 'dev');
  const before = app.database.queryCount();
  const folders = await Promise.all(Array.from({ length: 16 }, () => lookups.requireFolder(db, environment, '/')));
  expect(new Set(folders.map((folder) => folder.id)).size).toBe(1);
  // PostgreSQL: one or two reads of the versions (shared by the callers arriving meanwhile), then the one load
  expect(app.database.queryCount() - before).toBeLessThanOrEqual(app.backend === 'postgres' ? 3 : 1);
});

// The in-process operator runs each reconcile as one request (CofferPort.asOneRequest): the cache versions and the
// newest revision are read once for all its calls. A resync that finds nothing changed then reads the versions (on
// PGlite the change log's newest revision instead) and the record by its resource together with the stored report of
// its target's keys (sent again with the first sync of a leadership), and writes nothing: the project's claim and
// grants, the project, the permissions and the places come from the caches, the record already holds the result, and
// the sync result decides on the record its upsert read in the same reconcile.
const cluster = 'statements-cluster';

async function operatorPort() {
  return (await connectInProcess(app.services, { version: '0.0.0-statements', clusterName: cluster }))!;
}

async function declaredProject(port: Awaited<ReturnType<typeof operatorPort>>, slug: string) {
  const claimant = { cluster, namespace: 'statements-ns', name: slug, uid: `uid-${slug}` };
  const project = await port.projects.declare(claimant, { slug, name: slug });
  const { projectId } = await port.projects.authorizeUse({ ...claimant, allowedNamespaces: [] }, { cluster, namespace: 'statements-ns' });
  return { projectId, dev: project.environments.find((environment) => environment.slug === 'dev')! };
}

function managedIntegration(name: string, projectId: string) {
  return {
    managedBy: `statements-ns/${name}`,
    cluster,
    projectId,
    environment: 'dev',
    secretPath: '/',
    app: `${name}-secrets`,
    owner: 'statements-ns',
    targetEnvironment: 'statements-ns',
    metadata: { cluster, namespace: 'statements-ns', name },
    reloads: false,
  };
}

/** A report of the target's keys: KEY_1 of dev:/. */
const KEY_1_REPORT = {
  carried: [{ environment: 'dev', path: '/', keys: [{ key: 'KEY_1' }] }],
  templated: 0,
  carriedTruncated: false,
  readers: null,
  readersTruncated: false,
};

test('a resync of an Integration through the in-process port reads twice and writes nothing', async () => {
  const port = await operatorPort();
  const { projectId, dev } = await declaredProject(port, 'statements-resync');
  const resync = () =>
    port.asOneRequest!(async () => {
      const readAt = await port.changes.latestRevision();
      const record = await port.integrations.upsert(managedIntegration('app', projectId));
      const places = [{ environmentId: dev.id, path: '/', recursive: false }];
      await port.integrations.recordSyncResult(record.id, { isSynced: true, syncMessage: null, syncedRevision: readAt, places, targetKeys: KEY_1_REPORT });
    });
  await resync();
  await resync();
  const before = app.database.queryCount();
  await resync();
  expect(app.database.queryCount() - before).toBeLessThanOrEqual(2);
});

// A SecretsProject's resync declares its project again: a claim that stands (its uid, its namespace's grant) is read
// through the claims' cache its Integrations read too, with no transaction (BEGIN, the claim locked, its grant, COMMIT before).
test('a SecretsProject declaring its standing claim again reads at most the cache versions and writes nothing', async () => {
  const port = await operatorPort();
  const claimant = { cluster, namespace: 'statements-ns', name: 'statements-redeclare', uid: 'uid-statements-redeclare' };
  const declare = () => port.asOneRequest!(() => port.projects.declare(claimant, { slug: 'statements-redeclare', name: 'Redeclared' }));
  const first = await declare();
  await declare();
  const before = app.database.queryCount();
  expect((await declare()).id).toBe(first.id);
  // PostgreSQL: the versions; PGlite: none
  expect(app.database.queryCount() - before).toBeLessThanOrEqual(app.backend === 'postgres' ? 1 : 0);
});

// A fleet's resync: the reconciles under way at once share the read of the cache versions and read their records in
// one statement (integrations/managed-record-reads.ts); one statement each before.
test('16 concurrent resyncs of Integrations through the in-process port run fewer statements than 16', async () => {
  const port = await operatorPort();
  const { projectId, dev } = await declaredProject(port, 'statements-fleet');
  const names = Array.from({ length: 16 }, (_, index) => `fleet-${index}`);
  const resync = (name: string) =>
    port.asOneRequest!(async () => {
      const readAt = await port.changes.latestRevision();
      const record = await port.integrations.upsert(managedIntegration(name, projectId));
      const places = [{ environmentId: dev.id, path: '/', recursive: false }];
      await port.integrations.recordSyncResult(record.id, { isSynced: true, syncMessage: null, syncedRevision: readAt, places, targetKeys: KEY_1_REPORT });
      return record;
    });
  const made: string[] = [];
  for (const name of names) made.push((await resync(name)).id);
  const before = app.database.queryCount();
  const records = await Promise.all(names.map(resync));
  const statements = app.database.queryCount() - before;
  // each its own record
  expect(records.map((record) => record.id)).toEqual(made);
  // PostgreSQL: the versions read by one or two reads that the reconciles share, the records by a few (one each was 18
  // statements in all); PGlite reads the change log's newest revision once per reconcile (16), then the records alike
  expect(statements).toBeLessThanOrEqual(app.backend === 'postgres' ? 7 : 16 + 4);
});

// An Integration whose status names no record yet is most likely new: its upsert inserts with no read before it, and
// the insert takes the project's kubernetes integration auth in its own statement. On PostgreSQL: BEGIN with the
// project's lock, the cache versions read in the transaction, the insert, the audit and change rows with COMMIT (four
// round trips; six without the hint: the record's read before the transaction and the auth's read in it).
test('a first record upserted as expected new takes four round trips on PostgreSQL, two fewer than one read first', async () => {
  const port = await operatorPort();
  const { projectId } = await declaredProject(port, 'statements-first');
  // the project's first record makes its kubernetes auth
  await port.asOneRequest!(() => port.integrations.upsert(managedIntegration('first-0', projectId), { expectNew: true }));
  const firstRecord = (name: string, expectNew: boolean) =>
    port.asOneRequest!(async () => {
      await port.changes.latestRevision();
      const roundTrips = app.database.roundTrips();
      const record = await port.integrations.upsert(managedIntegration(name, projectId), { expectNew });
      return { id: record.id, roundTrips: app.database.roundTrips() - roundTrips };
    });
  const hinted = await firstRecord('first-1', true);
  const unhinted = await firstRecord('first-2', false);
  if (app.backend === 'postgres') {
    expect(hinted.roundTrips).toBeLessThanOrEqual(4);
    expect(unhinted.roundTrips - hinted.roundTrips).toBeGreaterThanOrEqual(2);
  }
  const rows = await app.services.db.selectFrom('integrations').select(['id', 'integrationAuthId']).where('managedBy', 'like', 'statements-ns/first-%').execute();
  expect(rows.map((row) => row.id).sort()).toEqual(expect.arrayContaining([hinted.id, unhinted.id]));
  expect(new Set(rows.map((row) => row.integrationAuthId)).size).toBe(1);
});

// A sync result is decided on the record its reconcile's upsert read (does it change anything, does the report of its
// target's keys change): its whole transaction is then one message on PostgreSQL, BEGIN, the outcome and the report in
// one statement, the report's change row, the progress NOTIFY and COMMIT (one round trip; five once: BEGIN, the
// report, the outcome and the NOTIFY each took one). A later one that changes only the outcome (a failure) takes as
// many. Both are stored, the report's change is in the change log, and a listener on another connection hears the NOTIFY.
test('a sync result is one round trip on PostgreSQL: BEGIN, its statement, its change row, NOTIFY and COMMIT in one message', async () => {
  const port = await operatorPort();
  const { projectId, dev } = await declaredProject(port, 'statements-result');
  const places = [{ environmentId: dev.id, path: '/', recursive: false }];
  const revision = await port.changes.latestRevision();
  // one reconcile: the upsert, then the sync result (its round trips are counted)
  const reconcile = (syncedRevision: number, outcome = { isSynced: true, syncMessage: null as string | null }) =>
    port.asOneRequest!(async () => {
      const record = await port.integrations.upsert(managedIntegration('result', projectId));
      const roundTrips = app.database.roundTrips();
      await port.integrations.recordSyncResult(record.id, { ...outcome, syncedRevision, places, targetKeys: KEY_1_REPORT });
      return { id: record.id, roundTrips: app.database.roundTrips() - roundTrips };
    });
  let notified = 0;
  const unlisten = await app.database.listen('coffer_sync_progress', () => void notified++);
  try {
    const first = await reconcile(revision);
    // (a newer revision is recorded only when the project changed since: a failure is always news)
    const later = await reconcile(revision, { isSynced: false, syncMessage: 'the target could not be written' });
    if (app.backend === 'postgres') {
      // the reconcile that created the record read the versions in its write, and reads through the caches as of then
      expect(first.roundTrips).toBe(1);
      expect(later.roundTrips).toBe(1);
    }
    const stored = await app.services.db
      .selectFrom('integrations')
      .leftJoin('integrationTargetKeys', 'integrationTargetKeys.integrationId', 'integrations.id')
      .select(['isSynced', 'syncMessage', 'report'])
      .where('id', '=', first.id)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ isSynced: false, syncMessage: 'the target could not be written', report: KEY_1_REPORT });
    const change = await app.services.db.selectFrom('changeLog').select('kind').where('revision', '>', revision).where('kind', '=', 'integration').executeTakeFirst();
    expect(change).toBeDefined();
    await expect.poll(() => notified).toBe(2);
  } finally {
    await unlisten();
  }
});

// The record the upsert read serves the one sync result after it: a second result in the same reconcile (a failure
// after a recorded success) decides on the record as that success left it, not as the upsert read it.
test('a second sync result in one reconcile reads the record again: a failure after a success is recorded', async () => {
  const port = await operatorPort();
  const { projectId } = await declaredProject(port, 'statements-twice');
  const failed = { isSynced: false, syncMessage: 'the target could not be written' };
  const first = await port.asOneRequest!(async () => {
    const record = await port.integrations.upsert(managedIntegration('twice', projectId));
    await port.integrations.recordSyncResult(record.id, failed);
    return record;
  });
  await port.asOneRequest!(async () => {
    // the upsert finds the record unchanged: it says the sync failed
    expect((await port.integrations.upsert(managedIntegration('twice', projectId))).id).toBe(first.id);
    await port.integrations.recordSyncResult(first.id, { isSynced: true, syncMessage: null });
    await port.integrations.recordSyncResult(first.id, failed);
  });
  const stored = await app.services.db.selectFrom('integrations').select(['isSynced', 'syncMessage']).where('id', '=', first.id).executeTakeFirstOrThrow();
  expect(stored).toEqual({ isSynced: false, syncMessage: failed.syncMessage });
});
