import { createHash, randomBytes } from 'node:crypto';
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import { expect, test } from 'vitest';
import {
  DataHasher,
  desiredTarget,
  fieldManagerOf,
  holdsOwnSync,
  hasTypeChanged,
  isCurrent,
  isDataKey,
  isOwnTarget,
  liveData,
  targetDataBytes,
  withDataKeysOnly,
} from '../../../src/operator/controllers/integration/managed-target.ts';
import type { IntegrationResource } from '../../../src/operator/resources.ts';
import type { TargetObject } from '../../../src/operator/runtime/kube-api.ts';

test('data keys as the apiserver takes them: at most 253 of [-._a-zA-Z0-9], not . or .., not starting with ..; the others left out, sorted', () => {
  for (const key of ['A', 'a.b', '.env', '_x-1', 'k'.repeat(253)]) expect(isDataKey(key), key).toBe(true);
  for (const key of ['.', '..', '..x', 'k'.repeat(254), 'a b', 'ü', '']) expect(isDataKey(key), key).toBe(false);
  for (const key of ['__proto__', 'constructor']) expect(isDataKey(key), key).toBe(true);
  expect(withDataKeysOnly({ '..': 'x', OK: 'y', '.': 'x' })).toEqual({ data: { OK: 'y' }, skipped: ['.', '..'] });
});

test('the size the apiserver counts is the decoded values in bytes', () => {
  expect(targetDataBytes({ A: 'abc', B: 'ü' })).toBe(5);
});

const installationKey = randomBytes(32);
const hasher = new DataHasher(installationKey);
const dataHash = (data: Record<string, string>) => hasher.hash(data);

test('the data hash does not depend on key order and reveals no value', () => {
  expect(dataHash({ a: '1', b: '2' })).toBe(dataHash({ b: '2', a: '1' }));
  expect(dataHash({ a: '12' })).not.toBe(dataHash({ a1: '2' }));
  expect(dataHash({ a: 'hunter2' })).not.toContain('hunter2');
});

test('the data hash is keyed: the same with the same key (every replica, every restart), another with another key', () => {
  expect(new DataHasher(Buffer.from(installationKey)).hash({ PIN: '4242' })).toBe(dataHash({ PIN: '4242' }));
  expect(new DataHasher(randomBytes(32)).hash({ PIN: '4242' })).not.toBe(dataHash({ PIN: '4242' }));
  expect(dataHash({ PIN: '4242' })).toMatch(/^hmac-sha256:[0-9a-f]{32}$/);
});

test('a short value cannot be found by trying every value against the data hash without the key', () => {
  const shown = dataHash({ PIN: '4242' });
  // the attack on an unkeyed hash: every 4-digit PIN, hashed as the data hash was
  const unkeyed = (value: string) => `sha256:${createHash('sha256').update(`3:PIN${value.length}:${value}`).digest('hex').slice(0, 32)}`;
  const found = Array.from({ length: 10_000 }, (_, n) => String(n).padStart(4, '0')).filter((pin) => unkeyed(pin) === shown || unkeyed(pin).slice(7) === shown.slice(12));
  expect(found).toEqual([]);
});

const resource = (creationPolicy: 'Owner' | 'Orphan' | 'Merge', target: Partial<IntegrationResource['spec']['target']> = {}) =>
  ({
    metadata: { name: 'web', namespace: 'shop', uid: 'uid-1' },
    spec: { environment: 'dev', target: { name: 'web-secrets', creationPolicy, labels: { team: 'a' }, ...target } },
  }) as IntegrationResource;

test('the applied Secret: labels, annotations without values (and its installation), owner only for Owner, base64 data', () => {
  const installation = '3f0c3a4e-0000-4000-8000-000000000001';
  const owned = desiredTarget(resource('Owner'), { TOKEN: 'v1' }, 42, installation, dataHash({ TOKEN: 'v1' }));
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
  expect((owned as V1Secret).type).toBe('Opaque');
  expect(desiredTarget(resource('Orphan'), {}, 1, installation, dataHash({})).metadata!.ownerReferences).toBeUndefined();
  expect(dataHash(liveData(owned))).toBe(dataHash({ TOKEN: 'v1' }));
});

test('a Merge Integration applies only its keys, labels and annotations with a field manager of its own; the managed-by label only if no one else set one', () => {
  const installation = '3f0c3a4e-0000-4000-8000-000000000001';
  const merged = desiredTarget(resource('Merge'), { TOKEN: 'v1' }, 7, installation, dataHash({ TOKEN: 'v1' }));
  expect((merged as V1Secret).type).toBeUndefined();
  expect(merged.metadata!.ownerReferences).toBeUndefined();
  expect(merged.metadata!.annotations).toEqual({ 'coffer.dev/installation': installation });
  expect(merged.metadata!.labels).toEqual({ team: 'a', 'app.kubernetes.io/managed-by': 'coffer' });
  const helms = { metadata: { labels: { 'app.kubernetes.io/managed-by': 'Helm' } } };
  expect(desiredTarget(resource('Merge'), {}, 7, installation, dataHash({}), helms).metadata!.labels).toEqual({ team: 'a' });
  expect(fieldManagerOf(resource('Merge'))).toBe('coffer/web');
  expect(fieldManagerOf(resource('Owner'))).toBe('coffer');
  const long = { ...resource('Merge'), metadata: { name: 'n'.repeat(253), namespace: 'shop' } } as IntegrationResource;
  expect(fieldManagerOf(long).length).toBeLessThanOrEqual(128);
});

test('current: the same data (Merge: its own keys) and every label and annotation it sets, the revision aside; its Secret by annotation or owner uid', () => {
  const installation = '3f0c3a4e-0000-4000-8000-000000000001';
  const desired = desiredTarget(resource('Owner'), { TOKEN: 'v1' }, 42, installation, dataHash({ TOKEN: 'v1' }));
  const live = structuredClone(desired);
  live.metadata!.annotations!['coffer.dev/revision'] = '41';
  expect(isCurrent(live, desired, 'Owner')).toBe(true);
  expect(isCurrent({ ...live, data: { ...live.data, EXTRA: 'eA==' } }, desired, 'Owner')).toBe(false);
  expect(isCurrent({ ...live, metadata: { ...live.metadata, labels: { team: 'a' } } }, desired, 'Owner')).toBe(false);
  const merged = desiredTarget(resource('Merge'), { TOKEN: 'v1' }, 42, installation, dataHash({ TOKEN: 'v1' }));
  expect(isCurrent({ ...merged, data: { ...merged.data, THEIRS: 'eA==' } }, merged, 'Merge')).toBe(true);
  expect(isOwnTarget(live, resource('Owner'), installation)).toBe(true);
  const unlabelled = { metadata: { ownerReferences: [{ apiVersion: 'coffer.dev/v1alpha1', kind: 'Integration', name: 'web', uid: 'uid-1' }] } };
  expect(isOwnTarget(unlabelled as V1ConfigMap, resource('Owner'), installation)).toBe(true);
  expect(isOwnTarget({ metadata: { annotations: { 'coffer.dev/integration': 'shop/other' } } }, resource('Owner'), installation)).toBe(false);
  expect(isOwnTarget(live, resource('Owner'), 'another-installation')).toBe(false);
});

test('a ConfigMap target holds its data as plain strings, without a type; the template adds labels and annotations and sets the Secret type', () => {
  const installation = '3f0c3a4e-0000-4000-8000-000000000001';
  const configMap = desiredTarget(resource('Owner', { kind: 'ConfigMap' }), { LOG_LEVEL: 'debug' }, 3, installation, dataHash({ LOG_LEVEL: 'debug' }));
  expect(configMap.kind).toBe('ConfigMap');
  expect(configMap.data).toEqual({ LOG_LEVEL: 'debug' });
  expect('type' in configMap).toBe(false);
  expect(liveData(configMap)).toEqual({ LOG_LEVEL: 'debug' });
  const tls = desiredTarget(
    resource('Owner', { type: 'Opaque', template: { type: 'kubernetes.io/tls', metadata: { labels: { tier: 'edge' }, annotations: { note: 'x' } } } }),
    { 'tls.crt': 'c', 'tls.key': 'k' },
    3,
    installation,
    dataHash({ 'tls.crt': 'c', 'tls.key': 'k' }),
  );
  expect('type' in tls && tls.type).toBe('kubernetes.io/tls');
  expect(tls.metadata!.labels).toMatchObject({ team: 'a', tier: 'edge' });
  expect(tls.metadata!.annotations).toMatchObject({ note: 'x' });
  const opaque = desiredTarget(resource('Owner'), { 'tls.crt': 'c', 'tls.key': 'k' }, 3, installation, dataHash({ 'tls.crt': 'c', 'tls.key': 'k' }));
  expect(hasTypeChanged(opaque, tls)).toBe(true);
  expect(hasTypeChanged(tls, tls)).toBe(false);
  expect(isCurrent(opaque, tls, 'Owner')).toBe(false);
});

test("the watch's echo of an Integration's own write is told from drift: the object holds its last sync exactly as it wrote it", () => {
  const installation = '3f0c3a4e-0000-4000-8000-000000000001';
  const data = { TOKEN: 'v1', URL: 'https://shop' };
  const hash = dataHash(data);
  const written = desiredTarget(resource('Owner'), data, 42, installation, hash);
  const isEcho = (object: TargetObject) => holdsOwnSync(object, resource('Owner'), installation, hasher, [hash]);
  expect(isEcho(written)).toBe(true);
  expect(holdsOwnSync(desiredTarget(resource('Orphan'), data, 42, installation, hash), resource('Orphan'), installation, hasher, [hash])).toBe(true);

  const edited = (change: (object: V1Secret) => void) => {
    const copy = structuredClone(written) as V1Secret;
    change(copy);
    return copy;
  };
  // drift: a value changed, a key added or removed, the hash annotation rewritten to match (no key: it cannot be)
  expect(isEcho(edited((secret) => (secret.data!.TOKEN = Buffer.from('v2').toString('base64'))))).toBe(false);
  expect(isEcho(edited((secret) => (secret.data!.EXTRA = 'eA==')))).toBe(false);
  expect(isEcho(edited((secret) => delete secret.data!.URL))).toBe(false);
  const forged = new DataHasher(randomBytes(32));
  expect(
    isEcho(
      edited((secret) => {
        secret.data!.TOKEN = Buffer.from('v2').toString('base64');
        secret.metadata!.annotations!['coffer.dev/data-hash'] = forged.hash({ TOKEN: 'v2', URL: 'https://shop' });
      }),
    ),
  ).toBe(false);
  // not this Integration's, not this installation's, no longer owned by it, or not what its status says it synced
  expect(isEcho(edited((secret) => (secret.metadata!.annotations!['coffer.dev/integration'] = 'shop/other')))).toBe(false);
  expect(holdsOwnSync(written, resource('Owner'), '3f0c3a4e-0000-4000-8000-000000000002', hasher, [hash])).toBe(false);
  expect(isEcho(edited((secret) => (secret.metadata!.ownerReferences = [])))).toBe(false);
  expect(holdsOwnSync(written, resource('Owner'), installation, hasher, [dataHash({ TOKEN: 'v0' })])).toBe(false);
  expect(holdsOwnSync(written, resource('Owner'), installation, hasher, [undefined])).toBe(false);
  // a sync under way: its status still names the hash it had before (v0), the write's own hash is known meanwhile
  expect(holdsOwnSync(written, resource('Owner'), installation, hasher, [dataHash({ TOKEN: 'v0' }), hash])).toBe(true);
  expect(holdsOwnSync(written, resource('Owner'), installation, hasher, [dataHash({ TOKEN: 'v0' }), dataHash({ TOKEN: 'v2' })])).toBe(false);
  // a Merge target is shared: every update is looked at
  expect(holdsOwnSync(desiredTarget(resource('Merge'), data, 42, installation, hash), resource('Merge'), installation, hasher, [hash])).toBe(false);
});

test('an echo is not told where the object differs from what a write of its data would make: a label or annotation of the spec, or the type', () => {
  const installation = '3f0c3a4e-0000-4000-8000-000000000001';
  const data = { TOKEN: 'v1' };
  const hash = dataHash(data);
  const written = desiredTarget(resource('Owner'), data, 42, installation, hash) as V1Secret;
  expect(
    holdsOwnSync({ ...written, metadata: { ...written.metadata, labels: { 'app.kubernetes.io/managed-by': 'coffer' } } }, resource('Owner'), installation, hasher, [
      hash,
    ]),
  ).toBe(false);
  expect(holdsOwnSync({ ...written, type: 'kubernetes.io/tls' }, resource('Owner'), installation, hasher, [hash])).toBe(false);
  // the revision annotation is the write's own: another revision of the same data is still the same sync
  expect(holdsOwnSync(desiredTarget(resource('Owner'), data, 43, installation, hash), resource('Owner'), installation, hasher, [hash])).toBe(true);
});
