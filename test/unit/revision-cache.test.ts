import { describe, expect, test } from 'vitest';
import { RevisionCache } from '../../src/caches/revision-cache.ts';

function counting() {
  let loads = 0;
  return {
    load: (value: string) => async () => {
      loads++;
      return value;
    },
    get loads() {
      return loads;
    },
  };
}

describe('RevisionCache', () => {
  test('reuses a value at its revision, reloads at a newer one, and an older revision never replaces it', async () => {
    const cache = new RevisionCache<string>({ maxWeight: 100, weigh: (value) => value.length });
    const loader = counting();
    expect(await cache.get('k', 1, loader.load('one'))).toBe('one');
    expect(await cache.get('k', 1, loader.load('other'))).toBe('one');
    expect(loader.loads).toBe(1);
    expect(await cache.get('k', 2, loader.load('two'))).toBe('two');
    expect(await cache.get('k', 1, loader.load('stale'))).toBe('stale');
    expect(await cache.get('k', 2, loader.load('again'))).toBe('two');
    expect(loader.loads).toBe(3);
  });

  test('refresh loads again at the same revision and keeps the new value for the reads after it', async () => {
    const cache = new RevisionCache<string>({ maxWeight: 100, weigh: (value) => value.length });
    const loader = counting();
    await cache.get('k', 1, loader.load('kept'));
    expect(await cache.refresh('k', 1, loader.load('repaired'))).toBe('repaired');
    expect(await cache.get('k', 1, loader.load('not loaded'))).toBe('repaired');
    expect(loader.loads).toBe(2);
    expect(cache.size).toEqual({ entries: 1, weight: 'repaired'.length });
  });

  test('concurrent requests at one revision share one load', async () => {
    const cache = new RevisionCache<string>({ maxWeight: 100, weigh: () => 1 });
    const loader = counting();
    const results = await Promise.all(Array.from({ length: 5 }, () => cache.get('k', 7, loader.load('v'))));
    expect(results).toEqual(['v', 'v', 'v', 'v', 'v']);
    expect(loader.loads).toBe(1);
  });

  test('a failed load is not kept', async () => {
    const cache = new RevisionCache<string>({ maxWeight: 100, weigh: () => 1 });
    await expect(cache.get('k', 1, async () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    expect(cache.size.entries).toBe(0);
    expect(await cache.get('k', 1, async () => 'recovered')).toBe('recovered');
  });

  test('the oldest entries go when the entries together weigh more than the limit', async () => {
    const cache = new RevisionCache<string>({ maxWeight: 10, weigh: (value) => value.length });
    await cache.get('a', 1, async () => 'aaaa');
    await cache.get('b', 1, async () => 'bbbb');
    expect(cache.size).toEqual({ entries: 2, weight: 8 });
    await cache.get('c', 1, async () => 'cccc');
    expect(cache.size).toEqual({ entries: 2, weight: 8 });
    const loader = counting();
    expect(await cache.get('a', 1, loader.load('reloaded'))).toBe('reloaded');
    expect(loader.loads).toBe(1);
    await cache.get('huge', 1, async () => 'x'.repeat(50));
    expect(cache.size.weight).toBeLessThanOrEqual(10);
  });
});
