import { expect, test } from 'vitest';
import {
  dataHash,
  desiredSecret,
  fieldManagerOf,
  isCurrent,
  isOwnSecret,
  isSecretKey,
  liveDataHash,
  resolveSecretData,
  secretDataBytes,
} from '../../../src/operator/controllers/integration/managed-secret.ts';
import type { IntegrationResource } from '../../../src/operator/resources.ts';

const secret = (key: string, value: string, path = '/') => ({ key, value, path });

test('own secrets beat imports; the last import wins; nearer paths beat deeper ones; invalid keys are skipped', () => {
  const resolved = resolveSecretData({
    secrets: [secret('A', 'own'), secret('DEEP', 'deep', '/x/y'), secret('DEEP', 'near', '/x'), secret('bad key', 'x')],
    imports: [
      { path: '/one', environment: 'dev', secrets: [secret('A', 'first'), secret('B', 'first'), secret('C', 'first')] },
      { path: '/two', environment: 'dev', secrets: [secret('B', 'second')] },
    ],
  });
  expect(resolved.data).toEqual({ A: 'own', B: 'second', C: 'first', DEEP: 'near' });
  expect(resolved.skipped).toEqual(['bad key']);
});

test('Secret keys as the apiserver takes them: at most 253 of [-._a-zA-Z0-9], not . or .., not starting with ..', () => {
  for (const key of ['A', 'a.b', '.env', '_x-1', 'k'.repeat(253)]) expect(isSecretKey(key), key).toBe(true);
  for (const key of ['.', '..', '..x', 'k'.repeat(254), 'a b', 'ü', '']) expect(isSecretKey(key), key).toBe(false);
  const { data, skipped } = resolveSecretData({ secrets: [secret('..', 'x'), secret('.', 'x'), secret('OK', 'y')], imports: [] });
  expect(data).toEqual({ OK: 'y' });
  expect(skipped).toEqual(['.', '..']);
});

test('the size the apiserver counts is the decoded values in bytes', () => {
  expect(secretDataBytes({ A: 'abc', B: 'ü' })).toBe(5);
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
  expect(liveDataHash(owned)).toBe(dataHash({ TOKEN: 'v1' }));
});

test('a Merge Integration applies only its keys, labels and annotations with a field manager of its own; the managed-by label only if no one else set one', () => {
  const installation = '3f0c3a4e-0000-4000-8000-000000000001';
  const merged = desiredSecret(resource('Merge'), { TOKEN: 'v1' }, 7, installation);
  expect(merged.type).toBeUndefined();
  expect(merged.metadata!.ownerReferences).toBeUndefined();
  expect(merged.metadata!.annotations).toEqual({ 'coffer.dev/installation': installation });
  expect(merged.metadata!.labels).toEqual({ team: 'a', 'app.kubernetes.io/managed-by': 'coffer' });
  const helms = { metadata: { labels: { 'app.kubernetes.io/managed-by': 'Helm' } } };
  expect(desiredSecret(resource('Merge'), {}, 7, installation, helms).metadata!.labels).toEqual({ team: 'a' });
  expect(fieldManagerOf(resource('Merge'))).toBe('coffer/web');
  expect(fieldManagerOf(resource('Owner'))).toBe('coffer');
  const long = { ...resource('Merge'), metadata: { name: 'n'.repeat(253), namespace: 'shop' } } as IntegrationResource;
  expect(fieldManagerOf(long).length).toBeLessThanOrEqual(128);
});

test('current: the same data (Merge: its own keys) and every label and annotation it sets, the revision aside; its Secret by annotation or owner uid', () => {
  const installation = '3f0c3a4e-0000-4000-8000-000000000001';
  const desired = desiredSecret(resource('Owner'), { TOKEN: 'v1' }, 42, installation);
  const live = structuredClone(desired);
  live.metadata!.annotations!['coffer.dev/revision'] = '41';
  expect(isCurrent(live, desired, 'Owner')).toBe(true);
  expect(isCurrent({ ...live, data: { ...live.data, EXTRA: 'eA==' } }, desired, 'Owner')).toBe(false);
  expect(isCurrent({ ...live, metadata: { ...live.metadata, labels: { team: 'a' } } }, desired, 'Owner')).toBe(false);
  const merged = desiredSecret(resource('Merge'), { TOKEN: 'v1' }, 42, installation);
  expect(isCurrent({ ...merged, data: { ...merged.data, THEIRS: 'eA==' } }, merged, 'Merge')).toBe(true);
  expect(isOwnSecret(live, resource('Owner'), installation)).toBe(true);
  const unlabelled = { metadata: { ownerReferences: [{ apiVersion: 'coffer.dev/v1alpha1', kind: 'Integration', name: 'web', uid: 'uid-1' }] } };
  expect(isOwnSecret(unlabelled, resource('Owner'), installation)).toBe(true);
  expect(isOwnSecret({ metadata: { annotations: { 'coffer.dev/integration': 'shop/other' } } }, resource('Owner'), installation)).toBe(false);
  expect(isOwnSecret(live, resource('Owner'), 'another-installation')).toBe(false);
});
