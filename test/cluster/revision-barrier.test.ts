import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestNamespace, type TestNamespace } from '../k8s/helpers.ts';
import { COFFER_BIN, type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, putSecret, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * The revision barrier end to end: a write's Coffer-Revision, waited for with
 * GET /api/v1/changes/wait and `coffer wait`, answers only once the Secret in
 * the real cluster holds the new value; with the operator down it times out
 * cleanly, naming the pending Integration.
 */
let cluster: Cluster;
let namespace: TestNamespace;
let environment: Record<string, string>;
let api: CofferProcess;
let operator: CofferProcess;
let token: string;
let projectId: string;
const slug = `barrier-${Date.now().toString(36)}`;

async function writeSecret(key: string, value: string): Promise<number> {
  const revision = await putSecret(api, token, { projectId, environment: 'dev', secretPath: '/barrier' }, key, value);
  expect(revision).toBeGreaterThan(0);
  return revision;
}

const wait = (revision: number, timeout: string) => callCoffer(api, 'GET', `/api/v1/changes/wait?revision=${revision}&timeout=${timeout}`, token);

function coffer(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [COFFER_BIN, ...args], { env: { ...process.env, COFFER_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  cluster = clusterClients();
  namespace = await createTestNamespace('barrier');
  environment = await cofferEnvironment(namespace.name);
  ({ api, token } = await startApi(environment));
  operator = await startOperatorProcess(environment);
  await cluster.apply('secretsprojects', namespace.name, { kind: 'SecretsProject', metadata: { name: 'shop' }, spec: { name: 'Shop', slug } });
  projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'shop')).status.projectId;
  expect((await callCoffer(api, 'POST', '/api/v1/folders', token, { workspaceId: projectId, environment: 'dev', name: 'barrier' })).status).toBe(200);
  await cluster.apply('integrations', namespace.name, {
    kind: 'Integration',
    metadata: { name: 'app' },
    spec: { projectRef: { name: 'shop' }, environment: 'dev', secretPath: '/barrier', target: { name: 'app-secrets' } },
  });
  await cluster.waitReady('integrations', namespace.name, 'app', 'Synced');
}, 180_000);

afterAll(async () => {
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  await namespace?.cleanup();
});

describe('waiting for a write', () => {
  test('the wait answers only once the Secret holds the new value, every time', async () => {
    for (let round = 0; round < 10; round++) {
      const value = `value-${round}`;
      const revision = await writeSecret('DB_PASSWORD', value);
      const answer = await wait(revision, '30s');
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ revision, reached: true });
      expect(answer.body.integrations).toEqual([expect.objectContaining({ cluster: 'local', namespace: namespace.name, name: 'app', state: 'reached' })]);
      // read right after the answer, no waiting
      expect((await cluster.secretData(namespace.name, 'app-secrets'))?.DB_PASSWORD).toBe(value);
    }
  });

  test('coffer wait exits 0 once reached', async () => {
    const revision = await writeSecret('API_KEY', 'cli');
    const run = await coffer(['wait', '--server', api.api, '--revision', String(revision), '--timeout', '30s']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`revision ${revision} reached: 1 Integration reflect it (local ${namespace.name}/app)`);
    expect((await cluster.secretData(namespace.name, 'app-secrets'))?.API_KEY).toBe('cli');
  });

  test('with the operator down, the wait times out cleanly naming the pending Integration; once it is back, the write is reached', async () => {
    await stopCoffer(operator);
    const revision = await writeSecret('DB_PASSWORD', 'while-down');
    const answer = await wait(revision, '2s');
    expect(answer.status).toBe(200);
    expect(answer.body.reached).toBe(false);
    expect(answer.body.integrations).toEqual([expect.objectContaining({ name: 'app', state: 'pending' })]);
    const run = await coffer(['wait', '--server', api.api, '--revision', String(revision), '--timeout', '1s']);
    expect(run.code).toBe(6);
    expect(run.stdout).toContain(`local ${namespace.name}/app → app-secrets`);
    expect(run.stderr).toContain('has not reached every Integration');
    expect(run.stdout + run.stderr).not.toContain('while-down');

    operator = await startOperatorProcess(environment);
    const later = await wait(revision, '60s');
    expect(later.body.reached).toBe(true);
    expect((await cluster.secretData(namespace.name, 'app-secrets'))?.DB_PASSWORD).toBe('while-down');
  });
});
