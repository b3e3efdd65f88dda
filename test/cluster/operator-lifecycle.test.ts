import { CoordinationV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, interrupt, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * Restart, failover and readiness of the operator process: the Lease released
 * on a graceful stop, a restarted replica with the same identity resuming at
 * once, a killed leader replaced once its Lease expires, and /readyz and the
 * log while the operator lacks its RBAC. Times are printed, never asserted.
 */
let cluster: Cluster;
let namespace: TestNamespace;
let environment: Record<string, string>;
let api: CofferProcess;
let token: string;
let projectId: string;
const running: CofferProcess[] = [];
const slug = `life-${Date.now().toString(36)}`;
const work = mkdtempSync(join(tmpdir(), 'coffer-lifecycle-'));

const lease = async () => (await cluster.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: namespace.name, name: 'coffer-operator' })).spec!;

async function operatorAs(podName: string, extra: Record<string, string> = {}, probe: '/readyz' | '/healthz' = '/readyz'): Promise<CofferProcess> {
  const process = await startOperatorProcess(environment, { POD_NAME: podName, COFFER_WATCH_NAMESPACE: namespace.name, ...extra }, probe);
  running.push(process);
  return process;
}

/** Writes a secret and resolves with the milliseconds until the Secret holds it. */
async function changeReachesSecret(key: string, timeoutMs = 60_000): Promise<number> {
  const started = Date.now();
  const created = await callCoffer(api, 'POST', `/api/v3/secrets/raw/${key}`, token, { workspaceId: projectId, environment: 'dev', secretValue: 'yes' });
  expect(created.status).toBe(200);
  await waitFor(`${key} to reach the Secret`, async () => (await cluster.secretData(namespace.name, 'life-secret'))?.[key] === 'yes', { timeoutMs, intervalMs: 50 });
  return Date.now() - started;
}

beforeAll(async () => {
  cluster = clusterClients();
  namespace = await createTestNamespace('lifecycle');
  environment = await cofferEnvironment(namespace.name);
  ({ api, token } = await startApi(environment));
  running.push(api);
  await operatorAs('replica-a');
  await cluster.apply('secretsprojects', namespace.name, { kind: 'SecretsProject', metadata: { name: 'life' }, spec: { name: 'Life', slug } });
  projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'life')).status.projectId;
  await cluster.apply('integrations', namespace.name, {
    kind: 'Integration',
    metadata: { name: 'life' },
    spec: { projectRef: { name: 'life' }, environment: 'dev', target: { name: 'life-secret' } },
  });
  await cluster.waitReady('integrations', namespace.name, 'life', 'Synced');
}, 180_000);

afterAll(async () => {
  for (const process of running.reverse()) await stopCoffer(process).catch(() => {});
  await namespace?.cleanup();
  rmSync(work, { recursive: true, force: true });
});

describe('restart and failover', () => {
  test('a graceful stop (Ctrl-C) releases the Lease: the waiting replica leads at once; the stopped one logged it at INFO, exit 0', async () => {
    const [, first] = running;
    const holder = await waitFor('replica-a to lead', async () => ((await lease()).holderIdentity?.endsWith('_replica-a') ? (await lease()).holderIdentity : false));
    await operatorAs('replica-b');
    const { code, lines } = await interrupt(first!.process, first!.output);
    expect(code).toBe(0);
    expect(lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([]);
    expect(lines.find((line) => line.msg === 'shutting down')?.level).toBe(30);
    const released = await lease();
    // replica-b may already have taken it (it tries every 2 s)
    expect([undefined, holder].includes(released.holderIdentity) ? released.holderIdentity : 'taken by replica-b').not.toBe(holder);
    const started = Date.now();
    await waitFor('replica-b to lead', async () => (await lease()).holderIdentity?.endsWith('_replica-b'), { intervalMs: 50 });
    console.log(
      `graceful stop: replica-b led ${Date.now() - started} ms after replica-a exited; a change then took ${await changeReachesSecret('AFTER_HANDOVER')} ms to reach the Secret`,
    );
  });

  test('kill -9, then the same pod (POD_NAME) restarted: it recognises its own Lease and resumes at once, without waiting for it to expire', async () => {
    const before = await lease();
    expect(before.holderIdentity).toMatch(/_replica-b$/);
    const leader = running.at(-1)!;
    await stopCoffer(leader, 'SIGKILL');
    const restarted = Date.now();
    await operatorAs('replica-b');
    const ready = Date.now() - restarted;
    const synced = await changeReachesSecret('AFTER_RESTART');
    const after = await lease();
    expect(after.holderIdentity).toBe(before.holderIdentity);
    expect(after.leaseTransitions).toBe(before.leaseTransitions);
    console.log(
      `restart with the same identity: process ready after ${ready} ms; a change made then reached the Secret ${synced} ms later (the Lease lasts ${before.leaseDurationSeconds} s)`,
    );
  });

  test('kill -9 of the leader: another replica takes over once the Lease expires', async () => {
    const standby = await operatorAs('replica-c');
    const leader = running.at(-2)!;
    const before = await lease();
    await stopCoffer(leader, 'SIGKILL');
    const killed = Date.now();
    await waitFor('replica-c to lead', async () => (await lease()).holderIdentity?.endsWith('_replica-c'), { timeoutMs: 60_000, intervalMs: 100 });
    const tookOver = Date.now() - killed;
    const after = await lease();
    expect(after.leaseTransitions).toBe((before.leaseTransitions ?? 0) + 1);
    console.log(
      `kill -9 failover: replica-c led ${tookOver} ms after the kill (Lease ${before.leaseDurationSeconds} s, last renewed ${killed - new Date(before.renewTime!).getTime()} ms before the kill); a change then took ${await changeReachesSecret('AFTER_FAILOVER')} ms`,
    );
    expect(standby.process.exitCode).toBeNull();
  });
});

describe('readiness follows whether the operator can work', () => {
  test('without its RBAC: /readyz 503 naming the missing permissions, one concise warning per watch; with it: ready, and it syncs', async () => {
    const unprivileged = join(work, 'kubeconfig-operator');
    const config = parse(readFileSync(inject('kubeconfig'), 'utf8'));
    config['current-context'] = 'operator';
    writeFileSync(unprivileged, stringify(config), { mode: 0o600 });
    const watched = await createTestNamespace('lifecycle-rbac');
    try {
      const process = await startOperatorProcess(
        environment,
        { POD_NAME: 'replica-rbac', KUBECONFIG: unprivileged, COFFER_WATCH_NAMESPACE: watched.name, COFFER_OPERATOR_NAMESPACE: watched.name },
        '/healthz',
      );
      running.push(process);
      const notReady = await waitFor('/readyz 503 naming the missing permissions', async () => {
        const response = await fetch(`${process.probes}/readyz`);
        const body = (await response.json()) as { reason?: string };
        return response.status === 503 && body.reason?.includes('lacks Kubernetes permissions') ? body : false;
      });
      expect(notReady.reason).toContain(`get, list, watch, patch coffer.dev/integrations in namespace ${watched.name}`);
      expect(notReady.reason).toContain(`update, patch coffer.dev/integrations/status in namespace ${watched.name}`);
      expect(await (await fetch(`${process.probes}/metrics`)).text()).toMatch(/^coffer_operator_ready 0$/m);
      // the positive event: every refused watch failed three times (retried after 1 s, then 2 s more); a warning per
      // retry would have been written with the second failure, seconds before the third
      await waitFor('each refused watch to fail three times', async () => {
        const counts = Object.values(await watchFailures(process.probes)).filter((count) => count > 0);
        return counts.length > 0 && counts.every((count) => count >= 3);
      });
      const lines = process.output.join('').split('\n').filter(Boolean);
      const watchWarnings = lines.filter((line) => line.includes('watch on') && line.includes('"level":40'));
      expect(watchWarnings.length).toBeGreaterThan(0);
      const warnedWatches = watchWarnings.map((line) => /watch on (\S+) failed/.exec(line)?.[1]);
      expect(new Set(warnedWatches).size, 'one warning per watch, not one per retry').toBe(warnedWatches.length);
      for (const line of lines) expect(line.length).toBeLessThan(2_000);

      // granted: ready again, and it works
      const rbac = cluster.kc.makeApiClient(RbacAuthorizationV1Api);
      const manifests = parse(readFileSync(join(import.meta.dirname, '../../deploy/common/rbac.yaml'), 'utf8').split('\n---\n')[0]!);
      await rbac.createNamespacedRole({ namespace: watched.name, body: { metadata: { name: 'coffer-operator' }, rules: manifests.rules } });
      await rbac.createNamespacedRole({
        namespace: watched.name,
        body: { metadata: { name: 'coffer-leases' }, rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }] },
      });
      for (const role of ['coffer-operator', 'coffer-leases']) {
        await rbac.createNamespacedRoleBinding({
          namespace: watched.name,
          body: {
            metadata: { name: role },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
            subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'operator' }],
          },
        });
      }
      await waitFor('/readyz 200 once the RBAC is granted', async () => (await fetch(`${process.probes}/readyz`)).status === 200, { timeoutMs: 90_000, intervalMs: 500 });
      expect(process.output.join('')).toContain('the operator has every permission it needs again');
      await cluster.apply('secretsprojects', watched.name, {
        kind: 'SecretsProject',
        metadata: { name: 'granted' },
        spec: { name: 'Granted', slug: `granted-${Date.now().toString(36)}` },
      });
      await cluster.waitReady('secretsprojects', watched.name, 'granted');
      await cluster.remove('secretsprojects', watched.name, 'granted');
      await waitFor('the SecretsProject to be finalized', async () => !(await cluster.get('secretsprojects', watched.name, 'granted').catch(() => undefined)));
    } finally {
      await watched.cleanup();
    }
  });
});

/** The operator's informer list/watch failures by resource, from its /metrics. */
async function watchFailures(probes: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${probes}/metrics`)).text();
  const lines = text.matchAll(/^coffer_operator_watch_failures_total\{resource="([^"]+)"\} (\d+)$/gm);
  return Object.fromEntries([...lines].map(([, resource, count]) => [resource, Number(count)]));
}
