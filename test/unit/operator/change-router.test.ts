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
  const router = new ChangeRouter({ logger, isOwnWrite: () => false });
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

test('a listing is read once per revision, and again after a folder change (nothing waits out a lag)', async () => {
  const router = new ChangeRouter({ logger, isOwnWrite: () => false });
  router.startAt(1);
  void [...router.route([change({ revision: 2 })])];
  expect((await router.listing('k', 2, listing('first'))).secrets[0]!.value).toBe('first');
  expect((await router.listing('k', 2, listing('unread'))).secrets[0]!.value).toBe('first');
  void [...router.route([change({ revision: 3, kind: 'folder', altersSecrets: true })])];
  expect((await router.listing('k', 3, listing('second'))).secrets[0]!.value).toBe('second');
});
