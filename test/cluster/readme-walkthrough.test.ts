import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { apiStatus, createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type Manifest, RawKube } from '../k8s/manifests.ts';
import { type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, startApi, startOperatorProcess } from '../support/operator-fixture.ts';
import { bash, markedBlocks, matchesShown, outputAfter } from '../support/readme.ts';
import { REPO_ROOT } from '../k8s/controlplane.ts';

/**
 * README "A first Integration": its YAML, as a reader saves and applies it, on
 * the real control plane with the operator running — server-side apply with
 * strict field validation, so an unknown or misspelt field fails here — then
 * the secret the README stores through the API must reach the Secret it names.
 * Then the SecretImport example, and the README's revision-barrier and grant
 * blocks as pasted (bash, with the port-forward's localhost:8080 replaced by the
 * server's address): the barrier answers once the Integration reflects the write.
 * (The walk-through's kubectl lines are not run: the test control plane has no
 * kubectl; they read what this test reads through the API.)
 */
const blocks = markedBlocks();
const walkthrough = blocks.filter((block) => block.marker === 'walkthrough:apply');
const manifests = walkthrough.flatMap((block) => parseAllDocuments(block.code).map((document) => document.toJSON() as Manifest));
const secretImports = blocks
  .filter((block) => block.marker === 'walkthrough:import')
  .flatMap((block) => parseAllDocuments(block.code).map((document) => document.toJSON() as Manifest));
const readmeBlock = (pattern: RegExp) => {
  const found = blocks.filter((block) => block.marker === 'readme:run' && pattern.test(block.code));
  if (found.length !== 1) throw new Error(`expected one readme:run block matching ${pattern}, found ${found.length}`);
  return found[0]!;
};

let cluster: Cluster;
let raw: RawKube;
let lease: TestNamespace;
let api: CofferProcess;
let operator: CofferProcess;
let token: string;

beforeAll(async () => {
  cluster = clusterClients();
  raw = new RawKube(cluster.kc);
  lease = await createTestNamespace('walkthrough');
  const environment = await cofferEnvironment(lease.name);
  ({ api, token } = await startApi(environment));
  operator = await startOperatorProcess(environment, { COFFER_LOG_LEVEL: 'debug' });
}, 180_000);

afterEach((context) => {
  if (context.task.result?.state === 'fail') process.stderr.write(`--- operator log tail ---\n${operator?.output.join('').split('\n').slice(-40).join('\n')}\n`);
});

afterAll(async () => {
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  for (const manifest of [...manifests, ...secretImports].reverse()) await raw?.delete(manifest).catch(() => {});
  await lease?.cleanup();
});

test('the walk-through creates what it needs, in order: a namespace, then the resources in it', () => {
  expect(walkthrough).toHaveLength(1);
  expect(manifests.map((manifest) => `${manifest.kind}/${manifest.metadata.name}`)).toEqual(['Namespace/shop', 'SecretsProject/web-shop', 'Integration/app']);
  const namespaced = manifests.filter((manifest) => manifest.kind !== 'Namespace');
  expect(new Set(namespaced.map((manifest) => manifest.metadata.namespace))).toEqual(new Set(['shop']));
});

test('applied as written, the project becomes Ready and the Secret holds what the API stores', async () => {
  for (const manifest of manifests) await raw.apply(manifest, { fieldManager: 'kubectl' });
  await waitFor('namespace shop to be active', async () => (await cluster.core.readNamespace({ name: 'shop' })).status?.phase === 'Active');

  const project = await cluster.waitReady('secretsprojects', 'shop', 'web-shop');
  expect(project.status).toMatchObject({ slug: 'web-shop', projectId: expect.any(String) });
  await cluster.waitReady('integrations', 'shop', 'app', 'Synced');

  const stored = await callCoffer(api, 'POST', '/api/v3/secrets/raw/DATABASE_PASSWORD', token, {
    workspaceId: project.status.projectId,
    environment: 'dev',
    secretValue: 's3cr3t',
  });
  expect(stored.status).toBe(200);
  await waitFor('app-secrets to hold DATABASE_PASSWORD', async () => (await cluster.secretData('shop', 'app-secrets'))?.DATABASE_PASSWORD === 's3cr3t', {
    timeoutMs: 30_000,
  });
  const integration = await cluster.waitReady('integrations', 'shop', 'app', 'Synced');
  expect(integration.status).toMatchObject({ secretCount: 1, syncedRevision: expect.any(Number) });
});

test('the operator logs what it did, once per change of state, without the value', async () => {
  const lines = operator.output
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: number; msg: string });
  const info = lines.filter((line) => line.level === 30).map((line) => line.msg);
  const once = (pattern: RegExp) =>
    expect(
      info.filter((message) => pattern.test(message)),
      String(pattern),
    ).toHaveLength(1);
  once(/^SecretsProject shop\/web-shop is Ready \(Reconciled\)/);
  // Ready once, however many syncs follow; before it, it may have been not Ready while its project was not,
  // but every line is a change: no reason repeats one after the other (retries are not logged)
  once(/^Integration shop\/app is Ready \(Synced\)/);
  const states = info.filter((message) => message.startsWith('Integration shop/app is ')).map((message) => /\(([A-Za-z]+)\)/.exec(message)?.[1]);
  expect(states.at(-1)).toBe('Synced');
  states.slice(1).forEach((reason, index) => expect(reason, `state ${index + 1} of ${JSON.stringify(states)}`).not.toBe(states[index]));
  // each write of the Secret once, at its revision: the empty first sync, then the stored secret
  const writes = info.filter((message) => message.startsWith('Secret shop/app-secrets written at revision '));
  expect(new Set(writes).size).toBe(writes.length);
  expect(writes.at(-1)).toMatch(/^Secret shop\/app-secrets written at revision \d+ \(1 keys\)$/);
  // at debug: the change, and the Integration it affected
  expect(lines.some((line) => line.level === 20 && /^change \d+ \(secret\) affects 1 Integration$/.test(line.msg))).toBe(true);
  expect(operator.output.join('')).not.toContain('s3cr3t');
});

test('the SecretImport example: dev imports staging, and the Integration carries the imported key', async () => {
  expect(secretImports.map((manifest) => `${manifest.kind}/${manifest.metadata.namespace}/${manifest.metadata.name}`)).toEqual(['SecretImport/shop/staging-into-dev']);
  for (const manifest of secretImports) await raw.apply(manifest, { fieldManager: 'kubectl' });
  const imported = await cluster.waitReady('secretimports', 'shop', 'staging-into-dev');
  expect(imported.status.secretImportId).toEqual(expect.any(String));
  const projectId = (await cluster.get('secretsprojects', 'shop', 'web-shop')).status.projectId;
  const stored = await callCoffer(api, 'POST', '/api/v3/secrets/raw/PAYMENT_API_KEY', token, {
    workspaceId: projectId,
    environment: 'staging',
    secretValue: 'pk_test_123',
  });
  expect(stored.status).toBe(200);
  await waitFor('app-secrets to hold the imported PAYMENT_API_KEY', async () => (await cluster.secretData('shop', 'app-secrets'))?.PAYMENT_API_KEY === 'pk_test_123', {
    timeoutMs: 30_000,
  });
  expect(await cluster.secretData('shop', 'app-secrets')).toEqual({ DATABASE_PASSWORD: 's3cr3t', PAYMENT_API_KEY: 'pk_test_123' });
});

test('the revision-barrier and grant blocks, as pasted: the wait answers once the Integration has the write; the grant is given and taken back', async () => {
  const barrier = readmeBlock(/coffer wait/);
  const grants = readmeBlock(/namespace-grants/);
  const projectId = (await cluster.get('secretsprojects', 'shop', 'web-shop')).status.projectId as string;
  const host = new URL(api.api).host;
  // the Quick start's `json` helper, which the grant block says it uses
  const json = blocks
    .find((block) => block.marker === 'quickstart:run' && block.code.includes('json() {'))!
    .code.split('\n')
    .find((line) => line.startsWith('json() {'))!;
  const script = [json, ...[barrier, grants].map((block) => block.code.replaceAll('localhost:8080', host))].join('\necho @@block-end@@\n');
  const { code, stdout, stderr } = await bash(script, REPO_ROOT, { TOKEN: token, PROJECT_ID: projectId });
  expect(code, `bash exited ${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`).toBe(0);
  const [, waited, granted] = stdout.split('@@block-end@@\n');
  expect(matchesShown(waited!.trimEnd(), outputAfter(blocks, barrier, 'readme:output')!), waited).toBe(true);
  expect(waited).toContain('reached: 1 Integration reflect it (local shop/app)');
  // when the wait answers, the Secret holds the new value (openssl rand -hex 16)
  expect((await cluster.secretData('shop', 'app-secrets'))?.DATABASE_PASSWORD).toMatch(/^[0-9a-f]{32}$/);
  // after the walk-through the list also shows the namespace the SecretsProject granted itself, as the README says
  const lines = granted!.trimEnd().split('\n');
  expect(lines.slice(0, -1).sort()).toEqual(['local shop created', 'local shop-staging api']);
  expect(lines.at(-1)).toBe('shop-staging');
});

test("the namespace is the reader's to delete: deleting it removes what the walk-through made", async () => {
  await raw.delete(manifests[0]!);
  await waitFor(
    'namespace shop to be gone',
    async () => {
      try {
        await cluster.core.readNamespace({ name: 'shop' });
        return false;
      } catch (error) {
        return apiStatus(error) === 404;
      }
    },
    { timeoutMs: 60_000 },
  );
});
