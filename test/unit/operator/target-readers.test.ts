import type { V1Container } from '@kubernetes/client-node';
import { expect, test } from 'vitest';
import { KEY_READERS_MAX, KEYS_PER_READER_MAX } from '../../../src/integrations/target-keys.ts';
import { TargetReaders } from '../../../src/operator/controllers/reload/target-readers.ts';
import type { Workload } from '../../../src/operator/runtime/informers.ts';

const workload = (name: string, container: Partial<V1Container>, extra: { namespace?: string; replicas?: number } = {}): Workload => ({
  metadata: { name, namespace: extra.namespace ?? 'shop' },
  spec: { replicas: extra.replicas, selector: {}, template: { spec: { containers: [{ name: 'app', ...container }] } } },
});
const keyRef = (...keys: string[]) => ({ env: keys.map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: 'app-secrets', key } } })) });
const envFrom = { envFrom: [{ secretRef: { name: 'app-secrets' } }] };

test('a workload first seen tells the targets it reads; a status or replica change tells none; a change of what it reads tells the targets before and now', () => {
  const readers = new TargetReaders();
  expect(readers.seen('Deployment', workload('api', keyRef('DB')))).toEqual(['Secret/app-secrets']);
  expect(readers.seen('Deployment', workload('api', keyRef('DB'), { replicas: 3 }))).toEqual([]);
  expect(readers.seen('Deployment', workload('api', keyRef('DB', 'TOKEN')))).toEqual(['Secret/app-secrets']);
  expect(readers.seen('Deployment', workload('api', { envFrom: [{ secretRef: { name: 'other' } }] }))).toEqual(['Secret/app-secrets', 'Secret/other']);
  expect(readers.seen('Deployment', workload('api', {}))).toEqual(['Secret/other']);
  expect(readers.readersOf('shop', 'Secret/other')).toEqual({ readers: [], truncated: false });
});

test('the readers of a target in its namespace: by kind and name, the keys each names or null for every key; a deleted one goes', () => {
  const readers = new TargetReaders();
  readers.seen('Deployment', workload('worker', envFrom));
  readers.seen('Deployment', workload('api', keyRef('TOKEN', 'DB')));
  readers.seen('StatefulSet', workload('db', keyRef('DB')));
  readers.seen('Deployment', workload('elsewhere', envFrom, { namespace: 'other' }));
  expect(readers.readersOf('shop', 'Secret/app-secrets')).toEqual({
    readers: [
      { kind: 'Deployment', namespace: 'shop', name: 'api', keys: ['DB', 'TOKEN'] },
      { kind: 'Deployment', namespace: 'shop', name: 'worker', keys: null },
      { kind: 'StatefulSet', namespace: 'shop', name: 'db', keys: ['DB'] },
    ],
    truncated: false,
  });
  expect(readers.gone('Deployment', workload('worker', envFrom))).toEqual(['Secret/app-secrets']);
  expect(readers.gone('Deployment', workload('worker', envFrom))).toEqual([]);
  expect(readers.readersOf('shop', 'Secret/app-secrets').readers.map((reader) => reader.name)).toEqual(['api', 'db']);
});

test(`at most ${KEY_READERS_MAX} readers and ${KEYS_PER_READER_MAX} keys each, then truncated`, () => {
  const readers = new TargetReaders();
  for (let index = 0; index <= KEY_READERS_MAX; index++) readers.seen('Deployment', workload(`api-${String(index).padStart(3, '0')}`, envFrom));
  expect(readers.readersOf('shop', 'Secret/app-secrets').readers).toHaveLength(KEY_READERS_MAX);
  expect(readers.readersOf('shop', 'Secret/app-secrets').truncated).toBe(true);
  const wide = new TargetReaders();
  wide.seen('Deployment', workload('api', keyRef(...Array.from({ length: KEYS_PER_READER_MAX + 1 }, (_, index) => `K${index}`))));
  const {
    readers: [api],
    truncated,
  } = wide.readersOf('shop', 'Secret/app-secrets');
  expect(api!.keys).toHaveLength(KEYS_PER_READER_MAX);
  expect(truncated).toBe(true);
});
