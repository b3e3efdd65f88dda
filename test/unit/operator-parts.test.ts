import { describe, expect, test } from 'vitest';
import type { ChangeRecord } from '../../src/changes/change-feed.ts';
import { DependencyIndex } from '../../src/operator/dependency-index.ts';
import { EventRecorder, type PendingEvent } from '../../src/operator/event-recorder.ts';
import { ListingCache } from '../../src/operator/listing-cache.ts';
import { dataHash, desiredSecret, liveDataHash, resolveSecretData } from '../../src/operator/managed-secret.ts';
import type { IntegrationResource } from '../../src/operator/resources.ts';
import { defaultProjectSlug } from '../../src/operator/secrets-project-reconciler.ts';
import { WorkQueue } from '../../src/operator/work-queue.ts';

const change = (overrides: Partial<ChangeRecord>): ChangeRecord => ({
  revision: 1,
  createdAt: new Date(),
  projectId: 'p1',
  environmentId: 'dev',
  environmentSlug: 'dev',
  secretPath: '/',
  kind: 'secret',
  ...overrides,
});

describe('dependency index', () => {
  const index = new DependencyIndex();
  index.set('ns/root', { projectId: 'p1', environmentId: 'dev', path: '/', recursive: false, reads: new Set(['dev:/', 'stg:/shared']) });
  index.set('ns/app', { projectId: 'p1', environmentId: 'dev', path: '/app', recursive: true, reads: new Set(['dev:/app', 'dev:/app/api']) });
  index.set('ns/apple', { projectId: 'p1', environmentId: 'dev', path: '/apple', recursive: false, reads: new Set(['dev:/apple']) });
  index.set('ns/other', { projectId: 'p2', environmentId: 'dev', path: '/', recursive: false, reads: new Set(['dev:/']) });

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
    expect(index.affected(committed).sort()).toEqual([...expected].sort());
  });

  test('removing an entry stops matching', () => {
    index.delete('ns/apple');
    expect(index.affected(change({ secretPath: '/apple' }))).toEqual([]);
  });
});

describe('dependency index: changes routed before an Integration was indexed', () => {
  const burst = { projectId: 'p1', environmentId: 'dev', path: '/burst', recursive: false, reads: new Set<string>() };

  test('a touching change after the revision its sync read at is reported as missed; older or unrelated ones are not', () => {
    const index = new DependencyIndex();
    index.observe(change({ revision: 5, kind: 'folder', secretPath: '/burst' }));
    index.observe(change({ revision: 6, secretPath: '/elsewhere' }));
    expect(index.set('ns/burst', burst, 4)).toBe(true);
    expect(index.set('ns/burst', burst, 5)).toBe(false);
    expect(index.set('ns/burst', { ...burst, projectId: 'p2' }, 4)).toBe(false);
    expect(index.set('ns/burst', burst)).toBe(false);
  });

  test('when the changes after the revision are no longer kept, a sync is reported as missed', () => {
    const index = new DependencyIndex();
    for (let revision = 1; revision <= 10_001; revision++) index.observe(change({ revision, secretPath: '/elsewhere' }));
    expect(index.set('ns/burst', burst, 0)).toBe(true);
    expect(index.set('ns/burst', burst, 5)).toBe(false);
  });
});

describe('managed Secret content', () => {
  const secret = (key: string, value: string, secretPath = '/') =>
    ({ secretKey: key, secretValue: value, secretPath, type: 'shared' }) as never;

  test('own secrets beat imports; the last import wins; nearer paths beat deeper ones; invalid keys are skipped', () => {
    const resolved = resolveSecretData(
      [secret('A', 'own'), secret('DEEP', 'deep', '/x/y'), secret('DEEP', 'near', '/x'), secret('bad key', 'x')],
      [
        { secretPath: '/one', environment: 'dev', folderId: null, secrets: [secret('A', 'first'), secret('B', 'first'), secret('C', 'first')] },
        { secretPath: '/two', environment: 'dev', folderId: null, secrets: [secret('B', 'second')] },
      ] as never,
    );
    expect(resolved.data).toEqual({ A: 'own', B: 'second', C: 'first', DEEP: 'near' });
    expect(resolved.skipped).toEqual(['bad key']);
  });

  test('the data hash does not depend on key order and reveals no value', () => {
    expect(dataHash({ a: '1', b: '2' })).toBe(dataHash({ b: '2', a: '1' }));
    expect(dataHash({ a: '12' })).not.toBe(dataHash({ a1: '2' }));
    expect(dataHash({ a: 'hunter2' })).not.toContain('hunter2');
  });

  const resource = (creationPolicy: 'Owner' | 'Orphan' | 'Merge') =>
    ({
      metadata: { name: 'web', namespace: 'shop', uid: 'uid-1' },
      spec: { environment: 'dev', target: { name: 'web-secrets', creationPolicy, labels: { team: 'a' } } },
    }) as IntegrationResource;

  test('the applied Secret: labels, annotations without values (and its installation), owner only for Owner, base64 data', () => {
    const installation = '3f0c3a4e-0000-4000-8000-000000000001';
    const owned = desiredSecret(resource('Owner'), { TOKEN: 'v1' }, 42, installation);
    expect(owned.metadata!.labels).toEqual({ team: 'a', 'app.kubernetes.io/managed-by': 'coffer' });
    expect(owned.metadata!.annotations).toEqual({
      'coffer.dev/integration': 'shop/web',
      'coffer.dev/revision': '42',
      'coffer.dev/data-hash': dataHash({ TOKEN: 'v1' }),
      'coffer.dev/installation': installation,
    });
    expect(owned.metadata!.ownerReferences).toEqual([
      { apiVersion: 'coffer.dev/v1alpha1', kind: 'Integration', name: 'web', uid: 'uid-1', controller: true, blockOwnerDeletion: true },
    ]);
    expect(owned.data).toEqual({ TOKEN: Buffer.from('v1').toString('base64') });
    expect(owned.type).toBe('Opaque');
    expect(desiredSecret(resource('Orphan'), {}, 1, installation).metadata!.ownerReferences).toBeUndefined();
    expect(desiredSecret(resource('Merge'), {}, 1, installation).type).toBeUndefined();
    expect(liveDataHash(owned)).toBe(dataHash({ TOKEN: 'v1' }));
  });

  test('project slugs from namespace and name fit 5 to 36 characters', () => {
    expect(defaultProjectSlug('shop', 'web')).toBe('shop-web');
    expect(defaultProjectSlug('a', 'b')).toBe('a-b-project');
    const long = defaultProjectSlug('a-very-long-namespace-name-for-tests', 'and-a-long-project-name');
    expect(long.length).toBeLessThanOrEqual(36);
    expect(long).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });
});

describe('work queue', () => {
  test('dedupes waiting keys, reruns a key added while it runs, bounds concurrency', async () => {
    const runs: string[] = [];
    let active = 0;
    let peak = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const queue = new WorkQueue({
      concurrency: 2,
      handler: async (key) => {
        active++;
        peak = Math.max(peak, active);
        runs.push(key);
        if (key === 'a' && runs.filter((run) => run === 'a').length === 1) await gate;
        active--;
      },
    });
    queue.start();
    queue.add('a');
    queue.add('b');
    queue.add('c');
    queue.add('c');
    queue.add('a'); // while 'a' runs: once more afterwards
    release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await queue.idle();
    expect(runs.sort()).toEqual(['a', 'a', 'b', 'c']);
    expect(peak).toBeLessThanOrEqual(2);
    await queue.stop();
  });

  test('failures retry with growing delays', async () => {
    const times: number[] = [];
    const queue = new WorkQueue({
      concurrency: 1,
      baseDelayMs: 20,
      handler: async () => {
        times.push(Date.now());
        if (times.length < 4) throw new Error('not yet');
      },
    });
    queue.start();
    queue.add('k');
    while (times.length < 4) await new Promise((resolve) => setTimeout(resolve, 10));
    const gaps = times.slice(1).map((time, index) => time - times[index]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(10);
    expect(gaps[2]).toBeGreaterThanOrEqual(40);
    await queue.stop();
  });
});

describe('event recorder', () => {
  const object = (name: string) => ({ apiVersion: 'coffer.dev/v1alpha1', kind: 'Integration', metadata: { name, namespace: 'ns', uid: `uid-${name}` } });

  /** A recorder whose posts wait until released, recording what was posted and what was dropped. */
  function gated(capacity: number) {
    const posted: string[] = [];
    const dropped: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const recorder = new EventRecorder({
      capacity,
      concurrency: 1,
      send: async (event: PendingEvent) => {
        await gate;
        if (event.reason === 'Refused') throw new Error('forbidden');
        posted.push(`${event.type} ${event.object.metadata!.name} ${event.reason}`);
      },
      onDropped: (type, cause) => dropped.push(`${type} ${cause}`),
    });
    return { recorder, posted, dropped, release };
  }

  test('record() returns at once; beyond capacity Normal events are dropped and counted, Warnings go first', async () => {
    const { recorder, posted, dropped, release } = gated(2);
    recorder.record(object('a'), 'Normal', 'Synced', 'first'); // posting (waits on the gate)
    recorder.record(object('b'), 'Normal', 'Synced', 'waits');
    recorder.record(object('c'), 'Normal', 'Synced', 'waits');
    recorder.record(object('d'), 'Normal', 'Synced', 'queue full'); // dropped
    recorder.record(object('e'), 'Warning', 'Failed', 'takes the place of b');
    expect(dropped).toEqual(['Normal queue-full', 'Normal queue-full']);
    release();
    await recorder.idle();
    expect(posted).toEqual(['Normal a Synced', 'Warning e Failed', 'Normal c Synced']);
  });

  test('an event identical to one still waiting is queued once; a failed post is counted', async () => {
    const { recorder, posted, dropped, release } = gated(10);
    recorder.record(object('a'), 'Normal', 'Synced', 'first');
    recorder.record(object('b'), 'Warning', 'Failed', 'same');
    recorder.record(object('b'), 'Warning', 'Failed', 'same');
    recorder.record(object('b'), 'Warning', 'Refused', 'apiserver says no');
    release();
    await recorder.idle();
    expect(posted).toEqual(['Normal a Synced', 'Warning b Failed']);
    expect(dropped).toEqual(['Warning failed']);
  });
});

describe('event recorder rate', () => {
  test('posts at most `burst` events at once, the rest as tokens come back, none lost below capacity', async () => {
    const posted: string[] = [];
    const recorder = new EventRecorder({
      capacity: 100,
      concurrency: 10,
      rate: { perSecond: 50, burst: 3 },
      send: async (event: PendingEvent) => void posted.push(event.object.metadata!.name!),
    });
    const names = Array.from({ length: 8 }, (_, index) => `event-${index}`);
    for (const name of names) recorder.record({ apiVersion: 'v1', kind: 'Integration', metadata: { name, namespace: 'ns', uid: name } }, 'Normal', 'Synced', 'ok');
    await Promise.resolve();
    expect(posted).toEqual(names.slice(0, 3));
    expect(recorder.length).toBe(5);
    await recorder.idle();
    expect(posted).toEqual(names);
  });
});

describe('listing cache', () => {
  const listing = (value: string) => async () => ({ data: { KEY: value }, skipped: [], environmentId: 'dev', reads: new Set(['dev:/']) });

  test('a listing stays current across the operator’s own integration-record writes the feed has not delivered yet', async () => {
    const own = new Set([11, 12]);
    const cache = new ListingCache((revision) => own.has(revision));
    cache.reset(10);
    expect((await cache.get('k', 10, listing('first'))).data.KEY).toBe('first');
    // revisions 11 and 12 are our own record writes: no read
    expect((await cache.get('k', 12, listing('not read'))).data.KEY).toBe('first');
    // 13 is someone else's change, not observed yet: read again
    expect((await cache.get('k', 13, listing('second'))).data.KEY).toBe('second');
  });

  test('an observed change that may alter listings drops older listings; record-only changes keep them', async () => {
    const cache = new ListingCache();
    cache.reset(10);
    await cache.get('k', 10, listing('first'));
    cache.observe([change({ revision: 11, kind: 'integration' })]);
    expect((await cache.get('k', 11, listing('not read'))).data.KEY).toBe('first');
    cache.observe([change({ revision: 12, kind: 'secret' })]);
    expect((await cache.get('k', 12, listing('second'))).data.KEY).toBe('second');
  });
});
