import { afterAll, beforeAll, expect, test } from 'vitest';
import { ChangeFanout } from '../../src/changes/change-fanout.ts';
import type { ChangeRecord } from '../../src/changes/change-feed.ts';
import { secretsFixture } from '../support/secrets-fixture.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/** The fan-out the project-events stream (and the remote-clusters change stream) are built on. */

const app: TestApp = await startTestApp();
let fx: Awaited<ReturnType<typeof secretsFixture>>;
afterAll(async () => app?.close());
beforeAll(async () => {
  fx = await secretsFixture(app, 'fanout-project');
});

/** Reads from `subscription` until `count` changes arrived. */
async function collect(subscription: { next(): Promise<ChangeRecord[] | null> }, count: number): Promise<ChangeRecord[]> {
  const received: ChangeRecord[] = [];
  while (received.length < count) {
    const batch = await subscription.next();
    if (!batch) break;
    received.push(...batch);
  }
  return received;
}

test('a subscriber resumed from a past revision gets everything after it from the log, then live changes, once each and in order', async () => {
  const fanout = new ChangeFanout(app.database, app.services.changes, { pageSize: 3 });
  try {
    const start = await app.services.changes.latestRevision(app.database.db);
    for (let index = 0; index < 7; index++) await fx.createSecret(`PAST_${index}`);
    const subscription = await fanout.subscribe({ after: start, accept: (change) => change.projectId === fx.projectId });
    const past = await collect(subscription, 7);
    expect(past.map((change) => change.revision)).toEqual(Array.from({ length: 7 }, (_, index) => start + 1 + index));
    await fx.createSecret('LIVE_1');
    const [live] = await collect(subscription, 1);
    expect(live!.revision).toBe(start + 8);
    expect(subscription.lastRevision).toBe(start + 8);
  } finally {
    await fanout.close();
  }
});

test('a subscriber that falls behind its queue bound catches up from the change log with nothing missed or repeated', async () => {
  const fanout = new ChangeFanout(app.database, app.services.changes, { maxQueued: 5, pageSize: 4 });
  try {
    const slow = await fanout.subscribe({ accept: () => true });
    const fast = await fanout.subscribe({ accept: () => true });
    const from = fanout.position;
    const fastReceived = collect(fast, 30);
    for (let index = 0; index < 30; index++) await fx.createSecret(`BEHIND_${index}`);
    const expected = Array.from({ length: 30 }, (_, index) => from + 1 + index);
    expect((await fastReceived).map((change) => change.revision)).toEqual(expected);
    // the slow one read nothing while 30 changes passed: its queue (5) overflowed
    expect((await collect(slow, 30)).map((change) => change.revision)).toEqual(expected);
  } finally {
    await fanout.close();
  }
});

test('filters apply to live and caught-up changes alike; close() ends a pending read', async () => {
  const fanout = new ChangeFanout(app.database, app.services.changes, { maxQueued: 2 });
  const onlyStaging = await fanout.subscribe({ accept: (change) => change.environmentSlug === 'staging' });
  for (let index = 0; index < 5; index++) await fx.createSecret(`DEV_${index}`);
  await fx.createSecret('STAGED', { environment: 'staging' });
  const [change] = await collect(onlyStaging, 1);
  expect(change).toMatchObject({ environmentSlug: 'staging', kind: 'secret' });
  const pending = onlyStaging.next();
  await fanout.close();
  expect(await pending).toBeNull();
  expect(fanout.size).toBe(0);
});
