import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { apiStatus, createTestNamespace, kubeClients, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { COFFER_BIN } from '../support/coffer-process.ts';

/**
 * `coffer uninstall` when the operator is already gone: nothing else removes
 * coffer.dev/finalizer, so without it the resources, and their namespace,
 * stay Terminating. The resources here carry the finalizer as the operator
 * leaves them, and no operator runs.
 */
const { core, custom } = kubeClients();
let namespace: TestNamespace;
const coffer = { group: 'coffer.dev', version: 'v1alpha1' };

function uninstall(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [COFFER_BIN, 'uninstall', ...args], { env: { ...process.env, KUBECONFIG: inject('kubeconfig') } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

async function exists(plural: string, name: string): Promise<boolean> {
  try {
    await custom.getNamespacedCustomObject({ ...coffer, plural, namespace: namespace.name, name });
    return true;
  } catch (error) {
    if (apiStatus(error) === 404) return false;
    throw error;
  }
}

const finalized = (name: string) => ({ name, finalizers: ['coffer.dev/finalizer'] });

beforeAll(async () => {
  namespace = await createTestNamespace('uninstall');
  const body = (kind: string, name: string, spec: object) => ({ apiVersion: 'coffer.dev/v1alpha1', kind, metadata: finalized(name), spec });
  await custom.createNamespacedCustomObject({ ...coffer, plural: 'secretsprojects', namespace: namespace.name, body: body('SecretsProject', 'shop', { name: 'Shop' }) });
  await custom.createNamespacedCustomObject({
    ...coffer,
    plural: 'secretimports',
    namespace: namespace.name,
    body: body('SecretImport', 'shared', { projectRef: { name: 'shop' }, environment: 'dev', import: { environment: 'prod', path: '/' } }),
  });
  const integration = (await custom.createNamespacedCustomObject({
    ...coffer,
    plural: 'integrations',
    namespace: namespace.name,
    body: body('Integration', 'app', { projectRef: { name: 'shop' }, environment: 'dev', target: { name: 'app-secrets' } }),
  })) as { metadata: { uid: string } };
  // the Secret as the operator writes it for creationPolicy Owner
  await core.createNamespacedSecret({
    namespace: namespace.name,
    body: {
      metadata: {
        name: 'app-secrets',
        ownerReferences: [{ apiVersion: 'coffer.dev/v1alpha1', kind: 'Integration', name: 'app', uid: integration.metadata.uid, controller: true }],
      },
      stringData: { KEY: 'value' },
    },
  });
});

afterAll(async () => {
  await namespace?.cleanup();
});

describe('coffer uninstall with the operator gone', () => {
  test('without --release-finalizers it deletes, waits, and names what is stuck and what to do', async () => {
    const answer = await uninstall('--namespace', namespace.name, '--timeout', '2s');
    expect(answer.code).toBe(1);
    expect(answer.stdout).toContain(`deleting 1 integrations in namespace ${namespace.name}`);
    for (const stuck of [`Integration ${namespace.name}/app`, `SecretImport ${namespace.name}/shared`, `SecretsProject ${namespace.name}/shop`]) {
      expect(answer.stderr).toContain(stuck);
    }
    expect(answer.stderr).toContain('coffer uninstall --release-finalizers');
    const stuck = (await custom.getNamespacedCustomObject({ ...coffer, plural: 'integrations', namespace: namespace.name, name: 'app' })) as {
      metadata: { deletionTimestamp?: string };
    };
    expect(stuck.metadata.deletionTimestamp).toBeDefined();
  });

  test('--release-finalizers lets them go; the Owner Secret follows its Integration, and the namespace can be deleted', async () => {
    const answer = await uninstall('--namespace', namespace.name, '--timeout', '2s', '--release-finalizers');
    expect(answer.stderr).toBe('');
    expect(answer.code).toBe(0);
    expect(answer.stdout).toContain(`released coffer.dev/finalizer of Integration ${namespace.name}/app`);
    expect(answer.stdout).toContain(`no Coffer resources left in namespace ${namespace.name}`);
    for (const [plural, name] of [
      ['integrations', 'app'],
      ['secretimports', 'shared'],
      ['secretsprojects', 'shop'],
    ] as const) {
      expect(await exists(plural, name)).toBe(false);
    }
    // the garbage collector (kube-controller-manager) deletes the dependent Secret
    await waitFor('the Owner Secret to be garbage-collected', async () => {
      try {
        await core.readNamespacedSecret({ namespace: namespace.name, name: 'app-secrets' });
        return false;
      } catch (error) {
        return apiStatus(error) === 404;
      }
    });
    await namespace.cleanup({ wait: true, timeoutMs: 60_000 });
  });

  test('with nothing there it says so and exits 0', async () => {
    const answer = await uninstall('--namespace', namespace.name, '--timeout', '1s');
    expect(answer).toMatchObject({ code: 0 });
    expect(answer.stdout).toContain('deleting 0 secretsprojects');
  });
});
