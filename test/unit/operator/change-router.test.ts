import type { ReadPlace } from '../../../src/changes/read-places.ts';
import pino from 'pino';
import { expect, test } from 'vitest';
import { ChangeRouter } from '../../../src/operator/controllers/integration/change-router.ts';
import { change } from './change-fixture.ts';

/** What an Integration reading `source` (and the folders `reads`) depends on. */
const dependencies = (projectId: string, source: ReadPlace, reads: { environmentId: string; path: string }[]) => ({
  projectId,
  places: [source, ...reads.map((read) => ({ ...read, recursive: false }))],
});

const listing = (value: string) => async () => ({
  secrets: [{ key: 'KEY', value, path: '/', tags: [] }],
  imports: [],
  environmentId: 'dev',
  reads: [{ environmentId: 'dev', path: '/' }],
});
const logger = pino({ level: 'silent' });

test('routes a change to the Integrations that read its place, grants to the caller, and remembers when the first unsynced change was committed', () => {
  const router = new ChangeRouter({ logger, isOwnWrite: () => false, structureLagMs: 1_000 });
  router.index({ namespace: 'ns', name: 'app' }, dependencies('p1', { environmentId: 'dev', path: '/', recursive: false }, []));
  const committedAt = new Date('2026-01-01T00:00:00Z');
  const routed = [
    ...router.route([
      change({ revision: 2, committedAt }),
      change({ revision: 3, kind: 'access', environmentId: null, secretPath: null }),
      change({ revision: 4, kind: 'tags' }),
    ]),
  ];
  expect(routed).toEqual([{ namespace: 'ns', name: 'app' }, { access: 'p1' }]);
  expect(router.takeChangedAt({ namespace: 'ns', name: 'app' })).toEqual(committedAt);
  expect(router.takeChangedAt({ namespace: 'ns', name: 'app' })).toBeUndefined();
});

test('a read right after a structural change is read again once the lag has passed; a secret change asks for nothing', async () => {
  const router = new ChangeRouter({ logger, isOwnWrite: () => false, structureLagMs: 60_000 });
  router.startAt(1);
  void [...router.route([change({ revision: 2 })])];
  expect(router.recheckAfterStructureChange('p1', 'k')).toBeUndefined();
  expect((await router.listing('k', 2, listing('first'))).secrets[0]!.value).toBe('first');
  void [...router.route([change({ revision: 3, kind: 'folder', altersSecrets: true })])];
  expect((await router.listing('k', 3, listing('second'))).secrets[0]!.value).toBe('second');
  const recheck = router.recheckAfterStructureChange('p1', 'k');
  expect(recheck).toBeGreaterThan(59_000);
  // the listing was dropped: the recheck reads again, at the same revision
  expect((await router.listing('k', 3, listing('third'))).secrets[0]!.value).toBe('third');
  expect(router.recheckAfterStructureChange('p2', 'k')).toBeUndefined();
});
