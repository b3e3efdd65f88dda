import { expect, test } from 'vitest';
import { dataHash, desiredSecret, liveDataHash, resolveSecretData } from '../../../src/operator/controllers/integration/managed-secret.ts';
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
