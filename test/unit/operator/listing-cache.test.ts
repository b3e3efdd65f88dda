import { expect, test } from 'vitest';
import { ListingCache } from '../../../src/operator/controllers/integration/listing-cache.ts';
import { change } from './change-fixture.ts';

interface Listed {
  data: { KEY: string };
}
const listing = (value: string) => async (): Promise<Listed> => ({ data: { KEY: value } });

test('a listing stays current across the operator’s own integration-record writes the feed has not delivered yet', async () => {
  const own = new Set([11, 12]);
  const cache = new ListingCache<Listed>((revision) => own.has(revision));
  cache.reset(10);
  expect((await cache.get('k', 10, listing('first'))).data.KEY).toBe('first');
  // revisions 11 and 12 are our own record writes: no read
  expect((await cache.get('k', 12, listing('not read'))).data.KEY).toBe('first');
  // 13 is someone else's change, not observed yet: read again
  expect((await cache.get('k', 13, listing('second'))).data.KEY).toBe('second');
});

test('an observed change that may alter listings drops older listings; record-only changes keep them', async () => {
  const cache = new ListingCache<Listed>();
  cache.reset(10);
  await cache.get('k', 10, listing('first'));
  cache.observe([change({ revision: 11, kind: 'integration', altersSecrets: false })]);
  expect((await cache.get('k', 11, listing('not read'))).data.KEY).toBe('first');
  cache.observe([change({ revision: 12, kind: 'secret' })]);
  expect((await cache.get('k', 12, listing('second'))).data.KEY).toBe('second');
});

test('a fresh read (coffer.dev/force-sync) reads whatever is kept, and the syncs after it are given what it read', async () => {
  const cache = new ListingCache<Listed>();
  cache.reset(10);
  await cache.get('k', 10, listing('kept'));
  expect((await cache.get('k', 10, listing('repaired'), true)).data.KEY).toBe('repaired');
  expect((await cache.get('k', 10, listing('not read'))).data.KEY).toBe('repaired');
});
