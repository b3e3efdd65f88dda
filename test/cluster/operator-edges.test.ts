import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { Keyring } from '../../src/crypto/keyring.ts';
import type { Project } from '../../src/db/schema.ts';
import { SecretCipher } from '../../src/secrets/secret-cipher.ts';
import { type Cluster, clusterClients, cofferEnvironment, operatorMetric, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * The operator at its edges, each failure class on the real control plane:
 * what the apiserver refuses, ownership between Integrations, drift, access
 * revoked, sources deleted, force-sync, metrics and debug lines. One API
 * process and one operator process (at debug level) on PostgreSQL.
 */
let cluster: Cluster;
let namespace: TestNamespace;
let other: TestNamespace;
let api: CofferProcess;
let operator: CofferProcess;
let token: string;
/** The API's and operator's settings: the database and the root key (a change written behind the change log uses both). */
let environment: Record<string, string>;
let projectId: string;
const slug = `edges-${Date.now().toString(36)}`;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const call = (method: string, path: string, body?: unknown) => callCoffer(api, method, path, token, body);
async function createSecret(key: string, value: string, secretPath = '/', workspaceId = projectId) {
  const response = await call('POST', `/api/v3/secrets/raw/${encodeURIComponent(key)}`, { workspaceId, environment: 'dev', secretPath, secretValue: value });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}
async function deleteSecret(key: string, secretPath = '/') {
  expect((await call('DELETE', `/api/v3/secrets/raw/${encodeURIComponent(key)}`, { workspaceId: projectId, environment: 'dev', secretPath })).status).toBe(200);
}
/** Several at once, by the batch endpoint (names such as '.' cannot be a URL path segment). */
async function createSecrets(secrets: Record<string, string>, secretPath = '/') {
  const response = await call('POST', '/api/v3/secrets/batch/raw', {
    workspaceId: projectId,
    environment: 'dev',
    secretPath,
    secrets: Object.entries(secrets).map(([secretKey, secretValue]) => ({ secretKey, secretValue })),
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}
async function createFolder(name: string, workspaceId = projectId) {
  const response = await call('POST', '/api/v1/folders', { workspaceId, environment: 'dev', name });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

function integration(name: string, target: Record<string, unknown>, spec: Record<string, unknown> = {}) {
  return { kind: 'Integration', metadata: { name }, spec: { projectRef: { name: 'edges' }, environment: 'dev', target, ...spec } };
}

async function patchSpec(plural: string, ns: string, name: string, spec: Record<string, unknown>, metadata?: Record<string, unknown>) {
  await cluster.custom.patchNamespacedCustomObject(
    { group: 'coffer.dev', version: 'v1alpha1', namespace: ns, plural, name, body: { spec, ...(metadata ? { metadata } : {}) } },
    mergePatch,
  );
}

const waitForData = (ns: string, name: string, expected: Record<string, string>, what: string, timeoutMs?: number) =>
  cluster.waitForData(ns, name, expected, what, timeoutMs);

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** Waits until the resource's condition has this status and reason (at its current generation); returns the resource. */
function waitForCondition(plural: string, ns: string, name: string, type: string, status: 'True' | 'False', reason: string, timeoutMs = 30_000) {
  return waitFor(
    `${plural} ${ns}/${name}: ${type}=${status} ${reason}`,
    async () => {
      const resource = await cluster.get(plural, ns, name);
      const found = (resource.status?.conditions ?? []).find((condition: Condition) => condition.type === type);
      if (found?.status === status && found.reason === reason && resource.status.observedGeneration === resource.metadata.generation) return resource;
      throw new Error(`conditions: ${JSON.stringify(resource.status?.conditions ?? [])}`);
    },
    { timeoutMs },
  );
}

const condition = (resource: { status: { conditions: Condition[] } }, type: string) => resource.status.conditions.find((entry) => entry.type === type)!;

async function events(ns: string, object: string, reason?: string) {
  const list = await cluster.core.listNamespacedEvent({ namespace: ns });
  return list.items.filter((event) => event.involvedObject.name === object && (reason === undefined || event.reason === reason));
}

const metric = (name: string, labels: Record<string, string> = {}) => operatorMetric(operator, name, labels);

/** A new value sealed as Coffer seals it and written straight into the row: no version, no change-feed row, no revision. */
async function writeBehindTheChangeLog(key: string, value: string) {
  const client = new pg.Client({ connectionString: environment.DATABASE_URL });
  await client.connect();
  try {
    const [secret] = (await client.query<{ id: string }>('SELECT id FROM secrets WHERE key = $1', [key])).rows;
    const [project] = (await client.query<{ encrypted_data_key: Buffer }>('SELECT encrypted_data_key FROM projects WHERE id = $1', [projectId])).rows;
    const keyring = new Keyring(Buffer.from(environment.COFFER_ENCRYPTION_KEY!, 'base64'));
    const cipher = new SecretCipher(keyring, { id: projectId, encryptedDataKey: project!.encrypted_data_key } as Project);
    await client.query('UPDATE secrets SET encrypted_value = $1 WHERE id = $2', [cipher.seal(secret!.id, 'value', value), secret!.id]);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  cluster = clusterClients();
  namespace = await createTestNamespace('edges');
  other = await createTestNamespace('edges-tenant');
  environment = await cofferEnvironment(namespace.name);
  ({ api, token } = await startApi(environment));
  operator = await startOperatorProcess(environment, { COFFER_LOG_LEVEL: 'debug' });
  await cluster.apply('secretsprojects', namespace.name, {
    kind: 'SecretsProject',
    metadata: { name: 'edges' },
    spec: { name: 'Edges', slug, environments: [{ name: 'QA', slug: 'qa' }], allowedNamespaces: [other.name] },
  });
  projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'edges')).status.projectId;
}, 180_000);

afterEach((context) => {
  // On failure, what the operator said at info and above (its lines carry no secret values).
  if (context.task.result?.state === 'fail') {
    const lines = operator.output
      .join('')
      .split('\n')
      .filter((line) => !line.includes('"level":20'));
    process.stderr.write(`--- operator log tail ---\n${lines.slice(-40).join('\n')}\n`);
  }
});

afterAll(async () => {
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  await namespace?.cleanup();
  await other?.cleanup();
});

describe('every refusal visible; the last good Secret kept', () => {
  test('keys that cannot be Secret keys are left out and named (not their values) in the status and one Warning Event; the rest sync', async () => {
    await createFolder('keys');
    await createSecret('GOOD', 'good-value', '/keys');
    const invalid = ['.', '..', '..hidden', 'k'.repeat(300)];
    await createSecrets(Object.fromEntries(invalid.map((key, index) => [key, `invalid-value-${index}`])), '/keys');
    await cluster.apply('integrations', namespace.name, integration('keys', { name: 'keys-secret' }, { secretPath: '/keys' }));
    await waitForData(namespace.name, 'keys-secret', { GOOD: 'good-value' }, 'the valid key to sync');
    const resource = await waitForCondition('integrations', namespace.name, 'keys', 'Synced', 'True', 'KeysSkipped');
    expect(resource.status.skippedKeys).toEqual([...invalid].sort());
    const ready = condition(resource, 'Ready');
    expect(ready.status).toBe('True');
    for (const key of ["'.'", "'..'", "'..hidden'", `'${'k'.repeat(64)}…'`]) expect(ready.message).toContain(key);
    const warnings = await waitFor('a KeysSkipped Warning', async () => {
      const found = await events(namespace.name, 'keys', 'KeysSkipped');
      return found.length > 0 ? found : false;
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.type).toBe('Warning');
    expect(JSON.stringify(resource.status) + warnings[0]!.message).not.toContain('invalid-value');

    // another sync with the same keys left out: no second Event
    await createSecret('GOOD_TOO', 'also-good', '/keys');
    await waitForData(namespace.name, 'keys-secret', { GOOD: 'good-value', GOOD_TOO: 'also-good' }, 'the next change');
    // the positive event: the sync after it leaves out one key more and sends its Event; Warnings are sent in the
    // order recorded, so a wrong second Event of the sync before would be there by then
    await createSecrets({ '..later': 'invalid-value-later' }, '/keys');
    const sent = await waitFor('the KeysSkipped Warning naming the key left out later', async () => {
      const found = await events(namespace.name, 'keys', 'KeysSkipped');
      return found.some((event) => event.message!.includes("'..later'")) && found;
    });
    expect(sent).toHaveLength(2);
  });

  test('a source over 1 MiB: Synced=False SecretTooLarge and a Warning, the last good Secret kept, no write tried again until the source changes', async () => {
    await createFolder('big');
    await createSecret('SMALL', 'small', '/big');
    await cluster.apply('integrations', namespace.name, integration('big', { name: 'big-secret' }, { secretPath: '/big' }));
    await waitForData(namespace.name, 'big-secret', { SMALL: 'small' }, 'the first sync');
    // three of 300 KiB fit; the fourth takes the values past 1 MiB
    const chunk = 'x'.repeat(300 * 1024);
    for (let index = 0; index < 3; index++) await createSecret(`BIG_${index}`, chunk, '/big');
    const lastGood = ['BIG_0', 'BIG_1', 'BIG_2', 'SMALL'];
    const keys = async () => Object.keys((await cluster.secretData(namespace.name, 'big-secret')) ?? {}).sort();
    await waitFor('the last good sync', async () => isDeepStrictEqual(await keys(), lastGood));
    await createSecret('BIG_3', chunk, '/big');
    const failed = await waitForCondition('integrations', namespace.name, 'big', 'Synced', 'False', 'SecretTooLarge');
    expect(condition(failed, 'Ready')).toMatchObject({ status: 'False', reason: 'SecretTooLarge' });
    expect(condition(failed, 'Synced').message).toMatch(/at most 1048576 \(1 MiB\)/);
    await waitFor('a SecretTooLarge Warning', async () => (await events(namespace.name, 'big', 'SecretTooLarge')).some((event) => event.type === 'Warning'));
    expect(await keys()).toEqual(lastGood);
    // refused before any request: a later look at the same source (a change router's re-read) may count another refusal, but writes nothing
    const secretWrites = async () =>
      (await metric('coffer_operator_kube_requests_total', { verb: 'apply', resource: 'secrets' })) +
      (await metric('coffer_operator_kube_requests_total', { verb: 'patch', resource: 'secrets' }));
    const writesBefore = await secretWrites();
    const refusals = () => metric('coffer_operator_reconcile_errors_total', { kind: 'Integration', reason: 'SecretTooLarge' });
    const refusedBefore = await refusals();
    expect(refusedBefore).toBeGreaterThanOrEqual(1);
    // the positive event: a forced look at the same source is refused again (counted), and writes nothing
    await patchSpec('integrations', namespace.name, 'big', {}, { annotations: { 'coffer.dev/force-sync': 'too-large' } });
    await waitFor('the forced sync to be refused too', async () => (await refusals()) > refusedBefore);
    expect(await secretWrites()).toBe(writesBefore);
    expect(await events(namespace.name, 'big', 'SecretTooLarge')).toHaveLength(1);

    await deleteSecret('BIG_3', '/big');
    await waitForCondition('integrations', namespace.name, 'big', 'Synced', 'True', 'Synced');
    for (let index = 0; index < 3; index++) await deleteSecret(`BIG_${index}`, '/big');
  });

  test('labels or a type the apiserver refuses: Synced=False SecretInvalid with its message and a Warning; the last good data kept; a fixed spec syncs again', async () => {
    await cluster.apply('integrations', namespace.name, integration('labelled', { name: 'labelled-secret' }, { secretPath: '/keys' }));
    const synced = { GOOD: 'good-value', GOOD_TOO: 'also-good' };
    await waitForData(namespace.name, 'labelled-secret', synced, 'the first sync');
    await patchSpec('integrations', namespace.name, 'labelled', { target: { name: 'labelled-secret', labels: { 'not a label!': 'x' } } });
    const refused = await waitForCondition('integrations', namespace.name, 'labelled', 'Synced', 'False', 'SecretInvalid');
    expect(condition(refused, 'Synced').message).toMatch(/the apiserver refused Secret 'labelled-secret' \(422 Invalid\): .*not a label!/);
    await waitFor('a SecretInvalid Warning', async () => (await events(namespace.name, 'labelled', 'SecretInvalid')).length === 1);
    expect(await cluster.secretData(namespace.name, 'labelled-secret')).toEqual(synced);
    await patchSpec('integrations', namespace.name, 'labelled', { target: { name: 'labelled-secret', labels: { 'not a label!': null, team: 'edges' } } });
    await waitForCondition('integrations', namespace.name, 'labelled', 'Synced', 'True', 'KeysSkipped');
    expect((await cluster.secret(namespace.name, 'labelled-secret'))!.metadata!.labels).toMatchObject({ team: 'edges' });

    // a TLS Secret needs tls.crt and tls.key: refused before the apiserver is asked, and nothing is created
    await cluster.apply('integrations', namespace.name, integration('tls', { name: 'tls-secret', type: 'kubernetes.io/tls' }, { secretPath: '/keys' }));
    const tls = await waitForCondition('integrations', namespace.name, 'tls', 'Synced', 'False', 'SecretTypeMismatch');
    expect(condition(tls, 'Synced').message).toContain("'tls.crt' and 'tls.key'");
    expect(await cluster.secret(namespace.name, 'tls-secret')).toBeUndefined();
  });
});

describe('ownership is exact', () => {
  test('Merge onto a Secret another Integration owns: SecretConflict on the newcomer; the owner keeps its keys, annotation and ownerReference', async () => {
    await cluster.apply('integrations', namespace.name, integration('owner', { name: 'owned' }, { secretPath: '/keys' }));
    const ownersData = await waitForData(namespace.name, 'owned', { GOOD: 'good-value', GOOD_TOO: 'also-good' }, 'the owner to sync');
    const before = (await cluster.secret(namespace.name, 'owned'))!;
    await createFolder('takeover');
    await createSecret('TAKEN', 'not-yours', '/takeover');
    await cluster.apply('integrations', namespace.name, integration('taker', { name: 'owned', creationPolicy: 'Merge' }, { secretPath: '/takeover' }));
    const refused = await waitForCondition('integrations', namespace.name, 'taker', 'Ready', 'False', 'SecretConflict');
    expect(condition(refused, 'Ready').message).toContain(`Integration ${namespace.name}/owner`);
    // the refusal (its status, then its Warning) is written after anything that reconcile did: a wrong write would be in place
    await waitFor('a SecretConflict Warning', async () => (await events(namespace.name, 'taker', 'SecretConflict')).length > 0);
    const after = (await cluster.secret(namespace.name, 'owned'))!;
    expect(await cluster.secretData(namespace.name, 'owned')).toEqual(ownersData);
    expect(after.metadata!.annotations).toEqual(before.metadata!.annotations);
    expect(after.metadata!.ownerReferences).toEqual(before.metadata!.ownerReferences);
    expect(after.metadata!.managedFields!.map((field) => field.manager)).not.toContain('coffer/taker');
    expect(condition(await cluster.get('integrations', namespace.name, 'owner'), 'Ready').status).toBe('True');
    await cluster.remove('integrations', namespace.name, 'taker');
  });

  test('two Merge Integrations keep exactly their own keys across updates and deletions; a key the other holds is a KeyConflict, not a takeover', async () => {
    await cluster.core.createNamespacedSecret({ namespace: namespace.name, body: { metadata: { name: 'shared' }, stringData: { USER_KEY: 'mine' } } });
    await createFolder('merge-a');
    await createFolder('merge-b');
    await createSecret('A_1', 'a1', '/merge-a');
    await createSecret('B_1', 'b1', '/merge-b');
    await cluster.apply('integrations', namespace.name, integration('ma', { name: 'shared', creationPolicy: 'Merge' }, { secretPath: '/merge-a' }));
    await cluster.apply('integrations', namespace.name, integration('mb', { name: 'shared', creationPolicy: 'Merge' }, { secretPath: '/merge-b' }));
    await waitForData(namespace.name, 'shared', { USER_KEY: 'mine', A_1: 'a1', B_1: 'b1' }, 'both to merge');

    await createSecret('A_2', 'a2', '/merge-a');
    await deleteSecret('A_1', '/merge-a');
    await waitForData(namespace.name, 'shared', { USER_KEY: 'mine', A_2: 'a2', B_1: 'b1' }, 'ma’s update');

    // mb's source now also has A_2, with another value: mb does not take it over
    await createSecret('A_2', 'b-wants-this', '/merge-b');
    const conflict = await waitForCondition('integrations', namespace.name, 'mb', 'Synced', 'False', 'KeyConflict');
    expect(condition(conflict, 'Synced').message).toContain(`.data.A_2 (set by Integration ${namespace.name}/ma)`);
    expect(await cluster.secretData(namespace.name, 'shared')).toEqual({ USER_KEY: 'mine', A_2: 'a2', B_1: 'b1' });
    expect(condition(await cluster.get('integrations', namespace.name, 'ma'), 'Synced').status).toBe('True');
    await deleteSecret('A_2', '/merge-b');
    await waitForCondition('integrations', namespace.name, 'mb', 'Synced', 'True', 'Synced');

    await cluster.remove('integrations', namespace.name, 'mb');
    await waitForData(namespace.name, 'shared', { USER_KEY: 'mine', A_2: 'a2' }, 'mb’s keys to go, and only them');
    await cluster.remove('integrations', namespace.name, 'ma');
    await waitForData(namespace.name, 'shared', { USER_KEY: 'mine' }, 'ma’s keys to go');
    const left = (await cluster.secret(namespace.name, 'shared'))!;
    expect(left.metadata!.managedFields!.map((field) => field.manager).filter((manager) => manager?.startsWith('coffer'))).toEqual([]);
    expect(left.metadata!.annotations?.['coffer.dev/installation']).toBeUndefined();
  });
});

describe('drift means the Secret equals its source', () => {
  test('a key added to an Owner Secret by hand is removed, and the DriftRepaired Event says so', async () => {
    const expected = await cluster.secretData(namespace.name, 'owned');
    await cluster.core.patchNamespacedSecret(
      { namespace: namespace.name, name: 'owned', body: { data: { FOREIGN: Buffer.from('planted').toString('base64') } } },
      mergePatch,
    );
    await waitForData(namespace.name, 'owned', expected!, 'the foreign key to be removed');
    const repaired = await waitFor('a DriftRepaired Event naming the added key', async () =>
      (await events(namespace.name, 'owner', 'DriftRepaired')).find((event) => event.message!.includes('1 key added')),
    );
    expect(repaired.message).not.toContain('planted');
  });

  test('the managed-by label removed: the Secret is still recognised (annotation, ownerReference), the label put back, later changes synced', async () => {
    await cluster.core.patchNamespacedSecret(
      { namespace: namespace.name, name: 'owned', body: { metadata: { labels: { 'app.kubernetes.io/managed-by': null } } } },
      mergePatch,
    );
    await waitFor(
      'the label to be put back',
      async () => (await cluster.secret(namespace.name, 'owned'))!.metadata!.labels?.['app.kubernetes.io/managed-by'] === 'coffer',
    );
    await createSecret('AFTER_LABEL', 'synced', '/keys');
    await waitForData(namespace.name, 'owned', { GOOD: 'good-value', GOOD_TOO: 'also-good', AFTER_LABEL: 'synced' }, 'a later change');
    expect(condition(await cluster.get('integrations', namespace.name, 'owner'), 'Ready')).toMatchObject({ status: 'True', reason: 'Synced' });
  });
});

describe('access revoked means the copy goes; a vanished source keeps the last good data', () => {
  test('a namespace taken out of allowedNamespaces: its Owner Secret is deleted and a Merge Integration’s keys removed, with a Warning Event', async () => {
    await cluster.apply('integrations', other.name, {
      kind: 'Integration',
      metadata: { name: 'copy' },
      spec: { projectSlug: slug, environment: 'dev', secretPath: '/keys', target: { name: 'copy-secret' } },
    });
    await cluster.core.createNamespacedSecret({ namespace: other.name, body: { metadata: { name: 'theirs' }, stringData: { THEIR_KEY: 'kept' } } });
    await cluster.apply('integrations', other.name, {
      kind: 'Integration',
      metadata: { name: 'merged-copy' },
      spec: { projectSlug: slug, environment: 'dev', secretPath: '/merge-a', target: { name: 'theirs', creationPolicy: 'Merge' } },
    });
    await waitForData(other.name, 'copy-secret', { GOOD: 'good-value', GOOD_TOO: 'also-good', AFTER_LABEL: 'synced' }, 'the copy');
    await waitForData(other.name, 'theirs', { THEIR_KEY: 'kept', A_2: 'a2' }, 'the merged copy');

    await patchSpec('secretsprojects', namespace.name, 'edges', { allowedNamespaces: [] });
    await waitFor('the copy to be deleted', async () => (await cluster.secret(other.name, 'copy-secret')) === undefined);
    await waitForData(other.name, 'theirs', { THEIR_KEY: 'kept' }, 'the merged keys to be removed');
    const revoked = await waitForCondition('integrations', other.name, 'copy', 'Ready', 'False', 'Forbidden');
    expect(condition(revoked, 'Ready').message).toContain("Coffer deletes Secret 'copy-secret'");
    const mergeRevoked = await waitForCondition('integrations', other.name, 'merged-copy', 'Ready', 'False', 'Forbidden');
    expect(condition(mergeRevoked, 'Ready').message).toContain("Coffer removes this Integration's keys from Secret 'theirs'");
    expect(revoked.status.dataHash).toBeUndefined();
    await waitFor('a Forbidden Warning Event', async () =>
      (await events(other.name, 'copy', 'Forbidden')).some((event) => event.message!.includes("Coffer deletes Secret 'copy-secret'")),
    );
  });

  test('a project deleted through the API is not recreated: SecretsProject Ready=False ProjectDeleted; Integrations keep their data (Retain) or delete it (Delete); Recreate makes a new one', async () => {
    const doomedSlug = `doomed-${Date.now().toString(36)}`;
    await cluster.apply('secretsprojects', namespace.name, { kind: 'SecretsProject', metadata: { name: 'doomed' }, spec: { name: 'Doomed', slug: doomedSlug } });
    const doomedId = (await cluster.waitReady('secretsprojects', namespace.name, 'doomed')).status.projectId;
    await createSecret('KEEP', 'last-good', '/', doomedId);
    const spec = { projectRef: { name: 'doomed' }, environment: 'dev' };
    await cluster.apply('integrations', namespace.name, { kind: 'Integration', metadata: { name: 'doomed-keep' }, spec: { ...spec, target: { name: 'doomed-keep' } } });
    await cluster.apply('integrations', namespace.name, {
      kind: 'Integration',
      metadata: { name: 'doomed-drop' },
      spec: { ...spec, target: { name: 'doomed-drop', deletionPolicy: 'Delete' } },
    });
    await waitForData(namespace.name, 'doomed-keep', { KEEP: 'last-good' }, 'the first sync');
    await waitForData(namespace.name, 'doomed-drop', { KEEP: 'last-good' }, 'the first sync');

    expect((await call('DELETE', `/api/v1/workspace/${doomedId}`)).status).toBe(200);
    const project = await waitForCondition('secretsprojects', namespace.name, 'doomed', 'Ready', 'False', 'ProjectDeleted');
    expect(condition(project, 'Ready').message).toContain('not recreated');
    await waitForCondition('integrations', namespace.name, 'doomed-keep', 'Synced', 'False', 'ProjectDeleted');
    await waitFor('the Delete Integration’s Secret to go', async () => (await cluster.secret(namespace.name, 'doomed-drop')) === undefined);
    // the Retain Integration's ProjectDeleted status is written after what its reconcile did: a wrong deletion would be done
    expect(await cluster.secretData(namespace.name, 'doomed-keep')).toEqual({ KEEP: 'last-good' });
    expect((await call('GET', `/api/v1/workspace/slug/${doomedSlug}`)).status).toBe(404);
    expect((await cluster.get('secretsprojects', namespace.name, 'doomed')).status.projectId).toBe(doomedId);

    await patchSpec('secretsprojects', namespace.name, 'doomed', { onProjectDeleted: 'Recreate' });
    const recreated = await cluster.waitReady('secretsprojects', namespace.name, 'doomed');
    expect(recreated.status.projectId).not.toBe(doomedId);
    expect((await call('GET', `/api/v1/workspace/slug/${doomedSlug}`)).status).toBe(200);
    await waitForData(namespace.name, 'doomed-keep', {}, 'the Integration to sync the new, empty project');
    for (const name of ['doomed-keep', 'doomed-drop']) await cluster.remove('integrations', namespace.name, name);
  });

  test('a folder deleted under an Integration: Synced=False FolderNotFound, the last data kept; with target.deletionPolicy Delete the Secret goes', async () => {
    await createFolder('gone');
    await createSecret('LAST', 'good', '/gone');
    await cluster.apply('integrations', namespace.name, integration('gone-keep', { name: 'gone-keep' }, { secretPath: '/gone' }));
    await cluster.apply('integrations', namespace.name, integration('gone-drop', { name: 'gone-drop', deletionPolicy: 'Delete' }, { secretPath: '/gone' }));
    await waitForData(namespace.name, 'gone-keep', { LAST: 'good' }, 'the first sync');
    await waitForData(namespace.name, 'gone-drop', { LAST: 'good' }, 'the first sync');
    expect((await call('DELETE', '/api/v1/folders/gone', { workspaceId: projectId, environment: 'dev', path: '/' })).status).toBe(200);
    const missing = await waitForCondition('integrations', namespace.name, 'gone-keep', 'Synced', 'False', 'FolderNotFound');
    expect(condition(missing, 'Synced').message).toContain('keeps its last data');
    await waitFor('the Delete Integration’s Secret to go', async () => (await cluster.secret(namespace.name, 'gone-drop')) === undefined);
    expect(await cluster.secretData(namespace.name, 'gone-keep')).toEqual({ LAST: 'good' });

    // the folder made again: the Integration syncs at once
    await createFolder('gone');
    await createSecret('BACK', 'again', '/gone');
    await waitForData(namespace.name, 'gone-keep', { BACK: 'again' }, 'the recreated folder');
  });
});

describe('force-sync, metrics and debug lines', () => {
  test('coffer.dev/force-sync reconciles one resource at once: a SecretsProject puts back an environment deleted through the API', async () => {
    const environments = async () => (await call('GET', `/api/v1/workspace/${projectId}`)).body.workspace.environments as { slug: string; id: string }[];
    const qa = (await environments()).find((environment) => environment.slug === 'qa')!;
    expect((await call('DELETE', `/api/v1/workspace/${projectId}/environments/${qa.id}`)).status).toBe(200);
    // the positive event: a later change of the project reaches a Secret, so the operator has dealt with the deletion before it
    await createSecret('AFTER_QA_DELETED', 'witness', '/keys');
    await waitFor('the later change to reach the Secret', async () => (await cluster.secretData(namespace.name, 'owned'))?.AFTER_QA_DELETED === 'witness');
    expect((await environments()).map((environment) => environment.slug)).not.toContain('qa');
    await patchSpec('secretsprojects', namespace.name, 'edges', {}, { annotations: { 'coffer.dev/force-sync': '1' } });
    await waitFor('qa to be back', async () => (await environments()).some((environment) => environment.slug === 'qa'));

    await cluster.custom.patchNamespacedCustomObject(
      {
        group: 'coffer.dev',
        version: 'v1alpha1',
        namespace: namespace.name,
        plural: 'integrations',
        name: 'owner',
        body: { metadata: { annotations: { 'coffer.dev/force-sync': 'now' } } },
      },
      mergePatch,
    );
    await waitFor('the Integration to record the force-sync', async () => (await cluster.get('integrations', namespace.name, 'owner')).status.forceSync === 'now');
  });

  test('coffer.dev/force-sync reads afresh: it repairs a Secret whose source was changed outside the change log', async () => {
    await createFolder('bypass');
    await createSecret('BYPASSED', 'logged', '/bypass');
    await cluster.apply('integrations', namespace.name, integration('bypass', { name: 'bypass-secret' }, { secretPath: '/bypass' }));
    await waitForData(namespace.name, 'bypass-secret', { BYPASSED: 'logged' }, 'the first sync');
    await writeBehindTheChangeLog('BYPASSED', 'unlogged');
    await patchSpec('integrations', namespace.name, 'bypass', {}, { annotations: { 'coffer.dev/force-sync': 'repair' } });
    await waitForData(namespace.name, 'bypass-secret', { BYPASSED: 'unlogged' }, 'the forced sync to read the value written behind the log');
  });

  test('metrics: reconcile and change-to-Secret histograms, errors by reason, a condition gauge per resource, queue depth and age, leadership and readiness', async () => {
    const text = await (await fetch(`${operator.probes}/metrics`)).text();
    for (const name of [
      'coffer_operator_reconcile_duration_seconds_bucket',
      'coffer_operator_change_to_secret_seconds_bucket',
      'coffer_operator_reconcile_errors_total',
      'coffer_operator_resource_condition',
      'coffer_operator_queue_length',
      'coffer_operator_queue_oldest_seconds',
      'coffer_operator_leader',
      'coffer_operator_ready',
    ]) {
      expect(text).toContain(name);
    }
    expect(await metric('coffer_operator_change_to_secret_seconds_count')).toBeGreaterThan(0);
    expect(await metric('coffer_operator_reconcile_errors_total', { kind: 'Integration', reason: 'SecretTooLarge' })).toBeGreaterThan(0);
    expect(
      await metric('coffer_operator_resource_condition', {
        kind: 'Integration',
        resource_namespace: namespace.name,
        resource_name: 'tls',
        condition: 'Synced',
        status: 'False',
      }),
    ).toBe(1);
    expect(
      await metric('coffer_operator_resource_condition', {
        kind: 'Integration',
        resource_namespace: namespace.name,
        resource_name: 'owner',
        condition: 'Ready',
        status: 'True',
      }),
    ).toBe(1);
    expect(await metric('coffer_operator_leader')).toBe(1);
    expect(await metric('coffer_operator_ready')).toBe(1);
    expect(await metric('coffer_operator_reconciles_total', { outcome: 'error' })).toBeGreaterThan(0);

    // every metric the shipped alerts and dashboard use exists
    const shipped = ['operator-alerts.yaml', 'operator-dashboard.json']
      .map((file) => readFileSync(join(import.meta.dirname, '../../deploy/monitoring', file), 'utf8'))
      .join('\n');
    const referenced = new Set([...shipped.matchAll(/\bcoffer_[a-z_]+/g)].map(([name]) => name.replace(/_(bucket|count|sum)$/, '')));
    expect(referenced.size).toBeGreaterThan(5);
    for (const name of referenced) expect(text, name).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
  });

  test('at debug level the log follows a change from its commit to the Secret; no line carries a value', async () => {
    await createSecret('TRACED', 'traced-value', '/keys');
    await waitFor('the change to reach the Secret', async () => (await cluster.secretData(namespace.name, 'owned'))?.TRACED === 'traced-value');
    const revision = (await cluster.get('integrations', namespace.name, 'owner')).status.syncedRevision as number;
    const log = operator.output.join('');
    expect(log).toMatch(new RegExp(`change ${revision} \\(secret\\) affects \\d+ Integrations?`));
    expect(log).toContain(`reconciling Integration ${namespace.name}/owner`);
    expect(log).toContain(`Integration ${namespace.name}/owner: source read at revision ${revision}`);
    expect(log).toContain(`Secret ${namespace.name}/owned written at revision ${revision}`);
    expect(log).not.toContain('traced-value');
  });
});
