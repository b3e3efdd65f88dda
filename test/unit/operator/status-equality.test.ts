import { isDeepStrictEqual } from 'node:util';
import { expect, test } from 'vitest';
import { sameStatus } from '../../../src/operator/runtime/status-equality.ts';

/** operator/runtime/status-equality.ts: two statuses say the same when their JSON, with null fields left out, does. */

/** The definition: both written as JSON without their null fields, and the parsed copies compared. */
function sameAsJson(a: unknown, b: unknown): boolean {
  const comparable = (value: unknown) => JSON.parse(JSON.stringify(value, (_key, field: unknown) => (field === null ? undefined : field)) ?? 'null') as unknown;
  return isDeepStrictEqual(comparable(a), comparable(b));
}

const condition = (message: string) => ({ type: 'Ready', status: 'True', reason: 'Synced', message, observedGeneration: 2 });

test.each([
  ['the same fields in another order', { a: 1, b: 'x' }, { b: 'x', a: 1 }, true],
  ['a field set to null and one that is absent', { dataHash: null, secretCount: 3 }, { secretCount: 3 }, true],
  ['a field set to undefined and one that is absent', { reloadedRevision: undefined }, {}, true],
  ['a field set to null and one with a value', { dataHash: null }, { dataHash: 'h' }, false],
  ['conditions alike', { conditions: [condition('holds 3 keys')] }, { conditions: [condition('holds 3 keys')] }, true],
  ['a condition message changed', { conditions: [condition('holds 3 keys')] }, { conditions: [condition('holds 4 keys')] }, false],
  ['conditions in another order', { conditions: [condition('a'), condition('b')] }, { conditions: [condition('b'), condition('a')] }, false],
  ['one condition more', { conditions: [condition('a')] }, { conditions: [condition('a'), condition('b')] }, false],
  ['a number and the same digits as a string', { secretCount: 1 }, { secretCount: '1' }, false],
  ['an empty object and an empty array', { skippedKeys: {} }, { skippedKeys: [] }, false],
  ['a field more on one side', { a: 1 }, { a: 1, b: 2 }, false],
  ['a field more on the other side', { a: 1, b: 2 }, { a: 1 }, false],
  ['null inside an array and an absent element', { keys: [null, 'b'] }, { keys: [undefined, 'b'] }, true],
  ['a null field nested in an array element', { collisions: [{ key: 'K', from: null }] }, { collisions: [{ key: 'K' }] }, true],
  ['nothing and an empty status', {}, {}, true],
])('%s', (_name, a, b, same) => {
  expect(sameStatus(a, b)).toBe(same);
  expect(sameStatus(b, a)).toBe(same);
  expect(sameAsJson(a, b)).toBe(same);
});

test('an object that is not plain JSON (a Date) is the same only as itself', () => {
  const at = new Date('2026-11-28T00:00:00Z');
  expect(sameStatus({ at }, { at })).toBe(true);
  expect(sameStatus({ at }, { at: new Date('2026-11-29T00:00:00Z') })).toBe(false);
  expect(sameStatus({ at }, { at: new Date(at) })).toBe(false);
});

/** A status-like value: objects, arrays, strings, numbers, booleans and nulls, a few levels deep. */
function randomValue(random: () => number, depth: number): unknown {
  const pick = Math.floor(random() * (depth > 2 ? 5 : 7));
  if (pick === 0) return null;
  if (pick === 1) return Math.floor(random() * 3);
  if (pick === 2) return ['a', 'b', ''][Math.floor(random() * 3)];
  if (pick === 3) return random() < 0.5;
  if (pick === 4) return undefined;
  if (pick === 5) return Array.from({ length: Math.floor(random() * 3) }, () => randomValue(random, depth + 1));
  const object: Record<string, unknown> = {};
  for (const key of ['x', 'y', 'z']) if (random() < 0.6) object[key] = randomValue(random, depth + 1);
  return object;
}

/** A copy of `value` with one leaf changed, one null field dropped or added, or keys reordered. */
function nearCopy(value: unknown, random: () => number): unknown {
  if (Array.isArray(value)) return value.map((element) => (random() < 0.3 ? nearCopy(element, random) : element));
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([key, field]) => [key, random() < 0.3 ? nearCopy(field, random) : field] as const);
    if (random() < 0.3) entries.push(['w', null]);
    if (random() < 0.5) entries.reverse();
    return Object.fromEntries(entries);
  }
  return random() < 0.7 ? value : randomValue(random, 3);
}

test('agrees with comparing the JSON without null fields on 20,000 random pairs of statuses and near copies', () => {
  let seed = 34;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  let same = 0;
  for (let round = 0; round < 20_000; round++) {
    const a = { status: randomValue(random, 0) };
    const b = random() < 0.5 ? nearCopy(a, random) : { status: randomValue(random, 0) };
    const expected = sameAsJson(a, b);
    expect(sameStatus(a, b), JSON.stringify([a, b])).toBe(expected);
    if (expected) same++;
  }
  // both answers occur often
  expect(same).toBeGreaterThan(2_000);
  expect(same).toBeLessThan(18_000);
});
