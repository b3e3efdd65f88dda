import { expect, test } from 'vitest';
import { checkSecretType } from '../../../src/operator/controllers/integration/secret-types.ts';
import type { IntegrationResource } from '../../../src/operator/resources.ts';

const integration = (type: string, templateType?: string) =>
  ({
    metadata: { name: 'web', namespace: 'shop' },
    spec: { environment: 'dev', target: { name: 'web', type, ...(templateType ? { template: { type: templateType } } : {}) } },
  }) as IntegrationResource;

const check = (type: string, data: Record<string, string>, templateType?: string) => () => checkSecretType(integration(type, templateType), data);

test('the data each built-in type needs passes', () => {
  expect(check('kubernetes.io/tls', { 'tls.crt': 'c', 'tls.key': 'k' })).not.toThrow();
  expect(check('kubernetes.io/dockerconfigjson', { '.dockerconfigjson': '{"auths":{}}' })).not.toThrow();
  expect(check('kubernetes.io/basic-auth', { password: 'p' })).not.toThrow();
  expect(check('kubernetes.io/ssh-auth', { 'ssh-privatekey': 'k' })).not.toThrow();
  expect(check('Opaque', {})).not.toThrow();
  expect(check('example.com/custom', { anything: 'x' })).not.toThrow();
});

test.each([
  ['kubernetes.io/tls', { 'tls.crt': 'c' }, /needs the key 'tls.key'/],
  ['kubernetes.io/basic-auth', {}, /needs the keys 'username' or 'password'/],
  ['kubernetes.io/dockerconfigjson', { '.dockerconfigjson': 'not json at all' }, /needs '.dockerconfigjson' to hold a JSON object/],
  ['kubernetes.io/dockercfg', {}, /needs the key '.dockercfg'/],
])('%s without what it needs is refused with a message of its own, never quoting a value', (type, data, message) => {
  let caught: unknown;
  try {
    check(type, data)();
  } catch (error) {
    caught = error;
  }
  expect(caught).toMatchObject({ reason: 'SecretTypeMismatch', message: expect.stringMatching(message) as unknown });
  expect((caught as Error).message).not.toContain('not json at all');
});

test('the template type wins over target.type, and service account tokens are never written', () => {
  expect(check('Opaque', {}, 'kubernetes.io/tls')).toThrow(/tls.crt' and 'tls.key/);
  expect(check('kubernetes.io/service-account-token', {})).toThrow(/filled by Kubernetes/);
});
