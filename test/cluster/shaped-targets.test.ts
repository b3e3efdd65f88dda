import { PatchStrategy, setHeaderOptions, type V1ConfigMap, type V1Secret } from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { TargetObjectApi } from '../../src/operator/runtime/target-object-api.ts';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, startApi, startOperatorProcess } from '../support/operator-fixture.ts';
import { markedBlocks } from '../support/readme.ts';

/**
 * Shaping what lands in the cluster, on the real control plane: the README's
 * template examples, every Secret type accepted by the apiserver, hostile
 * templates refused without a partial write, key selection and collisions
 * across several sources, and ConfigMap targets with the Secret rules.
 */
let cluster: Cluster;
let namespace: TestNamespace;
let api: CofferProcess;
let operator: CofferProcess;
let token: string;
let projectId: string;
const slug = `shapes-${Date.now().toString(36)}`;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const CERT_LEAF = '-----BEGIN CERTIFICATE-----\nMIIBleafleafleaf\n-----END CERTIFICATE-----';
const CERT_CA = '-----BEGIN CERTIFICATE-----\nMIIBcacacacacaca\n-----END CERTIFICATE-----';
const EC_KEY = '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIkeykeykey\n-----END EC PRIVATE KEY-----';

const call = (method: string, path: string, body?: unknown) => callCoffer(api, method, path, token, body);

async function createFolder(path: string, environment = 'prod') {
  const parts = path.split('/').filter(Boolean);
  for (let depth = 0; depth < parts.length; depth++) {
    const parent = `/${parts.slice(0, depth).join('/')}`;
    const response = await call('POST', '/api/v1/folders', { workspaceId: projectId, environment, name: parts[depth], path: parent });
    expect([200, 400, 409], JSON.stringify(response.body)).toContain(response.status);
  }
}

async function putSecrets(path: string, secrets: Record<string, string>, environment = 'prod', tagIds: string[] = []) {
  if (path !== '/') await createFolder(path, environment);
  for (const [key, value] of Object.entries(secrets)) {
    const body = { workspaceId: projectId, environment, secretPath: path, secretValue: value, ...(tagIds.length ? { tagIds } : {}) };
    let response = await call('POST', `/api/v3/secrets/raw/${encodeURIComponent(key)}`, body);
    if (response.status === 400 || response.status === 409) response = await call('PATCH', `/api/v3/secrets/raw/${encodeURIComponent(key)}`, body);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  }
}

async function createTag(tagSlug: string): Promise<string> {
  const response = await call('POST', `/api/v1/workspace/${projectId}/tags`, { slug: tagSlug, color: '#336699' });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.workspaceTag.id as string;
}

function integration(name: string, spec: Record<string, unknown>) {
  return { kind: 'Integration', metadata: { name }, spec: { projectRef: { name: 'web-shop' }, environment: 'prod', ...spec } };
}

async function patchSpec(name: string, spec: Record<string, unknown>) {
  await cluster.custom.patchNamespacedCustomObject(
    { group: 'coffer.dev', version: 'v1alpha1', namespace: namespace.name, plural: 'integrations', name, body: { spec } },
    mergePatch,
  );
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

function waitForCondition(name: string, type: string, status: 'True' | 'False', reason: string, timeoutMs = 30_000) {
  return waitFor(
    `integration ${name}: ${type}=${status} ${reason}`,
    async () => {
      const resource = await cluster.get('integrations', namespace.name, name);
      const found = (resource.status?.conditions ?? []).find((entry: Condition) => entry.type === type);
      if (found?.status === status && found.reason === reason && resource.status.observedGeneration === resource.metadata.generation) return resource;
      throw new Error(`conditions: ${JSON.stringify(resource.status?.conditions ?? [])}`);
    },
    { timeoutMs },
  );
}

const conditionOf = (resource: { status: { conditions: Condition[] } }, type: string) => resource.status.conditions.find((entry) => entry.type === type)!;

async function events(object: string, reason?: string) {
  const list = await cluster.core.listNamespacedEvent({ namespace: namespace.name });
  return list.items.filter((event) => event.involvedObject.name === object && (reason === undefined || event.reason === reason));
}

async function configMap(name: string): Promise<V1ConfigMap | undefined> {
  try {
    return await cluster.core.readNamespacedConfigMap({ namespace: namespace.name, name });
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

function waitForConfigMap(name: string, expected: Record<string, string>, what: string) {
  return waitFor(what, async () => {
    const found = await configMap(name);
    if (found && isDeepStrictEqual(found.data ?? {}, expected)) return found;
    throw new Error(`data ${JSON.stringify(found?.data)}`);
  });
}

beforeAll(async () => {
  cluster = clusterClients();
  namespace = await createTestNamespace('shapes');
  const environment = await cofferEnvironment(namespace.name);
  ({ api, token } = await startApi(environment));
  operator = await startOperatorProcess(environment);
  await cluster.apply('secretsprojects', namespace.name, { kind: 'SecretsProject', metadata: { name: 'web-shop' }, spec: { name: 'Web Shop', slug } });
  projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'web-shop')).status.projectId;
}, 180_000);

afterEach((context) => {
  if (context.task.result?.state === 'fail') process.stderr.write(`--- operator log tail ---\n${operator.output.join('').split('\n').slice(-40).join('\n')}\n`);
});

afterAll(async () => {
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  await namespace?.cleanup();
});

describe('the README examples, applied as written', () => {
  const examples = markedBlocks()
    .filter((block) => block.marker === 'shaping:apply')
    .map((block) => parseYaml(block.code) as { metadata: { name: string; namespace?: string }; spec: Record<string, unknown> });

  /** What each example reads, and the Secret it must produce. */
  const expectations: Record<string, { path: string; secrets: Record<string, string>; type: string; data: (data: Record<string, string>) => void }> = {
    'web-tls': {
      path: '/tls',
      secrets: { TLS_CHAIN: `${CERT_LEAF}\n${CERT_CA}\n`, TLS_KEY: `${EC_KEY}\n` },
      type: 'kubernetes.io/tls',
      data: (data) => expect(data).toEqual({ 'tls.crt': `${CERT_LEAF}\n${CERT_CA}\n`, 'tls.key': `${EC_KEY}\n`, 'ca.crt': `${CERT_CA}\n` }),
    },
    'registry-pull': {
      path: '/registry',
      secrets: { REGISTRY_SERVER: 'registry.example.com', REGISTRY_USER: 'robot', REGISTRY_PASSWORD: 'pull p@ss' },
      type: 'kubernetes.io/dockerconfigjson',
      data: (data) =>
        expect(JSON.parse(data['.dockerconfigjson']!)).toEqual({
          auths: { 'registry.example.com': { username: 'robot', password: 'pull p@ss', auth: Buffer.from('robot:pull p@ss').toString('base64') } },
        }),
    },
    database: {
      path: '/database',
      secrets: { DB_USER: 'shop', DB_PASSWORD: 'p@ss word/1', DB_HOST: 'db.internal', DB_UNRELATED: 'left out' },
      type: 'Opaque',
      data: (data) =>
        expect(data).toEqual({
          DB_USER: 'shop',
          DB_PASSWORD: 'p@ss word/1',
          DB_HOST: 'db.internal',
          DATABASE_URL: 'postgres://shop:p%40ss%20word%2F1@db.internal:5432/shop?sslmode=require',
        }),
    },
    'eso-pull': {
      path: '/registry-eso',
      secrets: { server: 'ghcr.io', user: 'bot', password: 'token-1' },
      type: 'kubernetes.io/dockerconfigjson',
      data: (data) => expect(JSON.parse(data['.dockerconfigjson']!)).toEqual({ auths: { 'ghcr.io': { auth: Buffer.from('bot:token-1').toString('base64') } } }),
    },
    'infisical-tls': {
      path: '/tls-infisical',
      secrets: { TLS_CERT: CERT_LEAF, TLS_KEY: EC_KEY },
      type: 'kubernetes.io/tls',
      data: (data) => expect(data).toEqual({ 'tls.crt': CERT_LEAF, 'tls.key': EC_KEY }),
    },
  };

  test('the README has the examples the issue asks for: TLS, image pull, connection string, ESO and Infisical translations', () => {
    expect(examples.map((example) => example.metadata.name).sort()).toEqual(Object.keys(expectations).sort());
  });

  test.each(Object.keys(expectations))('%s', async (name) => {
    const example = examples.find((candidate) => candidate.metadata.name === name)!;
    const expected = expectations[name]!;
    await putSecrets(expected.path, expected.secrets);
    await cluster.apply('integrations', namespace.name, { ...example, metadata: { ...example.metadata, namespace: namespace.name } });
    const target = (example.spec.target as { name: string }).name;
    const resource = await cluster.waitReady('integrations', namespace.name, name, 'Synced');
    const secret = (await cluster.secret(namespace.name, target))!;
    expect(secret.type).toBe(expected.type);
    expected.data((await cluster.secretData(namespace.name, target))!);
    expect(JSON.stringify(resource.status)).not.toMatch(/p@ss|token-1|keykey/);
  });
});

describe('Secret types: each rendered and accepted by the apiserver', () => {
  test.each([
    ['kubernetes.io/basic-auth', { username: '{{ USER }}', password: '{{ PASSWORD }}' }],
    ['kubernetes.io/ssh-auth', { 'ssh-privatekey': '{{ SSH_KEY }}' }],
    ['kubernetes.io/tls', { 'tls.crt': '{{ CERT }}', 'tls.key': '{{ KEY }}' }],
    ['kubernetes.io/dockerconfigjson', { '.dockerconfigjson': '{{ "reg.example.com" | dockerconfigjson: USER, PASSWORD }}' }],
    ['kubernetes.io/dockercfg', { '.dockercfg': '{"reg.example.com":{"auth":"{{ USER | basic_auth: PASSWORD }}"}}' }],
    ['Opaque', { 'config.json': '{"user":{{ USER | json }}}' }],
    ['example.com/custom-type', { token: '{{ PASSWORD | b64enc }}' }],
  ])('%s', async (type, templates) => {
    await putSecrets('/types', { USER: 'app', PASSWORD: 'hunter2', SSH_KEY: EC_KEY, CERT: CERT_LEAF, KEY: EC_KEY });
    const name = `type-${type.replace(/[^a-z]+/g, '-').replace(/-$/, '')}`;
    await cluster.apply('integrations', namespace.name, integration(name, { secretPath: '/types', target: { name, template: { type, data: templates } } }));
    await cluster.waitReady('integrations', namespace.name, name, 'Synced');
    const secret = (await cluster.secret(namespace.name, name))!;
    expect(secret.type).toBe(type);
    expect(Object.keys(secret.data ?? {}).sort()).toEqual(Object.keys(templates).sort());
  });

  test("a Secret whose type changes is created anew (Kubernetes never changes a Secret's type in place)", async () => {
    await putSecrets('/retype', { 'tls.crt': CERT_LEAF, 'tls.key': EC_KEY });
    await cluster.apply('integrations', namespace.name, integration('retype', { secretPath: '/retype', target: { name: 'retype' } }));
    await cluster.waitReady('integrations', namespace.name, 'retype', 'Synced');
    const before = (await cluster.secret(namespace.name, 'retype'))!;
    expect(before.type).toBe('Opaque');
    await patchSpec('retype', { target: { name: 'retype', template: { type: 'kubernetes.io/tls' } } });
    const after = await waitFor('the Secret recreated as kubernetes.io/tls', async () => {
      const secret = await cluster.secret(namespace.name, 'retype');
      return secret?.type === 'kubernetes.io/tls' ? secret : false;
    });
    expect(after.metadata!.uid).not.toBe(before.metadata!.uid);
    expect(await cluster.secretData(namespace.name, 'retype')).toEqual({ 'tls.crt': CERT_LEAF, 'tls.key': EC_KEY });
  });

  test('data a typed Secret lacks is refused before the write, with a message of its own', async () => {
    await cluster.apply(
      'integrations',
      namespace.name,
      integration('half-tls', { secretPath: '/types', target: { name: 'half-tls', template: { type: 'kubernetes.io/tls', data: { 'tls.crt': '{{ CERT }}' } } } }),
    );
    const failed = await waitForCondition('half-tls', 'Synced', 'False', 'SecretTypeMismatch');
    expect(conditionOf(failed, 'Synced').message).toContain("needs the key 'tls.key'");
    expect(await cluster.secret(namespace.name, 'half-tls')).toBeUndefined();
  });
});

describe('hostile templates: refused with a condition and an Event, never a partial Secret', () => {
  const good = { 'app.conf': 'user={{ USER }}', token: '{{ PASSWORD | b64enc }}' };

  beforeAll(async () => {
    await putSecrets('/hostile', { USER: 'app', PASSWORD: 'hunter2-hostile-value' });
    await cluster.apply('integrations', namespace.name, integration('hostile', { secretPath: '/hostile', target: { name: 'hostile', template: { data: good } } }));
    await cluster.waitReady('integrations', namespace.name, 'hostile', 'Synced');
  });

  test.each([
    [
      'huge output',
      { 'app.conf': 'ok', big: '{% for i in (1..20000) %}{{ PASSWORD }}{{ PASSWORD }}{{ PASSWORD }}{{ PASSWORD }}{% endfor %}' },
      /exceeds 1048576 characters/,
    ],
    [
      'a deep loop',
      { 'app.conf': '{% for a in (1..1000) %}{% for b in (1..1000) %}{% for c in (1..1000) %}x{% endfor %}{% endfor %}{% endfor %}' },
      /allocates too much|runs too long|did not finish/,
    ],
    [
      'a missing key',
      { 'app.conf': 'user={{ USER }} db={{ DB_URL }}' },
      /spec\.target\.template\.data\['app\.conf'\] \(data key 'app\.conf'\) failed: line 1, column \d+: undefined variable 'DB_URL'/,
    ],
    ['reading a file', { 'app.conf': '{% include "/etc/passwd" %}' }, /unknown tag in '\{% include/],
    ['reaching the process', { 'app.conf': '{{ process.env.COFFER_ENCRYPTION_KEY }}' }, /undefined variable 'process\.env\.COFFER_ENCRYPTION_KEY'/],
    ['the prototype chain', { 'app.conf': '{{ USER.constructor.constructor }}' }, /undefined variable 'USER\.constructor\.constructor'/],
    ['an unknown filter', { 'app.conf': '{{ USER | system }}' }, /unknown filter in '\{\{ USER \| system \}\}'/],
    // a value used as a variable name, or parsed as an expression: the message names the template's text, never the value
    ['a value as a variable name', { 'app.conf': '{{ secrets[PASSWORD] }}' }, /line 1, column 4: undefined variable 'secrets\[PASSWORD\]'/],
    [
      "a value as where_exp's expression",
      { 'app.conf': '{% assign list = "[1,2]" | from_json %}{{ list | where_exp: "item", PASSWORD }}' },
      /in an expression a filter read from the data \(no position in the template\): /,
    ],
    ["a value as required's message", { 'app.conf': '{{ "" | required: PASSWORD }}' }, /line 1, column \d+: a required value is missing/],
  ])('%s', async (_what, templates, message) => {
    const before = (await cluster.secret(namespace.name, 'hostile'))!;
    const eventsBefore = (await events('hostile', 'TemplateError')).length;
    await patchSpec('hostile', { target: { name: 'hostile', template: { data: { ...Object.fromEntries(Object.keys(good).map((key) => [key, null])), ...templates } } } });
    const failed = await waitForCondition('hostile', 'Synced', 'False', 'TemplateError');
    const said = conditionOf(failed, 'Synced').message;
    expect(said).toMatch(message);
    expect(said).toContain("Nothing was written: Secret 'hostile' keeps its last data");
    const after = (await cluster.secret(namespace.name, 'hostile'))!;
    expect(after.metadata!.resourceVersion).toBe(before.metadata!.resourceVersion);
    const warnings = await waitFor('a TemplateError Warning', async () => {
      const found = await events('hostile', 'TemplateError');
      return found.length > eventsBefore ? found : false;
    });
    expect(warnings.at(-1)!.type).toBe('Warning');
    // the integration record's syncMessage, which project members read, says the same
    const record = await waitFor('the failure in the integration record', async () => {
      const list = await call('GET', `/api/v1/workspace/${projectId}/integrations`);
      const found = (list.body.integrations as { app: string; isSynced: boolean; syncMessage: string | null }[]).find((entry) => entry.app === 'hostile');
      return found && !found.isSynced && found.syncMessage === said ? found : false;
    });
    expect(JSON.stringify(failed.status) + JSON.stringify(warnings) + JSON.stringify(record)).not.toMatch(/hunter2|aHVudGVy|hostile-value/i);
    // the operator survived, and a good template syncs again
    await patchSpec('hostile', { target: { name: 'hostile', template: { data: { ...Object.fromEntries(Object.keys(templates).map((key) => [key, null])), ...good } } } });
    await waitForCondition('hostile', 'Synced', 'True', 'Synced');
  });
});

describe('every key reaches the Secret; the data hash is keyed', () => {
  test('every secret reaches the Secret: __proto__ and the Object.prototype names are keys like any other', async () => {
    // parsed, not a literal: in an object literal `__proto__` is the prototype, not a key
    const secrets = JSON.parse(
      '{"__proto__": "proto-value", "constructor": "constructor-value", "toString": "to-string-value", "hasOwnProperty": "own-value", "PLAIN": "plain-value"}',
    ) as Record<string, string>;
    expect(Object.keys(secrets)).toHaveLength(5);
    await putSecrets('/proto', secrets);
    await cluster.apply('integrations', namespace.name, integration('proto', { secretPath: '/proto', target: { name: 'proto' } }));
    const resource = await waitForCondition('proto', 'Ready', 'True', 'Synced');
    expect(resource.status.skippedKeys).toBeUndefined();
    expect(resource.status.secretCount).toBe(5);
    // read as JSON, key for key (the typed client drops a key named __proto__, as kubectl would not)
    const secret = await TargetObjectApi.forConfig(cluster.kc).readJson<V1Secret>('Secret', namespace.name, 'proto');
    const data = Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString()]);
    expect(data.sort(([a], [b]) => (a! < b! ? -1 : 1))).toEqual(Object.entries(secrets).sort(([a], [b]) => (a < b ? -1 : 1)));
  });

  test('status.dataHash and the data-hash annotation are keyed: not the SHA-256 of the data', async () => {
    await putSecrets('/pin', { PIN: '4242' });
    await cluster.apply('integrations', namespace.name, integration('pin', { secretPath: '/pin', target: { name: 'pin' } }));
    await cluster.waitForData(namespace.name, 'pin', { PIN: '4242' }, 'the PIN');
    const resource = await waitForCondition('pin', 'Ready', 'True', 'Synced');
    const secret = (await cluster.secret(namespace.name, 'pin'))!;
    const shown = [resource.status.dataHash as string, secret.metadata!.annotations!['coffer.dev/data-hash']!];
    expect(shown[0]).toMatch(/^hmac-sha256:[0-9a-f]{32}$/);
    expect(shown[1]).toBe(shown[0]);
    // the attack that recovered a 4-digit value from the unkeyed hash finds nothing
    const { createHash } = await import('node:crypto');
    const unkeyed = (pin: string) => createHash('sha256').update(`3:PIN${pin.length}:${pin}`).digest('hex').slice(0, 32);
    const digits = shown[0]!.slice('hmac-sha256:'.length);
    expect(Array.from({ length: 10_000 }, (_, n) => String(n).padStart(4, '0')).filter((pin) => unkeyed(pin) === digits)).toEqual([]);
    // the key is the installation's, held in the operator's namespace: every replica and restart hashes alike
    expect(await cluster.secret(namespace.name, 'coffer-reload-key')).toBeDefined();
  });
});

describe('key selection and several sources', () => {
  test('include, exclude, tags and renames select exactly; a later source wins and the collision is named (never a value)', async () => {
    const backend = await createTag('backend');
    const legacy = await createTag('legacy');
    await putSecrets('/select', { DB_HOST: 'primary-host', DB_PASSWORD: 'primary-pass', DB_TEST: 'excluded' }, 'prod', [backend]);
    await putSecrets('/select', { API_KEY: 'untagged' });
    await putSecrets('/select', { OLD_TOKEN: 'legacy-token' }, 'prod', [backend, legacy]);
    await putSecrets('/shared-db', { HOST: 'shared-host', PORT: '5432', INTERNAL: 'not selected' }, 'dev');
    await cluster.apply(
      'integrations',
      namespace.name,
      integration('selected', {
        secretPath: '/select',
        keys: { include: ['DB_*', 'OLD_*'], exclude: ['*_TEST'], tags: ['backend'], excludeTags: ['legacy'], rename: { addPrefix: 'APP_' } },
        sources: [
          { environment: 'dev', secretPath: '/shared-db', keys: { include: ['HOST', 'PORT'], rename: { rewrite: [{ regex: '^(.*)$', replacement: 'APP_DB_$1' }] } } },
        ],
        target: { name: 'selected' },
      }),
    );
    await cluster.waitForData(namespace.name, 'selected', { APP_DB_HOST: 'shared-host', APP_DB_PASSWORD: 'primary-pass', APP_DB_PORT: '5432' }, 'the selection');
    const resource = await waitForCondition('selected', 'Ready', 'True', 'Synced');
    expect(resource.status.collisions).toEqual([{ key: 'APP_DB_HOST', winner: 'dev:/shared-db', overridden: ['prod:/select'] }]);
    expect(conditionOf(resource, 'Ready').message).toBe('3 keys synced; 1 given by more than one place (see status.collisions)');
    const collision = await waitFor('a KeyCollision Event', async () => {
      const found = await events('selected', 'KeyCollision');
      return found.length > 0 ? found : false;
    });
    expect(collision).toHaveLength(1);
    expect(collision[0]!.message).toContain("'APP_DB_HOST' from dev:/shared-db over prod:/select");
    expect(JSON.stringify(resource.status) + collision[0]!.message).not.toMatch(/primary-host|shared-host/);

    // a tag taken off a secret takes it out of the target
    const response = await call('PATCH', '/api/v3/secrets/raw/DB_PASSWORD', { workspaceId: projectId, environment: 'prod', secretPath: '/select', tagIds: [] });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    await cluster.waitForData(namespace.name, 'selected', { APP_DB_HOST: 'shared-host', APP_DB_PORT: '5432' }, 'the untagged secret to leave');
  });

  test('a pattern that does not compile: Ready=False InvalidSpec naming the field, nothing written', async () => {
    await cluster.apply('integrations', namespace.name, integration('bad-glob', { secretPath: '/select', keys: { include: ['[DB'] }, target: { name: 'bad-glob' } }));
    const failed = await waitForCondition('bad-glob', 'Ready', 'False', 'InvalidSpec');
    expect(conditionOf(failed, 'Ready').message).toContain("spec.keys.include[0]: '[DB' is not a valid pattern");
    await cluster.apply(
      'integrations',
      namespace.name,
      integration('bad-regex', { secretPath: '/select', keys: { rename: { rewrite: [{ regex: '(a)\\1', replacement: 'x' }] } }, target: { name: 'bad-regex' } }),
    );
    await waitForCondition('bad-regex', 'Ready', 'False', 'InvalidSpec');
    expect(await cluster.secret(namespace.name, 'bad-glob')).toBeUndefined();
    expect(await cluster.secret(namespace.name, 'bad-regex')).toBeUndefined();
  });

  test('a change in any source reaches the target at once', async () => {
    await putSecrets('/shared-db', { PORT: '6432' }, 'dev');
    await cluster.waitForData(namespace.name, 'selected', { APP_DB_HOST: 'shared-host', APP_DB_PORT: '6432' }, 'the second source’s change');
  });
});

describe('ConfigMap targets', () => {
  test('Owner: plain data rendered from templates, labelled and annotated like a Secret, drift repaired, deleted with the Integration', async () => {
    await putSecrets('/config', { LOG_LEVEL: 'debug', FEATURES: '["a","b"]' });
    await cluster.apply(
      'integrations',
      namespace.name,
      integration('config', {
        secretPath: '/config',
        target: {
          kind: 'ConfigMap',
          name: 'app-config',
          template: { data: { 'app.yaml': 'logLevel: {{ LOG_LEVEL }}\nfeatures: {{ FEATURES | from_json | to_json }}\n' } },
        },
      }),
    );
    const synced = await waitForConfigMap('app-config', { 'app.yaml': 'logLevel: debug\nfeatures: ["a","b"]\n' }, 'the ConfigMap');
    expect(synced.metadata!.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'coffer' });
    expect(synced.metadata!.annotations).toMatchObject({ 'coffer.dev/integration': `${namespace.name}/config` });
    expect(synced.metadata!.ownerReferences?.[0]).toMatchObject({ kind: 'Integration', name: 'config' });
    expect(await cluster.secret(namespace.name, 'app-config')).toBeUndefined();

    await cluster.core.patchNamespacedConfigMap({ namespace: namespace.name, name: 'app-config', body: { data: { 'app.yaml': 'edited', extra: 'x' } } }, mergePatch);
    await waitForConfigMap('app-config', { 'app.yaml': 'logLevel: debug\nfeatures: ["a","b"]\n' }, 'the drift repaired');
    await cluster.core.deleteNamespacedConfigMap({ namespace: namespace.name, name: 'app-config' });
    await waitForConfigMap('app-config', { 'app.yaml': 'logLevel: debug\nfeatures: ["a","b"]\n' }, 'the deleted ConfigMap put back');
    await waitFor('a DriftRepaired Event', async () => (await events('config', 'DriftRepaired')).length >= 2);

    await putSecrets('/config', { LOG_LEVEL: 'info' });
    await waitForConfigMap('app-config', { 'app.yaml': 'logLevel: info\nfeatures: ["a","b"]\n' }, 'the change');
    await cluster.remove('integrations', namespace.name, 'config');
    await waitFor('the ConfigMap to go with its Integration', async () => (await configMap('app-config')) === undefined);
  });

  test('Merge: only its keys go into an existing ConfigMap, and only they leave with it; a ConfigMap Coffer does not manage is never taken over', async () => {
    await cluster.core.createNamespacedConfigMap({ namespace: namespace.name, body: { metadata: { name: 'shared-config' }, data: { theirs: 'kept' } } });
    await cluster.apply(
      'integrations',
      namespace.name,
      integration('config-merge', {
        secretPath: '/config',
        keys: { include: ['LOG_LEVEL'] },
        target: { kind: 'ConfigMap', name: 'shared-config', creationPolicy: 'Merge' },
      }),
    );
    await waitForConfigMap('shared-config', { theirs: 'kept', LOG_LEVEL: 'info' }, 'the merged key');
    await cluster.apply('integrations', namespace.name, integration('config-taker', { secretPath: '/config', target: { kind: 'ConfigMap', name: 'shared-config' } }));
    const refused = await waitForCondition('config-taker', 'Ready', 'False', 'ConfigMapConflict');
    expect(conditionOf(refused, 'Ready').message).toContain("ConfigMap 'shared-config' exists and is not managed by this Integration");
    await cluster.remove('integrations', namespace.name, 'config-taker');
    await cluster.remove('integrations', namespace.name, 'config-merge');
    await waitForConfigMap('shared-config', { theirs: 'kept' }, 'the merged key removed, theirs kept');
  });

  test('a Secret of the same name is not a ConfigMap: each kind is its own target', async () => {
    await putSecrets('/both', { VALUE: 'shared' });
    await cluster.apply('integrations', namespace.name, integration('both-secret', { secretPath: '/both', target: { name: 'both' } }));
    await cluster.apply('integrations', namespace.name, integration('both-config', { secretPath: '/both', target: { kind: 'ConfigMap', name: 'both' } }));
    await cluster.waitForData(namespace.name, 'both', { VALUE: 'shared' }, 'the Secret');
    await waitForConfigMap('both', { VALUE: 'shared' }, 'the ConfigMap');
    await putSecrets('/both', { VALUE: 'changed' });
    await cluster.waitForData(namespace.name, 'both', { VALUE: 'changed' }, 'the Secret changed');
    await waitForConfigMap('both', { VALUE: 'changed' }, 'the ConfigMap changed');
  });
});

describe('the schema refuses what cannot work', () => {
  const refusal = async (body: object) => {
    try {
      await cluster.apply('integrations', namespace.name, body);
    } catch (error) {
      return String((error as { body?: unknown }).body ?? error);
    }
    throw new Error('the apiserver accepted it');
  };

  test('a ConfigMap with a Secret type, template data keys that cannot be keys, a target kind changed', async () => {
    expect(await refusal(integration('cm-typed', { target: { kind: 'ConfigMap', name: 'x', type: 'kubernetes.io/tls' } }))).toContain('a ConfigMap target has no type');
    expect(await refusal(integration('cm-template-typed', { target: { kind: 'ConfigMap', name: 'x', template: { type: 'Opaque' } } }))).toContain(
      'a ConfigMap target has no type',
    );
    expect(await refusal(integration('bad-key', { target: { name: 'x', template: { data: { 'not a key': 'x' } } } }))).toContain('data keys are at most 253');
    expect(await refusal(integration('two-types', { target: { name: 'x', type: 'kubernetes.io/tls', template: { type: 'kubernetes.io/basic-auth' } } }))).toContain(
      'not both',
    );
    await cluster.apply('integrations', namespace.name, integration('kind-fixed', { secretPath: '/both', target: { name: 'kind-fixed' } }));
    let said = '';
    try {
      await patchSpec('kind-fixed', { target: { name: 'kind-fixed', kind: 'ConfigMap' } });
    } catch (error) {
      said = String((error as { body?: unknown }).body ?? error);
    }
    expect(said).toContain('target.kind is immutable');
  });
});
