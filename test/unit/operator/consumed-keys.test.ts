import { describe, expect, test } from 'vitest';
import { consumedKeys, keysRead } from '../../../src/operator/controllers/reload/consumed-keys.ts';
import { checksumAnnotation, ReloadHasher } from '../../../src/operator/controllers/reload/reload-checksum.ts';

const container = (extra: object) => ({ name: 'app', image: 'app:1', ...extra });

describe('consumedKeys: what a pod template reads', () => {
  test('env valueFrom reads one key; envFrom every key; of Secrets and ConfigMaps alike', () => {
    const reads = consumedKeys({
      containers: [
        container({
          env: [
            { name: 'A', valueFrom: { secretKeyRef: { name: 'app', key: 'DB_PASSWORD' } } },
            { name: 'B', valueFrom: { configMapKeyRef: { name: 'settings', key: 'LOG_LEVEL' } } },
            { name: 'C', value: 'literal' },
            { name: 'D', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          ],
          envFrom: [{ secretRef: { name: 'shared' } }, { configMapRef: { name: 'flags' } }],
        }),
      ],
    });
    expect([...reads.keys()].sort()).toEqual(['ConfigMap/flags', 'ConfigMap/settings', 'Secret/app', 'Secret/shared']);
    expect(reads.get('Secret/app')).toEqual(new Set(['DB_PASSWORD']));
    expect(reads.get('ConfigMap/settings')).toEqual(new Set(['LOG_LEVEL']));
    expect(reads.get('Secret/shared')).toBe('all');
    expect(reads.get('ConfigMap/flags')).toBe('all');
  });

  test('a Secret and a ConfigMap of the same name are different things', () => {
    const reads = consumedKeys({ containers: [container({ envFrom: [{ configMapRef: { name: 'app' } }] })] });
    expect(reads.has('Secret/app')).toBe(false);
    expect(reads.get('ConfigMap/app')).toBe('all');
  });

  test('volumes: every key without items, only the listed keys with them; projected sources too', () => {
    const reads = consumedKeys({
      containers: [container({})],
      volumes: [
        { name: 'all', secret: { secretName: 'whole' } },
        { name: 'some', secret: { secretName: 'picked', items: [{ key: 'tls.crt', path: 'cert' }] } },
        { name: 'cm', configMap: { name: 'config', items: [{ key: 'app.yaml', path: 'app.yaml' }] } },
        {
          name: 'projected',
          projected: { sources: [{ secret: { name: 'picked', items: [{ key: 'tls.key', path: 'key' }] } }, { configMap: { name: 'more' } }] },
        },
        { name: 'scratch', emptyDir: {} },
      ],
    });
    expect(reads.get('Secret/whole')).toBe('all');
    expect(reads.get('Secret/picked')).toEqual(new Set(['tls.crt', 'tls.key']));
    expect(reads.get('ConfigMap/config')).toEqual(new Set(['app.yaml']));
    expect(reads.get('ConfigMap/more')).toBe('all');
    expect(reads.size).toBe(4);
  });

  test('init and ephemeral containers count; a key read one way and the whole object another reads all', () => {
    const reads = consumedKeys({
      containers: [container({ env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'app', key: 'ONE' } } }] })],
      initContainers: [container({ name: 'init', envFrom: [{ secretRef: { name: 'app' } }] })],
      ephemeralContainers: [container({ name: 'debug', env: [{ name: 'B', valueFrom: { secretKeyRef: { name: 'debug', key: 'TOKEN' } } }] })],
    });
    expect(reads.get('Secret/app')).toBe('all');
    expect(reads.get('Secret/debug')).toEqual(new Set(['TOKEN']));
  });

  test('no spec reads nothing', () => {
    expect(consumedKeys(undefined).size).toBe(0);
  });

  test('keysRead: every key of the data, or the listed ones (a missing listed key is still read: its appearing changes the pod)', () => {
    expect(keysRead('all', { B: '2', A: '1' })).toEqual(['A', 'B']);
    expect(keysRead(new Set(['Z', 'A']), { A: '1' })).toEqual(['A', 'Z']);
  });
});

describe('the reload checksum', () => {
  const hasher = new ReloadHasher(Buffer.alloc(32, 7));

  test('depends only on the keys read, and their values', () => {
    const before = hasher.checksum({ A: '1', B: '2' }, ['A']);
    expect(hasher.checksum({ A: '1', B: 'changed' }, ['A'])).toBe(before);
    expect(hasher.checksum({ A: 'changed', B: '2' }, ['A'])).not.toBe(before);
    expect(before).toMatch(/^[0-9a-f]{32}$/);
  });

  test('a missing key, an empty value and shifted boundaries all differ', () => {
    const seen = new Set([
      hasher.checksum({}, ['A']),
      hasher.checksum({ A: '' }, ['A']),
      hasher.checksum({ A: 'xB', B: '' }, ['A', 'B']),
      hasher.checksum({ A: 'x', B: 'B' }, ['A', 'B']),
    ]);
    expect(seen.size).toBe(4);
  });

  test('is keyed: another installation computes another checksum for the same data', () => {
    const other = new ReloadHasher(Buffer.alloc(32, 8));
    expect(other.checksum({ A: 'short' }, ['A'])).not.toBe(hasher.checksum({ A: 'short' }, ['A']));
  });

  test('annotation names stay within what Kubernetes allows and stay distinct', () => {
    expect(checksumAnnotation('Secret/app-secrets')).toBe('checksum.coffer.dev/secret-app-secrets');
    const long = 'a'.repeat(200);
    const first = checksumAnnotation(`ConfigMap/${long}`);
    const second = checksumAnnotation(`ConfigMap/${long}b`);
    for (const name of [first, second]) expect(name.split('/')[1]!.length).toBeLessThanOrEqual(63);
    expect(first).not.toBe(second);
  });
});
