import { sql } from 'kysely';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ChangeRecord } from '../../src/changes/change-feed.ts';
import { ChangeSubscriber } from '../../src/changes/change-subscriber.ts';
import { latestRevision } from '../../src/changes/change-store.ts';
import { openDatabase } from '../../src/db/database.ts';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { currentBackend, startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;
let fx: Awaited<ReturnType<typeof secretsFixture>>;

beforeAll(async () => {
  app = await startTestApp();
  fx = await secretsFixture(app, 'feed-project');
});
afterAll(async () => app?.close());

async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const allRevisions = async () => (await app.database.db.selectFrom('changeLog').select('revision').orderBy('revision').execute()).map((row) => row.revision);

test('a subscriber sees every committed change exactly once, in order, including those committed while it was stopped', async () => {
  const seen: ChangeRecord[] = [];
  const start = await latestRevision(app.database.db);
  const subscriber = new ChangeSubscriber(app.database, app.services.changes, {
    after: start,
    onChanges: async (changes) => void seen.push(...changes),
  });
  await subscriber.start();

  // Concurrent writers: creates, updates, folder creation, a failing write (rolled back, no row).
  await Promise.all([
    ...Array.from({ length: 10 }, (_, index) => fx.createSecret(`FEED_${index}`, { secretValue: String(index) })),
    fx.createFolder('/', 'feed-folder'),
    fx.createSecret('FEED_0', { secretValue: 'duplicate' }),
  ]);
  await Promise.all(Array.from({ length: 10 }, (_, index) => fx.updateSecret(`FEED_${index}`, { secretValue: `${index}b` })));
  const committed = (await allRevisions()).filter((revision) => revision > start);
  await waitUntil(() => seen.length >= committed.length, 'the subscriber to catch up');
  expect(seen.map((change) => change.revision)).toEqual(committed);
  expect(committed).toHaveLength(21);
  await subscriber.stop();

  // Changes committed while no subscriber runs.
  const resumeFrom = subscriber.lastRevision;
  await fx.createSecret('WHILE_STOPPED_1', { secretValue: 'a' });
  await fx.deleteSecret('FEED_3');
  const later: ChangeRecord[] = [];
  const resumed = new ChangeSubscriber(app.database, app.services.changes, { after: resumeFrom, onChanges: async (changes) => void later.push(...changes) });
  await resumed.start();
  await fx.createSecret('AFTER_RESTART', { secretValue: 'b' });
  const expected = (await allRevisions()).filter((revision) => revision > resumeFrom);
  await waitUntil(() => later.length >= expected.length, 'the resumed subscriber to catch up');
  expect(later.map((change) => change.revision)).toEqual(expected);
  expect(later.map((change) => [change.kind, change.secretPath, change.environmentSlug])).toEqual(Array(3).fill(['secret', '/', 'dev']));
  await resumed.stop();
});

test('a failing consumer does not advance; the next wake-up delivers the same changes again', async () => {
  const start = await latestRevision(app.database.db);
  let failed: number[] | null = null;
  const delivered: number[] = [];
  const errors: unknown[] = [];
  const subscriber = new ChangeSubscriber(app.database, app.services.changes, {
    after: start,
    onChanges: async (changes) => {
      if (!failed) {
        failed = changes.map((change) => change.revision);
        throw new Error('consumer failed');
      }
      delivered.push(...changes.map((change) => change.revision));
    },
    onError: (error) => errors.push(error),
  });
  await subscriber.start();
  await fx.createSecret('RETRIED', { secretValue: 'x' });
  await waitUntil(() => errors.length === 1, 'the consumer failure');
  // Another wake-up (NOTIFY on PostgreSQL, or this drain) delivers the failed batch again.
  await subscriber.drain();
  expect(failed).toEqual((await allRevisions()).filter((revision) => revision > start));
  expect(delivered).toEqual(failed);
  expect(subscriber.lastRevision).toBe(failed!.at(-1));
  await subscriber.stop();
});

// PGlite is one in-process database: the in-process event is the only path there, covered above.
test.skipIf(currentBackend() === 'pglite')(
  'on PostgreSQL only (PGlite has no other connection): a subscriber on another connection (another replica) hears writes through NOTIFY',
  async () => {
    const url = (await sql<{ db: string }>`SELECT current_database() AS db`.execute(app.database.db)).rows[0]!.db;
    const { inject } = await import('vitest');
    const { databaseUrl } = await import('../support/postgres-server.ts');
    const replica = await openDatabase({ databaseUrl: databaseUrl(inject('postgresAdminUrl'), url), dataDir: '' });
    const { ChangeFeed } = await import('../../src/changes/change-feed.ts');
    const start = await latestRevision(replica.db);
    const heard: number[] = [];
    // A separate feed object: this replica gets no in-process events, only NOTIFY (and a slow poll).
    const subscriber = new ChangeSubscriber(replica, new ChangeFeed(), {
      after: start,
      pollIntervalMs: 600_000,
      onChanges: async (changes) => void heard.push(...changes.map((change) => change.revision)),
    });
    await subscriber.start();
    await fx.createSecret('FROM_OTHER_REPLICA', { secretValue: 'n' });
    await waitUntil(() => heard.length === 1, 'the NOTIFY to reach the other connection');
    expect(heard).toEqual((await allRevisions()).filter((revision) => revision > start));
    await subscriber.stop();
    await replica.close();
  },
);
