import type { ReadPlace } from '../../../src/changes/read-places.ts';
import { describe, expect, test } from 'vitest';
import { DependencyIndex } from '../../../src/operator/controllers/integration/dependency-index.ts';
import { formatNamespacedName } from '../../../src/operator/runtime/object-key.ts';
import { change } from './change-fixture.ts';

/** What an Integration reading `source` (and the folders `reads`) depends on. */
const dependencies = (projectId: string, source: ReadPlace, reads: { environmentId: string; path: string }[]) => ({
  projectId,
  places: [source, ...reads.map((read) => ({ ...read, recursive: false }))],
});

const name = (value: string) => ({ namespace: 'ns', name: value });
const reads = (...folders: string[]) => folders.map((folder) => ({ environmentId: folder.split(':')[0]!, path: folder.split(':')[1]! }));

describe('dependency index', () => {
  const index = new DependencyIndex();
  index.set(name('root'), dependencies('p1', { environmentId: 'dev', path: '/', recursive: false }, reads('dev:/', 'stg:/shared')));
  index.set(name('app'), dependencies('p1', { environmentId: 'dev', path: '/app', recursive: true }, reads('dev:/app', 'dev:/app/api')));
  index.set(name('apple'), dependencies('p1', { environmentId: 'dev', path: '/apple', recursive: false }, reads('dev:/apple')));
  index.set(name('other'), dependencies('p2', { environmentId: 'dev', path: '/', recursive: false }, reads('dev:/')));

  test.each([
    ['a secret at the root', change({}), ['ns/root']],
    ['a secret below a recursive path', change({ secretPath: '/app/api/v2' }), ['ns/app']],
    ['whole segments only: /apple is not under /app', change({ secretPath: '/apple' }), ['ns/apple']],
    ['a secret in an imported folder', change({ environmentId: 'stg', secretPath: '/shared' }), ['ns/root']],
    ['a folder above a synced path', change({ kind: 'folder', secretPath: '/app' }), ['ns/app']],
    ['another environment, unrelated path', change({ environmentId: 'prod', secretPath: '/' }), []],
    ['an environment deletion', change({ kind: 'environment-deleted', environmentId: 'stg', secretPath: null }), ['ns/root']],
    ['a project deletion', change({ kind: 'project-deleted', environmentId: null, secretPath: null }), ['ns/root', 'ns/app', 'ns/apple']],
  ])('%s', (_name, committed, expected) => {
    expect(index.affected(committed).map(formatNamespacedName).sort()).toEqual([...expected].sort());
  });

  test('removing an entry stops matching', () => {
    index.delete(name('apple'));
    expect(index.affected(change({ secretPath: '/apple' }))).toEqual([]);
  });
});

describe('dependency index: changes routed before an Integration was indexed', () => {
  const burst = dependencies('p1', { environmentId: 'dev', path: '/burst', recursive: false }, []);

  test('a touching change after the revision its sync read at is reported as missed; older or unrelated ones are not', () => {
    const index = new DependencyIndex();
    index.observe(change({ revision: 5, kind: 'folder', secretPath: '/burst' }));
    index.observe(change({ revision: 6, secretPath: '/elsewhere' }));
    expect(index.set(name('burst'), burst, 4)).toBe(true);
    expect(index.set(name('burst'), burst, 5)).toBe(false);
    expect(index.set(name('burst'), { ...burst, projectId: 'p2' }, 4)).toBe(false);
    expect(index.set(name('burst'), burst)).toBe(false);
  });

  test('when the changes after the revision are no longer kept, a sync is reported as missed', () => {
    const index = new DependencyIndex();
    for (let revision = 1; revision <= 10_001; revision++) index.observe(change({ revision, secretPath: '/elsewhere' }));
    expect(index.set(name('burst'), burst, 0)).toBe(true);
    expect(index.set(name('burst'), burst, 5)).toBe(false);
  });
});
