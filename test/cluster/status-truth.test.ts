import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, putSecret, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * Status that tells the truth (issue 29): under concurrent writes that
 * change how many keys a folder holds, once the revision barrier says a
 * revision is reached, each Integration's status (and so the REVISION and
 * KEYS columns of `kubectl get integration`) names exactly what its Secret
 * holds: its revision, its number of keys, and a sync time from this round.
 */
let cluster: Cluster;
let namespace: TestNamespace;
let api: CofferProcess;
let operator: CofferProcess;
let token: string;
let projectId: string;
const slug = `truth-${Date.now().toString(36)}`;
const place = () => ({ projectId, environment: 'dev', secretPath: '/truth' });
const INTEGRATIONS = [
  { name: 'app', target: 'app-secrets' },
  { name: 'worker', target: 'worker-secrets' },
];

async function deleteSecret(key: string): Promise<number> {
  const response = await callCoffer(api, 'DELETE', `/api/v3/secrets/raw/${key}`, token, { workspaceId: projectId, environment: 'dev', secretPath: '/truth' });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return Number(response.headers.get('coffer-revision'));
}

beforeAll(async () => {
  cluster = clusterClients();
  namespace = await createTestNamespace('truth');
  const environment = await cofferEnvironment(namespace.name);
  ({ api, token } = await startApi(environment));
  operator = await startOperatorProcess(environment);
  await cluster.apply('secretsprojects', namespace.name, { kind: 'SecretsProject', metadata: { name: 'shop' }, spec: { name: 'Shop', slug } });
  projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'shop')).status.projectId;
  expect((await callCoffer(api, 'POST', '/api/v1/folders', token, { workspaceId: projectId, environment: 'dev', name: 'truth' })).status).toBe(200);
  await putSecret(api, token, place(), 'FIRST', 'one');
  for (const { name, target } of INTEGRATIONS) {
    await cluster.apply('integrations', namespace.name, {
      kind: 'Integration',
      metadata: { name },
      spec: { projectRef: { name: 'shop' }, environment: 'dev', secretPath: '/truth', target: { name: target } },
    });
  }
  for (const { name } of INTEGRATIONS) await cluster.waitReady('integrations', namespace.name, name, 'Synced');
}, 180_000);

afterAll(async () => {
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  await namespace?.cleanup();
});

describe('status under concurrent writes that change the key count', () => {
  test('once the barrier reaches a round’s last revision, every status names the revision and key count its Secret holds', async () => {
    let present = ['FIRST'];
    for (let round = 0; round < 12; round++) {
      const roundStart = new Date(Date.now() - 1_000);
      // rounds grow and shrink the folder: three keys added, and from the second round on two of the previous round's removed
      const added = [0, 1, 2].map((index) => `KEY_${round}_${index}`);
      const removed = round % 3 === 2 ? present.slice(0, Math.min(present.length, 4)) : present.slice(0, Math.min(present.length, 2));
      const revisions = await Promise.all([...added.map((key) => putSecret(api, token, place(), key, `value-${round}`)), ...removed.map((key) => deleteSecret(key))]);
      present = [...present.filter((key) => !removed.includes(key)), ...added];
      const reached = Math.max(...revisions);

      const answer = await callCoffer(api, 'GET', `/api/v1/changes/wait?revision=${reached}&timeout=30s`, token);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ revision: reached, reached: true });

      for (const { name, target } of INTEGRATIONS) {
        const secret = await cluster.secret(namespace.name, target);
        const held = Number(secret!.metadata!.annotations!['coffer.dev/revision']);
        expect(Object.keys(secret!.data ?? {}).sort()).toEqual([...present].sort());
        const { status } = await cluster.get('integrations', namespace.name, name);
        const where = `round ${round}, Integration ${name}`;
        // the annotation names the revision the data was last written at; a later change that left it as it was moves only the status
        expect(status.syncedRevision, where).toBeGreaterThanOrEqual(reached);
        expect(status.syncedRevision, where).toBeGreaterThanOrEqual(held);
        expect(status.secretCount, where).toBe(present.length);
        expect(new Date(status.lastSyncTime).getTime(), where).toBeGreaterThanOrEqual(roundStart.getTime());
        expect(status.conditions.find((condition: { type: string }) => condition.type === 'Synced')).toMatchObject({ status: 'True' });
      }
    }
  }, 300_000);
});

describe('a status write changes the status alone', () => {
  interface ManagedFieldsEntry {
    manager: string;
    operation: string;
    subresource?: string;
    fieldsV1: { 'f:metadata'?: Record<string, Record<string, object>>; 'f:spec'?: object; 'f:status'?: Record<string, object> };
  }

  /** The fields a fieldsV1 set names (its '.' entry is the set itself). */
  const named = (set: object | undefined) => Object.keys(set ?? {}).filter((key) => key !== '.');

  const statusWrites = async (verb: string) => {
    const metrics = await (await fetch(`${operator.probes}/metrics`)).text();
    const line = metrics.split('\n').find((entry) => entry.startsWith(`coffer_operator_kube_requests_total{verb="${verb}",resource="integrations/status"}`));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };

  test('labels, annotations, the spec and what each field manager owns stay; a field the status no longer has is gone', async () => {
    const fields = { projectId, environment: 'dev', secretPath: '/fields' };
    expect((await callCoffer(api, 'POST', '/api/v1/folders', token, { workspaceId: projectId, environment: 'dev', name: 'fields' })).status).toBe(200);
    await putSecret(api, token, fields, 'GOOD', 'good-value');
    await putSecret(api, token, fields, '..hidden', 'not-a-data-key');
    const replacedBefore = await statusWrites('update');
    await cluster.apply('integrations', namespace.name, {
      kind: 'Integration',
      metadata: { name: 'fields', labels: { team: 'payments' }, annotations: { 'example.com/note': 'kept' } },
      spec: { projectRef: { name: 'shop' }, environment: 'dev', secretPath: '/fields', target: { name: 'fields-secrets' } },
    });
    const skipped = await cluster.waitReady('integrations', namespace.name, 'fields', 'Synced');
    expect(skipped.status.skippedKeys).toEqual(['..hidden']);
    // the status was replaced as a whole object (not merge-patched) at least once
    expect(await statusWrites('update')).toBeGreaterThan(replacedBefore);

    const resource = await cluster.get('integrations', namespace.name, 'fields');
    expect(resource.metadata.labels).toEqual({ team: 'payments' });
    expect(resource.metadata.annotations['example.com/note']).toBe('kept');
    expect(resource.spec).toMatchObject({ secretPath: '/fields', target: { name: 'fields-secrets' } });
    const entries = resource.metadata.managedFields as ManagedFieldsEntry[];
    const creator = entries.find((entry) => entry.subresource === undefined && entry.fieldsV1['f:spec'] !== undefined)!;
    expect(named(creator.fieldsV1['f:metadata']!['f:labels'])).toEqual(['f:team']);
    expect(named(creator.fieldsV1['f:metadata']!['f:annotations'])).toContain('f:example.com/note');
    expect(creator.fieldsV1['f:status']).toBeUndefined();
    const statusWriter = entries.find((entry) => entry.subresource === 'status')!;
    expect(named(statusWriter.fieldsV1)).toEqual(['f:status']);
    expect(named(statusWriter.fieldsV1['f:status'])).toContain('f:skippedKeys');

    // the key that could not be a data key goes: the next status has no skippedKeys at all
    const removed = await callCoffer(api, 'DELETE', '/api/v3/secrets/raw/..hidden', token, { workspaceId: projectId, environment: 'dev', secretPath: '/fields' });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    const synced = await waitFor('the Synced reason to be Synced again', async () => {
      const current = await cluster.get('integrations', namespace.name, 'fields');
      const condition = current.status?.conditions?.find((entry: { type: string }) => entry.type === 'Synced');
      return condition?.reason === 'Synced' ? current : false;
    });
    expect(synced.status.skippedKeys).toBeUndefined();
    expect(synced.status.secretCount).toBe(1);
    const after = (synced.metadata.managedFields as ManagedFieldsEntry[]).find((entry) => entry.subresource === 'status')!;
    expect(named(after.fieldsV1['f:status'])).not.toContain('f:skippedKeys');
    expect(synced.metadata.labels).toEqual({ team: 'payments' });
  }, 120_000);
});
