import { AsyncLocalStorage } from 'node:async_hooks';
import { expect, test } from 'vitest';
import { ReadBatch } from '../../src/db/read-batch.ts';

/**
 * db/read-batch.ts: many reads by key in one read, and never an answer from a read that started before the call.
 * The reads here are a table the test changes between calls, read when the batch's read starts.
 */
interface Started {
  keys: string[];
  finish: () => void;
  fail: (error: Error) => void;
}

function table(initial: Record<string, number>) {
  const rows = new Map(Object.entries(initial));
  const started: Started[] = [];
  const batch = new ReadBatch<string, number>(
    (keys) =>
      new Promise((resolve, reject) => {
        // what the rows hold when the read starts is what it answers
        const found = new Map(keys.filter((key) => rows.has(key)).map((key) => [key, rows.get(key)!]));
        started.push({ keys, finish: () => resolve(found), fail: reject });
      }),
    { maxKeys: 3 },
  );
  return { rows, started, batch };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('the calls of one turn are one read; each gets its own value, the same key twice gets it twice, a missing key undefined', async () => {
  const { started, batch } = table({ a: 1, b: 2 });
  const answers = Promise.all([batch.get('a'), batch.get('b'), batch.get('a'), batch.get('none')]);
  await turn();
  expect(started.map((read) => read.keys)).toEqual([['a', 'b', 'none']]);
  started[0]!.finish();
  expect(await answers).toEqual([1, 2, 1, undefined]);
  expect(batch.idle).toBe(true);
});

test('a call made while a read is under way is answered by a read that starts after it, so it sees a write made before it', async () => {
  const { rows, started, batch } = table({ a: 1 });
  const first = batch.get('a');
  await turn();
  expect(started).toHaveLength(1);
  // a write commits, then the same key is asked for while the first read is still under way
  rows.set('a', 2);
  const second = batch.get('a');
  const third = batch.get('c');
  await turn();
  expect(started).toHaveLength(1);
  started[0]!.finish();
  expect(await first).toBe(1);
  await turn();
  expect(started.map((read) => read.keys)).toEqual([['a'], ['a', 'c']]);
  started[1]!.finish();
  expect(await second).toBe(2);
  expect(await third).toBeUndefined();
});

test('more keys than a read takes: reads of at most maxKeys, one after another, every call answered', async () => {
  const keys = Array.from({ length: 8 }, (_, index) => `k${index}`);
  const { started, batch } = table(Object.fromEntries(keys.map((key, index) => [key, index])));
  const answers = Promise.all(keys.map((key) => batch.get(key)));
  for (let read = 0; read < 3; read++) {
    await turn();
    expect(started).toHaveLength(read + 1);
    started[read]!.finish();
  }
  expect(started.map((read) => read.keys)).toEqual([
    ['k0', 'k1', 'k2'],
    ['k3', 'k4', 'k5'],
    ['k6', 'k7'],
  ]);
  expect(await answers).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  expect(batch.idle).toBe(true);
});

test('a failed read fails its own calls only; the calls that waited for the next read get their values', async () => {
  const { started, batch } = table({ a: 1, b: 2 });
  const failed = batch.get('a');
  const failedOutcome = failed.then(
    () => 'answered',
    (error: Error) => error.message,
  );
  await turn();
  const later = batch.get('b');
  started[0]!.fail(new Error('connection lost'));
  expect(await failedOutcome).toBe('connection lost');
  await turn();
  expect(started.map((read) => read.keys)).toEqual([['a'], ['b']]);
  started[1]!.finish();
  expect(await later).toBe(2);
  // and the batch reads again afterwards
  const again = batch.get('a');
  await turn();
  started[2]!.finish();
  expect(await again).toBe(1);
});

test("a read runs in no caller's async context", async () => {
  const scope = new AsyncLocalStorage<string>();
  const seen: (string | undefined)[] = [];
  const batch = new ReadBatch<string, number>(
    async (keys) => {
      seen.push(scope.getStore());
      return new Map(keys.map((key) => [key, 1]));
    },
    { maxKeys: 10 },
  );
  expect(await scope.run('first caller', () => Promise.all([batch.get('a'), scope.run('second caller', () => batch.get('b'))]))).toEqual([1, 1]);
  expect(seen).toEqual([undefined]);
});
