import { spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthorizationV1Api, CoordinationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, onTestFailed, test } from 'vitest';
import { parse, stringify } from 'yaml';
import { REPO_ROOT } from '../k8s/controlplane.ts';
import { createTestNamespace, kubeClients, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type Manifest, parseManifests, RawKube, runTool } from '../k8s/manifests.ts';
import { COFFER_BIN, type CofferProcess, callCoffer, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import { clusterClients, cofferEnvironment, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * Packaging against the real control plane: the Helm chart (lint, template for several value sets)
 * and the kustomize base in deploy/, every object applied with a server-side dry run; the RBAC
 * they grant, proven with SelfSubjectAccessReviews as the non-admin user `operator`; the chart's
 * bootstrap job (`coffer bootstrap --server --store-secret`) with only its own Role; and the
 * operator running as `operator` with exactly deploy/'s RBAC, syncing a Secret end to end.
 */
const kubeconfig = inject('kubeconfig');
const admin = kubeClients(kubeconfig, 'admin');
const asOperator = kubeClients(kubeconfig, 'operator');
const raw = new RawKube(admin.kc);
const CHART = join(REPO_ROOT, 'helm', 'coffer');
const work = mkdtempSync(join(tmpdir(), 'coffer-packaging-'));
const namespaces: TestNamespace[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

/** A copy of the test kubeconfig whose current context is the non-admin user `operator`. */
const operatorKubeconfig = join(work, 'kubeconfig-operator');
{
  const config = parse(readFileSync(kubeconfig, 'utf8'));
  config['current-context'] = 'operator';
  writeFileSync(operatorKubeconfig, stringify(config), { mode: 0o600 });
}

async function namespace(prefix: string): Promise<string> {
  const ns = await createTestNamespace(prefix, kubeconfig);
  namespaces.push(ns);
  return ns.name;
}

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.warn('cleanup failed:', error));
  await Promise.all(namespaces.map((ns) => ns.cleanup().catch(() => {})));
  rmSync(work, { recursive: true, force: true });
});

async function helmTemplate(release: string, ns: string, values: object): Promise<Manifest[]> {
  const file = join(work, `values-${release}-${ns}.json`);
  writeFileSync(file, JSON.stringify(values));
  const { stdout } = await runTool('helm', ['template', release, CHART, '--namespace', ns, '--values', file]);
  return parseManifests(stdout);
}

const find = (objects: Manifest[], kind: string, name?: string) => objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
const one = (objects: Manifest[], kind: string, name?: string) => {
  const found = find(objects, kind, name);
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0]!;
};
const envOf = (container: any): Record<string, any> => Object.fromEntries((container.env ?? []).map((e: any) => [e.name, e.value ?? e.valueFrom]));

/** Applies every object with a server-side dry run (namespaced objects without one go to `ns`). */
async function dryRunAll(objects: Manifest[], ns?: string): Promise<void> {
  const failures: string[] = [];
  for (const object of objects) {
    await raw.apply(object, { dryRun: true, defaultNamespace: ns, fieldManager: 'coffer-packaging-test' }).catch((error: Error) => failures.push(error.message));
  }
  expect(failures).toEqual([]);
}

/** The restricted pod security profile, as both the chart and deploy/ promise it. */
function expectHardened(podSpec: any): void {
  expect(podSpec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } });
  for (const container of podSpec.containers) {
    expect(container.securityContext, container.name).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 10001,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.resources?.requests, container.name).toBeDefined();
    expect(container.resources?.limits?.memory, container.name).toBeDefined();
  }
}

// ---------------------------------------------------------------------------------------------
// Helm chart

const EXTERNAL_URL = 'postgresql://coffer:pw@postgres.example:5432/coffer';

interface ValueSet {
  values: object;
  check(objects: Manifest[], ns: string): void;
}

const valueSets: Record<string, ValueSet> = {
  'operator-only (remote)': {
    values: {
      remote: {
        enabled: true,
        server: 'https://coffer.example.com',
        clusterName: 'edge-1',
        identityId: '8a4c2e6f-1b3d-4f5a-8c7e-9d1b3f5a7c9e',
        caSecret: 'coffer-server-ca',
        tlsServerName: 'coffer.internal',
      },
      replicaCount: 2,
    },
    check(objects) {
      const deployment = one(objects, 'Deployment', 'coffer');
      expect(deployment.spec.replicas).toBe(2);
      expect(deployment.spec.strategy).toBeUndefined();
      const pod = deployment.spec.template.spec;
      const container = pod.containers[0];
      expect(container.args).toEqual(['operator']);
      expect(container.ports).toEqual([{ name: 'metrics', containerPort: 8081 }]);
      const env = envOf(container);
      expect(env).toMatchObject({
        COFFER_SERVER: 'https://coffer.example.com',
        COFFER_CLUSTER_NAME: 'edge-1',
        COFFER_AUTH_METHOD: 'kubernetes',
        COFFER_IDENTITY_ID: '8a4c2e6f-1b3d-4f5a-8c7e-9d1b3f5a7c9e',
        COFFER_CREDENTIALS_SECRET: 'coffer-operator-credentials',
        COFFER_SERVER_CA_FILE: '/etc/coffer/server-ca/ca.crt',
        COFFER_SERVER_TLS_SERVER_NAME: 'coffer.internal',
      });
      for (const gone of ['DATABASE_URL', 'COFFER_ENCRYPTION_KEY', 'COFFER_AUTH_SECRET', 'COFFER_DATA_DIR', 'COFFER_OPERATOR']) expect(env[gone], gone).toBeUndefined();
      expect(pod.volumes.find((v: any) => v.name === 'server-ca')).toEqual({ name: 'server-ca', secret: { secretName: 'coffer-server-ca' } });
      expect(pod.volumes.find((v: any) => v.name === 'data')).toBeUndefined();
      // no database, no keys, no API, no bootstrap
      for (const kind of ['Service', 'Secret', 'Job', 'PersistentVolumeClaim']) expect(find(objects, kind), kind).toEqual([]);
      expect(find(objects, 'ClusterRole')).toHaveLength(1);
      expect(one(objects, 'ClusterRoleBinding', 'coffer-auth-delegator').roleRef).toMatchObject({ name: 'system:auth-delegator' });
    },
  },
  default: {
    values: {},
    check(objects, ns) {
      const deployment = one(objects, 'Deployment', 'coffer');
      expect(deployment.spec.replicas).toBe(1);
      expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
      const pod = deployment.spec.template.spec;
      const env = envOf(pod.containers[0]);
      expect(env).toMatchObject({ COFFER_HOST: '0.0.0.0', COFFER_DATA_DIR: '/data', COFFER_OPERATOR: 'true', COFFER_LEADER_ELECTION: 'false' });
      // installed in a cluster, deliveries go only to globally routable receivers (the cluster's own services are not one)
      expect(env.COFFER_OUTBOUND_DENY_PRIVATE).toBe('true');
      expect(env.DATABASE_URL).toBeUndefined();
      expect(env.COFFER_WATCH_NAMESPACE).toBeUndefined();
      expect(env.COFFER_ENCRYPTION_KEY).toEqual({ secretKeyRef: { name: 'coffer-keys', key: 'encryption-key' } });
      expect(env.POD_NAMESPACE).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
      // the V8 heap is sized for the memory limit
      expect(env.NODE_OPTIONS).toBe('--max-old-space-size=256 --max-semi-space-size=8');
      expect(pod.containers[0].resources.limits.memory).toBe('512Mi');
      expect(pod.volumes.find((v: any) => v.name === 'data')).toEqual({ name: 'data', persistentVolumeClaim: { claimName: 'coffer-data' } });
      expect(one(objects, 'PersistentVolumeClaim', 'coffer-data').spec.resources.requests.storage).toBe('1Gi');
      // keys generated once (kept on uninstall); the encryption key is 32 bytes
      const keys = one(objects, 'Secret', 'coffer-keys');
      expect(keys.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
      expect(Buffer.from(Buffer.from(keys.data['encryption-key'], 'base64').toString(), 'base64')).toHaveLength(32);
      expect(Buffer.from(keys.data['auth-secret'], 'base64').toString().length).toBeGreaterThanOrEqual(32);
      // the bootstrap job: a post-install hook calling the API and storing the result in coffer-admin
      const job = one(objects, 'Job', 'coffer-bootstrap');
      expect(job.metadata.annotations?.['helm.sh/hook']).toBe('post-install');
      const container = job.spec.template.spec.containers[0];
      expect(container.args).toEqual(['bootstrap', '--server', `http://coffer.${ns}.svc:8080`, '--store-secret', 'coffer-admin', '--if-needed', '--timeout', '10m']);
      expect(envOf(container).COFFER_BOOTSTRAP_PASSWORD).toEqual({ secretKeyRef: { name: 'coffer-admin-password', key: 'password' } });
      expect(job.spec.template.spec.serviceAccountName).toBe('coffer-bootstrap');
      expectHardened(job.spec.template.spec);
      // cluster scope, CRDs installed and kept
      expect(find(objects, 'ClusterRole')).toHaveLength(1);
      expect(
        find(objects, 'CustomResourceDefinition')
          .map((crd) => crd.metadata.name)
          .sort(),
      ).toEqual(['integrations.coffer.dev', 'secretimports.coffer.dev', 'secretsprojects.coffer.dev']);
      for (const crd of find(objects, 'CustomResourceDefinition')) expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
      expect(find(objects, 'PodDisruptionBudget')).toEqual([]);
      expect(find(objects, 'ServiceMonitor')).toEqual([]);
    },
  },
  'external database and existing secrets': {
    values: {
      database: { existingSecret: 'my-db', existingSecretKey: 'url' },
      keys: { existingSecret: 'my-keys' },
      bootstrap: { existingPasswordSecret: 'my-admin-password', email: 'ops@example.com', organization: 'Acme' },
    },
    check(objects) {
      const pod = one(objects, 'Deployment').spec.template.spec;
      const env = envOf(pod.containers[0]);
      expect(env.DATABASE_URL).toEqual({ secretKeyRef: { name: 'my-db', key: 'url' } });
      expect(env.COFFER_ENCRYPTION_KEY).toEqual({ secretKeyRef: { name: 'my-keys', key: 'encryption-key' } });
      expect(env.COFFER_AUTH_SECRET).toEqual({ secretKeyRef: { name: 'my-keys', key: 'auth-secret' } });
      expect(pod.volumes.find((v: any) => v.name === 'data')).toEqual({ name: 'data', emptyDir: {} });
      expect(find(objects, 'Secret')).toEqual([]);
      expect(find(objects, 'PersistentVolumeClaim')).toEqual([]);
      expect(one(objects, 'Deployment').spec.strategy).toBeUndefined();
      const job = envOf(one(objects, 'Job').spec.template.spec.containers[0]);
      expect(job).toMatchObject({ COFFER_BOOTSTRAP_EMAIL: 'ops@example.com', COFFER_BOOTSTRAP_ORGANIZATION: 'Acme' });
      expect(job.COFFER_BOOTSTRAP_PASSWORD).toEqual({ secretKeyRef: { name: 'my-admin-password', key: 'password' } });
    },
  },
  'three replicas with a PodDisruptionBudget': {
    values: { replicaCount: 3, database: { url: EXTERNAL_URL } },
    check(objects) {
      const deployment = one(objects, 'Deployment');
      expect(deployment.spec.replicas).toBe(3);
      const env = envOf(deployment.spec.template.spec.containers[0]);
      expect(env.COFFER_LEADER_ELECTION).toBe('true');
      expect(env.DATABASE_URL).toEqual({ secretKeyRef: { name: 'coffer-database', key: 'database-url' } });
      expect(Buffer.from(one(objects, 'Secret', 'coffer-database').data['database-url'], 'base64').toString()).toBe(EXTERNAL_URL);
      const pdb = one(objects, 'PodDisruptionBudget');
      expect(pdb.spec.minAvailable).toBe(1);
      expect(deployment.spec.template.metadata.labels).toMatchObject(pdb.spec.selector.matchLabels);
    },
  },
  'namespace-scoped': {
    values: { rbac: { scope: 'namespace' }, crds: { install: false } },
    check(objects, ns) {
      expect(find(objects, 'ClusterRole')).toEqual([]);
      expect(find(objects, 'ClusterRoleBinding')).toEqual([]);
      expect(find(objects, 'CustomResourceDefinition')).toEqual([]);
      expect(one(objects, 'Role', 'coffer-operator').metadata.namespace).toBe(ns);
      expect(one(objects, 'RoleBinding', 'coffer-operator').subjects).toEqual([{ kind: 'ServiceAccount', name: 'coffer', namespace: ns }]);
      expect(envOf(one(objects, 'Deployment').spec.template.spec.containers[0]).COFFER_WATCH_NAMESPACE).toBe(ns);
    },
  },
  ServiceMonitor: {
    values: { serviceMonitor: { enabled: true, labels: { release: 'prometheus' } } },
    check(objects, ns) {
      const monitor = one(objects, 'ServiceMonitor');
      expect(monitor.metadata.labels?.release).toBe('prometheus');
      expect(monitor.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s' }]);
      expect(monitor.spec.namespaceSelector).toEqual({ matchNames: [ns] });
      const service = one(objects, 'Service');
      expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
      expect(service.spec.ports.find((p: any) => p.name === 'metrics')).toMatchObject({ port: 8081, targetPort: 'metrics' });
    },
  },
  'monitoring: PrometheusRule and Grafana dashboard': {
    values: { monitoring: { prometheusRule: { enabled: true, labels: { release: 'prometheus' } }, grafanaDashboard: { enabled: true } } },
    check(objects) {
      const source = (file: string) => readFileSync(join(REPO_ROOT, 'deploy', 'monitoring', file), 'utf8');
      const rule = one(objects, 'PrometheusRule');
      expect(rule.metadata.labels?.release).toBe('prometheus');
      expect(rule.spec.groups).toEqual((parse(source('operator-alerts.yaml')) as { groups: unknown[] }).groups);
      const dashboard = one(objects, 'ConfigMap', 'coffer-operator-dashboard');
      expect(dashboard.metadata.labels?.grafana_dashboard).toBe('1');
      expect(JSON.parse(dashboard.data['coffer-operator.json'])).toEqual(JSON.parse(source('operator-dashboard.json')));
    },
  },
  'no bootstrap, no persistence, operator off, other release name': {
    values: {
      nameOverride: 'vault',
      bootstrap: { enabled: false },
      operator: { enabled: false },
      database: { embedded: { persistence: { enabled: false } } },
      crds: { keep: false },
    },
    check(objects) {
      expect(find(objects, 'Job')).toEqual([]);
      expect(find(objects, 'PersistentVolumeClaim')).toEqual([]);
      const deployment = one(objects, 'Deployment');
      expect(deployment.metadata.name).toBe('coffer-vault');
      expect(envOf(deployment.spec.template.spec.containers[0]).COFFER_OPERATOR).toBe('false');
      for (const crd of find(objects, 'CustomResourceDefinition')) expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBeUndefined();
    },
  },
};

describe('Helm chart helm/coffer', () => {
  test('helm lint --strict is clean, for the defaults and every value set', async () => {
    for (const [name, { values }] of Object.entries(valueSets)) {
      const file = join(work, `lint-${Object.keys(valueSets).indexOf(name)}.json`);
      writeFileSync(file, JSON.stringify(values));
      const { stdout } = await runTool('helm', ['lint', '--strict', CHART, '--values', file]);
      expect(stdout, name).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(stdout, name).not.toMatch(/\[(WARNING|ERROR)\]/);
    }
  });

  test('npm run chart: the archive, from helm package and from tar, lints clean and renders exactly what the chart directory renders', async () => {
    // the keys and password the chart generates differ on every render
    const render = async (chart: string) =>
      (await runTool('helm', ['template', 'coffer', chart, '--namespace', 'coffer-system'])).stdout.replace(
        /^(\s+[a-z-]+: )[A-Za-z0-9+/]{24,}={0,2}$/gm,
        '$1<generated>',
      );
    const fromDirectory = await render(CHART);
    for (const packager of ['helm', 'tar']) {
      const out = join(work, `chart-${packager}`);
      await new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, [join(REPO_ROOT, 'scripts', 'chart.ts'), '--out', out, '--with', packager], { stdio: 'ignore' });
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`scripts/chart.ts --with ${packager} exited ${code}`))));
      });
      const archive = join(out, 'coffer-0.1.0.tgz');
      const { stdout } = await runTool('helm', ['lint', '--strict', archive]);
      expect(stdout, packager).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(await render(archive), packager).toBe(fromDirectory);
    }
  });

  test('the chart renders the alerts and the dashboard from deploy/monitoring itself (files/monitoring is a symlink)', () => {
    expect(readlinkSync(join(CHART, 'files', 'monitoring'))).toBe('../../../deploy/monitoring');
  });

  test('the chart renders the CRDs from crds/ itself (files/crds is a symlink, no second copy)', async () => {
    const link = join(CHART, 'files', 'crds');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe('../../../crds');
    const rendered = find(await helmTemplate('coffer', 'default', {}), 'CustomResourceDefinition');
    const files = readdirSync(join(REPO_ROOT, 'crds')).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml');
    expect(rendered).toHaveLength(files.length);
    for (const file of files) {
      const source = parse(readFileSync(join(REPO_ROOT, 'crds', file), 'utf8')) as Manifest;
      const copy = rendered.find((crd) => crd.metadata.name === source.metadata.name)!;
      expect(copy.spec, file).toEqual(source.spec);
      expect(copy.metadata.labels).toMatchObject(source.metadata.labels!);
    }
  });

  test('more than one replica without an external database fails rendering with a clear message', async () => {
    await expect(helmTemplate('coffer', 'default', { replicaCount: 2 })).rejects.toThrow(
      /replicaCount=2 needs an external PostgreSQL: set database.url or database.existingSecret/,
    );
    await expect(helmTemplate('coffer', 'default', { rbac: { scope: 'everything' } })).rejects.toThrow(/rbac.scope must be cluster or namespace/);
    await expect(helmTemplate('coffer', 'default', { remote: { enabled: true, clusterName: 'edge-1' } })).rejects.toThrow(/remote.enabled needs remote.server/);
    await expect(helmTemplate('coffer', 'default', { remote: { enabled: true, server: 'https://coffer.example.com' } })).rejects.toThrow(
      /remote.enabled needs remote.clusterName/,
    );
  });

  test.each(Object.keys(valueSets))('helm template (%s) → every object passes a server-side dry run', async (name) => {
    const { values, check } = valueSets[name]!;
    const ns = await namespace('pkg-helm');
    const objects = await helmTemplate('coffer', ns, values);
    check(objects, ns);
    expectHardened(one(objects, 'Deployment').spec.template.spec);
    for (const object of objects) {
      const scoped = !['CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding'].includes(object.kind);
      if (scoped) expect(object.metadata.namespace, `${object.kind} ${object.metadata.name}`).toBe(ns);
    }
    await dryRunAll(objects);
  });
});

// ---------------------------------------------------------------------------------------------
// deploy/ (kustomize base)

let deployObjects: Manifest[];
let deployBuilt: Promise<Manifest[]> | undefined;

/** `kustomize build deploy/`, once; its namespace coffer-system is created for real (the operator's Lease goes there). */
function deployBase(): Promise<Manifest[]> {
  deployBuilt ??= (async () => {
    const objects = parseManifests((await runTool('kustomize', ['build', join(REPO_ROOT, 'deploy')])).stdout);
    await raw.apply(one(objects, 'Namespace'), { fieldManager: 'coffer-packaging-test' });
    cleanups.unshift(() => admin.core.deleteNamespace({ name: 'coffer-system' }));
    deployObjects = objects;
    return objects;
  })();
  return deployBuilt;
}

/** deploy/'s ClusterRole and Role, bound to the user `operator`. */
let deployRbacBound: Promise<void> | undefined;
function bindDeployRbac(): Promise<void> {
  deployRbacBound ??= (async () => {
    const objects = await deployBase();
    await bindToOperatorUser(one(objects, 'ClusterRole'));
    await bindToOperatorUser(one(objects, 'Role'));
  })();
  return deployRbacBound;
}

describe('kustomize base deploy/', () => {
  beforeAll(async () => {
    await deployBase();
  });

  test('kustomize build deploy/ → namespace coffer-system and every object passes a server-side dry run', async () => {
    expect(deployObjects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ClusterRole/coffer-operator',
      'ClusterRoleBinding/coffer-operator',
      'CustomResourceDefinition/integrations.coffer.dev',
      'CustomResourceDefinition/secretimports.coffer.dev',
      'CustomResourceDefinition/secretsprojects.coffer.dev',
      'Deployment/coffer',
      'Namespace/coffer-system',
      'PersistentVolumeClaim/coffer-data',
      'Role/coffer-leader-election',
      'RoleBinding/coffer-leader-election',
      'Service/coffer',
      'ServiceAccount/coffer',
    ]);
    await dryRunAll(deployObjects);
  });

  test('deploy/operator/ (coffer operator --server): the same namespace, CRDs and RBAC, a hardened Deployment of `coffer operator` with no database, no keys and no Service; every object passes a server-side dry run', async () => {
    const objects = parseManifests((await runTool('kustomize', ['build', join(REPO_ROOT, 'deploy', 'operator')])).stdout);
    const names = (list: Manifest[]) => list.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(names(objects)).toEqual(
      [
        ...names(deployObjects).filter((name) => name !== 'Service/coffer' && name !== 'PersistentVolumeClaim/coffer-data'),
        'ClusterRoleBinding/coffer-auth-delegator',
      ].sort(),
    );
    // Kubernetes Auth: its own token is reviewed with itself
    expect(one(objects, 'ClusterRoleBinding', 'coffer-auth-delegator').roleRef).toMatchObject({ kind: 'ClusterRole', name: 'system:auth-delegator' });
    const deployment = one(objects, 'Deployment');
    expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate' });
    const pod = deployment.spec.template.spec;
    expectHardened(pod);
    expect(pod.volumes).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }]);
    expect(pod.containers[0].volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    const container = pod.containers[0];
    expect(container.args).toEqual(['operator']);
    expect(container.ports).toEqual([{ name: 'metrics', containerPort: 8081 }]);
    const env = new Map<string, any>(container.env.map((entry: { name: string }) => [entry.name, entry]));
    for (const gone of ['DATABASE_URL', 'COFFER_ENCRYPTION_KEY', 'COFFER_AUTH_SECRET', 'COFFER_DATA_DIR']) expect(env.has(gone), gone).toBe(false);
    expect(env.get('COFFER_SERVER').valueFrom.configMapKeyRef).toEqual({ name: 'coffer-operator', key: 'server' });
    expect(env.get('COFFER_CLUSTER_NAME').valueFrom.configMapKeyRef).toEqual({ name: 'coffer-operator', key: 'cluster-name' });
    expect(env.get('COFFER_CREDENTIALS_SECRET').value).toBe('coffer-operator-credentials');
    expect(env.get('COFFER_IDENTITY_ID').valueFrom.configMapKeyRef).toEqual({ name: 'coffer-operator', key: 'identity-id', optional: true });
    expect(one(objects, 'ClusterRole')).toEqual(one(deployObjects, 'ClusterRole'));
    await dryRunAll(objects);
  });

  test('deploy/reload/ (optional workload reload): a ClusterRole of list, watch and patch on the three workload kinds, bound to the ServiceAccount; every object passes a server-side dry run', async () => {
    const objects = parseManifests((await runTool('kustomize', ['build', join(REPO_ROOT, 'deploy', 'reload')])).stdout);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(['ClusterRole/coffer-operator-reload', 'ClusterRoleBinding/coffer-operator-reload']);
    expect(one(objects, 'ClusterRole').rules).toEqual([
      { apiGroups: ['apps'], resources: ['deployments', 'statefulsets', 'daemonsets'], verbs: ['list', 'watch', 'patch'] },
    ]);
    expect(one(objects, 'ClusterRoleBinding').subjects).toEqual([{ kind: 'ServiceAccount', name: 'coffer', namespace: 'coffer-system' }]);
    await dryRunAll(objects);
  });

  test('Deployment: probes on 8081, hardened, env from the Secret `coffer` (database-url optional), downward API, the data on a PersistentVolumeClaim', () => {
    const deployment = one(deployObjects, 'Deployment');
    expect(deployment.metadata.namespace).toBe('coffer-system');
    expect(deployment.spec.replicas).toBe(1);
    // the old pod lets go of the embedded database before the new one opens it
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    const pod = deployment.spec.template.spec;
    expectHardened(pod);
    const container = pod.containers[0];
    expect(container.image).toBe('ghcr.io/coffer-dev/coffer:0.1.0');
    expect(container.ports).toEqual([
      { name: 'http', containerPort: 8080 },
      { name: 'metrics', containerPort: 8081 },
    ]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    const env = envOf(container);
    expect(env.COFFER_ENCRYPTION_KEY).toEqual({ secretKeyRef: { name: 'coffer', key: 'encryption-key' } });
    expect(env.COFFER_AUTH_SECRET).toEqual({ secretKeyRef: { name: 'coffer', key: 'auth-secret' } });
    expect(env.DATABASE_URL).toEqual({ secretKeyRef: { name: 'coffer', key: 'database-url', optional: true } });
    expect(env.POD_NAMESPACE).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
    expect(env.POD_NAME).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(env.COFFER_HOST).toBe('0.0.0.0');
    // the V8 heap is sized for the memory limit
    expect(env.NODE_OPTIONS).toBe('--max-old-space-size=256 --max-semi-space-size=8');
    expect(container.resources.limits.memory).toBe('512Mi');
    expect(pod.volumes.map((v: any) => [v.name, Object.keys(v).filter((k) => k !== 'name')[0]])).toEqual([
      ['tmp', 'emptyDir'],
      ['data', 'persistentVolumeClaim'],
    ]);
    expect(pod.volumes[1].persistentVolumeClaim).toEqual({ claimName: 'coffer-data' });
    const claim = one(deployObjects, 'PersistentVolumeClaim', 'coffer-data');
    expect(claim.metadata.namespace).toBe('coffer-system');
    expect(claim.spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } });
    expect(container.volumeMounts).toEqual([
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'data', mountPath: '/data' },
    ]);
    expect(one(deployObjects, 'Service').spec).toMatchObject({
      type: 'ClusterIP',
      ports: [
        { name: 'http', port: 8080, targetPort: 'http' },
        { name: 'metrics', port: 8081, targetPort: 'metrics' },
      ],
    });
  });

  test('secret.example.yaml creates a Secret the Deployment can use (dry run), without a placeholder database-url (the embedded database)', async () => {
    const [secret] = parseManifests(readFileSync(join(REPO_ROOT, 'deploy', 'secret.example.yaml'), 'utf8'));
    expect(Object.keys(secret!.stringData).sort()).toEqual(['auth-secret', 'encryption-key']);
    await raw.apply(secret!, { dryRun: true });
  });

  test('the chart and deploy/ agree: image, version, RBAC rules', async () => {
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'));
    const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(chart.appVersion).toBe(pkg.version);
    expect(one(deployObjects, 'Deployment').spec.template.spec.containers[0].image).toBe(`${values.image.repository}:${chart.appVersion}`);
    const helmCluster = await helmTemplate('coffer', 'coffer-system', {});
    const helmNamespaced = await helmTemplate('coffer', 'coffer-system', { rbac: { scope: 'namespace' } });
    const rules = one(deployObjects, 'ClusterRole').rules;
    expect(one(helmCluster, 'ClusterRole').rules).toEqual(rules);
    expect(one(helmNamespaced, 'Role', 'coffer-operator').rules).toEqual(rules);
    expect(one(helmCluster, 'Role', 'coffer-leader-election').rules).toEqual(one(deployObjects, 'Role').rules);
    // reload.enabled adds exactly deploy/reload/'s rules; off (the default) the chart grants nothing on apps/*
    const reload = parseManifests((await runTool('kustomize', ['build', join(REPO_ROOT, 'deploy', 'reload')])).stdout);
    const helmReload = await helmTemplate('coffer', 'coffer-system', { reload: { enabled: true } });
    expect(one(helmReload, 'ClusterRole').rules).toEqual([...rules, ...one(reload, 'ClusterRole').rules]);
    expect(JSON.stringify(one(helmCluster, 'ClusterRole').rules)).not.toContain('apps');
  });
});

// ---------------------------------------------------------------------------------------------
// RBAC helpers

interface Access {
  verb: string;
  resource: string;
  group?: string;
  subresource?: string;
  /** '' = all namespaces */
  namespace?: string;
  name?: string;
}
const describeAccess = (a: Access) =>
  `${a.verb} ${a.group ? `${a.group}/` : ''}${a.resource}${a.subresource ? `/${a.subresource}` : ''}${a.name ? ` ${a.name}` : ''} in ${a.namespace || 'all namespaces'}`;

/** SelfSubjectAccessReview as the user `operator`. */
async function operatorMay(access: Access): Promise<boolean> {
  const review = await asOperator.kc.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
    body: {
      spec: {
        resourceAttributes: {
          verb: access.verb,
          group: access.group ?? '',
          resource: access.resource,
          subresource: access.subresource,
          namespace: access.namespace,
          name: access.name,
        },
      },
    },
  });
  return review.status?.allowed === true;
}

async function expectAccess(allowed: Access[], denied: Access[]): Promise<void> {
  // RBAC changes reach the authorizer's cache within moments
  await waitFor(`operator to be allowed to ${describeAccess(allowed[0]!)}`, () => operatorMay(allowed[0]!), { timeoutMs: 15_000 });
  const wrong: string[] = [];
  for (const access of allowed) if (!(await operatorMay(access))) wrong.push(`not allowed: ${describeAccess(access)}`);
  for (const access of denied) if (await operatorMay(access)) wrong.push(`allowed but not needed: ${describeAccess(access)}`);
  expect(wrong).toEqual([]);
}

/** Binds a (Cluster)Role to the user `operator`; removed again at the end of the file. */
async function bindToOperatorUser(role: Manifest, ns?: string): Promise<void> {
  const binding: Manifest = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: role.kind === 'ClusterRole' ? 'ClusterRoleBinding' : 'RoleBinding',
    metadata: { name: `${role.metadata.name}-test-user`, ...(role.kind === 'Role' ? { namespace: ns ?? role.metadata.namespace } : {}) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: role.kind, name: role.metadata.name },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'operator' }],
  };
  await raw.apply(role, { fieldManager: 'coffer-packaging-test', defaultNamespace: ns });
  await raw.apply(binding, { fieldManager: 'coffer-packaging-test' });
  cleanups.push(async () => {
    await raw.delete(binding);
    await raw.delete(role, ns);
  });
}

const KINDS = ['secretsprojects', 'secretimports', 'integrations'];

/** Everything the operator does (src/operator/kube-api.ts, informers.ts, leader-election.ts) in `ns`. */
function operatorNeeds(ns: string, watchScope: string, leaseNamespace: string): Access[] {
  return [
    ...KINDS.flatMap((resource) => [
      { verb: 'list', group: 'coffer.dev', resource, namespace: watchScope },
      { verb: 'watch', group: 'coffer.dev', resource, namespace: watchScope },
      { verb: 'patch', group: 'coffer.dev', resource, namespace: ns },
      { verb: 'update', group: 'coffer.dev', resource, subresource: 'status', namespace: ns },
      { verb: 'patch', group: 'coffer.dev', resource, subresource: 'status', namespace: ns },
      // the status writer's re-read after a conflicting write
      { verb: 'get', group: 'coffer.dev', resource, namespace: ns },
    ]),
    ...['secrets', 'configmaps'].flatMap((resource) => [
      { verb: 'list', resource, namespace: watchScope },
      { verb: 'watch', resource, namespace: watchScope },
      ...['get', 'create', 'patch', 'delete'].map((verb) => ({ verb, resource, namespace: ns })),
    ]),
    { verb: 'create', resource: 'events', namespace: ns },
    ...['get', 'create', 'update'].map((verb) => ({ verb, group: 'coordination.k8s.io', resource: 'leases', namespace: leaseNamespace })),
  ];
}

/** Verbs the operator never uses: none may be granted. */
function operatorDoesNotNeed(ns: string, leaseNamespace: string): Access[] {
  return [
    { verb: 'update', resource: 'secrets', namespace: ns },
    { verb: 'deletecollection', resource: 'secrets', namespace: ns },
    { verb: 'update', resource: 'configmaps', namespace: ns },
    { verb: 'list', resource: 'pods', namespace: ns },
    { verb: 'patch', group: 'apps', resource: 'deployments', namespace: ns },
    { verb: 'list', resource: 'namespaces' },
    { verb: 'delete', resource: 'events', namespace: ns },
    { verb: 'list', resource: 'events', namespace: ns },
    ...KINDS.flatMap((resource) => [
      { verb: 'create', group: 'coffer.dev', resource, namespace: ns },
      { verb: 'delete', group: 'coffer.dev', resource, namespace: ns },
      { verb: 'update', group: 'coffer.dev', resource, namespace: ns },
    ]),
    { verb: 'delete', group: 'coordination.k8s.io', resource: 'leases', namespace: leaseNamespace },
    { verb: 'list', group: 'coordination.k8s.io', resource: 'leases', namespace: leaseNamespace },
    { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: 'default' },
    { verb: 'get', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' },
    { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'rolebindings', namespace: ns },
  ];
}

// ---------------------------------------------------------------------------------------------
// The chart's bootstrap job: `coffer bootstrap --server --store-secret` with only its own Role

interface CofferRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCoffer(args: string[], env: Record<string, string>): Promise<CofferRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [COFFER_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('bootstrap job (coffer bootstrap --server --store-secret) with the chart’s bootstrap Role', () => {
  let server: CofferProcess;
  let ns: string;
  let elsewhere: string;
  const password = 'bootstrap job password';

  beforeAll(async () => {
    ns = await namespace('pkg-bootstrap');
    elsewhere = await namespace('pkg-bootstrap-denied');
    const dataDir = join(work, 'bootstrap-data');
    server = await startCoffer({ COFFER_DATA_DIR: dataDir, DATABASE_URL: '', COFFER_OPERATOR: 'false' });
    cleanups.push(() => stopCoffer(server));
    const rendered = await helmTemplate('coffer', ns, {});
    await bindToOperatorUser(one(rendered, 'Role', 'coffer-bootstrap'));
    await waitFor('the bootstrap Role to apply', () => operatorMay({ verb: 'update', resource: 'secrets', namespace: ns, name: 'coffer-admin' }));
  });

  const bootstrapArgs = (...extra: string[]) => ['bootstrap', '--server', server.api, '--store-secret', 'coffer-admin', ...extra];
  const bootstrapEnv = (podNamespace: string) => ({
    KUBECONFIG: operatorKubeconfig,
    POD_NAMESPACE: podNamespace,
    COFFER_BOOTSTRAP_EMAIL: 'admin@example.com',
    COFFER_BOOTSTRAP_PASSWORD: password,
    COFFER_BOOTSTRAP_ORGANIZATION: 'Packaging Org',
  });

  test('the Role grants exactly: create Secrets, get/update only coffer-admin', async () => {
    await expectAccess(
      [
        { verb: 'create', resource: 'secrets', namespace: ns },
        { verb: 'get', resource: 'secrets', namespace: ns, name: 'coffer-admin' },
        { verb: 'update', resource: 'secrets', namespace: ns, name: 'coffer-admin' },
      ],
      [
        { verb: 'get', resource: 'secrets', namespace: ns, name: 'coffer-keys' },
        { verb: 'update', resource: 'secrets', namespace: ns, name: 'coffer-keys' },
        { verb: 'list', resource: 'secrets', namespace: ns },
        { verb: 'delete', resource: 'secrets', namespace: ns, name: 'coffer-admin' },
        { verb: 'create', resource: 'secrets', namespace: elsewhere },
      ],
    );
  });

  test('where the Secret cannot be written, nothing is bootstrapped', async () => {
    const denied = await runCoffer(bootstrapArgs('--if-needed'), bootstrapEnv(elsewhere));
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain(`not allowed to create Secret ${elsewhere}/coffer-admin`);
    expect(denied.stderr).toContain('nothing was bootstrapped');
  });

  test('bootstraps through the API and stores the credentials in the Secret, never printing the token', async () => {
    // A Secret left from an earlier install is replaced (get + update of that one name).
    await admin.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'coffer-admin' }, stringData: { token: 'stale' } } });
    const run = await runCoffer(bootstrapArgs('--if-needed', '--timeout', '30s'), bootstrapEnv(ns));
    expect(run.code, run.stderr).toBe(0);
    const secret = await admin.core.readNamespacedSecret({ namespace: ns, name: 'coffer-admin' });
    const data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    expect(Object.keys(data).sort()).toEqual(['api-url', 'email', 'identity-id', 'identity-name', 'organization-id', 'organization-name', 'organization-slug', 'token']);
    expect(data).toMatchObject({ email: 'admin@example.com', 'organization-name': 'Packaging Org', 'api-url': server.api });
    expect(data.token).not.toBe('stale');
    expect(run.stdout + run.stderr).not.toContain(data.token);
    expect(run.stdout).toContain(`Secret ${ns}/coffer-admin`);
    expect(run.stdout).toContain(data['identity-id']);
    // the stored token works against the API
    const projects = await callCoffer(server, 'GET', '/api/v1/workspace', data.token);
    expect(projects.status).toBe(200);
    const resourceVersion = secret.metadata!.resourceVersion;

    // Run again (a re-run job): --if-needed is a no-op that leaves the Secret alone ...
    const again = await runCoffer(bootstrapArgs('--if-needed'), bootstrapEnv(ns));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('already set up');
    expect((await admin.core.readNamespacedSecret({ namespace: ns, name: 'coffer-admin' })).metadata!.resourceVersion).toBe(resourceVersion);
    // ... and without it, an error.
    const refused = await runCoffer(bootstrapArgs(), bootstrapEnv(ns));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('already been set up');
  });
});

// ---------------------------------------------------------------------------------------------
// RBAC: SelfSubjectAccessReviews as user `operator`

describe('RBAC granted by the chart (namespace scope) and deploy/ (cluster scope)', () => {
  test('rbac.scope=namespace: everything the operator needs in the release namespace, nothing outside it', async () => {
    const ns = await namespace('pkg-rbac-ns');
    const other = await namespace('pkg-rbac-other');
    const rendered = await helmTemplate('coffer', ns, { rbac: { scope: 'namespace' } });
    await bindToOperatorUser(one(rendered, 'Role', 'coffer-operator'));
    await bindToOperatorUser(one(rendered, 'Role', 'coffer-leader-election'));
    await expectAccess(operatorNeeds(ns, ns, ns), [
      ...operatorDoesNotNeed(ns, ns),
      // nothing cluster-wide, nothing in another namespace
      { verb: 'list', resource: 'secrets', namespace: '' },
      { verb: 'watch', group: 'coffer.dev', resource: 'integrations', namespace: '' },
      { verb: 'get', resource: 'secrets', namespace: other },
      { verb: 'list', group: 'coffer.dev', resource: 'secretsprojects', namespace: other },
      { verb: 'create', resource: 'events', namespace: other },
      { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: other },
    ]);
  });

  test('deploy/: every verb the operator uses is granted cluster-wide; verbs it does not use are not', async () => {
    const ns = await namespace('pkg-rbac-cluster');
    await bindDeployRbac();
    await expectAccess(operatorNeeds(ns, '', 'coffer-system'), [
      ...operatorDoesNotNeed(ns, 'coffer-system'),
      { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: ns },
      { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: ns },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// The operator with exactly deploy/'s RBAC

describe('the operator running as user `operator` with only deploy/’s ClusterRole and Role', () => {
  const cluster = clusterClients();
  let ns: string;
  let api: CofferProcess;
  let operator: CofferProcess;
  let token: string;
  let projectId: string;
  const slug = `pkg-${Date.now().toString(36)}`;
  const call = (method: string, path: string, body?: unknown) => callCoffer(api, method, path, token, body);
  const createSecret = (key: string, value: string, environment = 'dev', secretPath = '/') =>
    call('POST', `/api/v3/secrets/raw/${key}`, { workspaceId: projectId, environment, secretPath, secretValue: value });

  beforeAll(async () => {
    ns = await namespace('pkg-operator');
    await bindDeployRbac();
    await waitFor('deploy/ RBAC to apply', () => operatorMay({ verb: 'watch', group: 'coffer.dev', resource: 'integrations', namespace: '' }));
    // The Lease goes to coffer-system, where deploy/'s Role allows it.
    const environment = await cofferEnvironment('coffer-system');
    ({ api, token } = await startApi(environment));
    cleanups.push(() => stopCoffer(api));
    operator = await startOperatorProcess(environment, { KUBECONFIG: operatorKubeconfig });
    cleanups.push(() => stopCoffer(operator));
  }, 180_000);

  afterAll(async () => {
    // Let the operator remove its finalizers before it stops.
    for (const [plural, name] of [
      ['integrations', 'app'],
      ['secretimports', 'shared'],
      ['secretsprojects', 'shop'],
    ] as const) {
      await cluster.remove(plural, ns, name).catch(() => {});
    }
    await waitFor(
      'the custom resources to be finalized',
      async () => {
        for (const plural of KINDS) {
          const list = (await cluster.custom.listNamespacedCustomObject({ group: 'coffer.dev', version: 'v1alpha1', namespace: ns, plural })) as { items: unknown[] };
          if (list.items.length > 0) return false;
        }
        return true;
      },
      { timeoutMs: 30_000 },
    ).catch((error: unknown) => console.warn(String(error)));
  });

  function waitForData(name: string, expected: Record<string, string>, what: string) {
    return waitFor(
      what,
      async () => {
        const data = await cluster.secretData(ns, name);
        if (JSON.stringify(data) === JSON.stringify(expected)) return data;
        throw new Error(`data keys ${JSON.stringify(Object.keys(data ?? {}).sort())}`);
      },
      { timeoutMs: 60_000 },
    );
  }

  test('SecretsProject + SecretImport + Integration → the Secret with the expected keys; an API change reaches it; deleting the Integration deletes it', async () => {
    onTestFailed(() => console.error(`operator output (tail):\n${operator.output.join('').slice(-6000)}`));
    await cluster.apply('secretsprojects', ns, { kind: 'SecretsProject', metadata: { name: 'shop' }, spec: { name: 'Shop', slug } });
    projectId = (await cluster.waitReady('secretsprojects', ns, 'shop')).status.projectId;

    expect((await call('POST', '/api/v1/folders', { workspaceId: projectId, environment: 'staging', name: 'shared' })).status).toBe(200);
    expect((await createSecret('SHARED_TOKEN', 'from-staging', 'staging', '/shared')).status).toBe(200);
    expect((await createSecret('DB_PASSWORD', 's3cret')).status).toBe(200);
    expect((await createSecret('API_URL', 'https://api.example.com')).status).toBe(200);

    await cluster.apply('secretimports', ns, {
      kind: 'SecretImport',
      metadata: { name: 'shared' },
      spec: { projectRef: { name: 'shop' }, environment: 'dev', path: '/', import: { environment: 'staging', path: '/shared' } },
    });
    await cluster.waitReady('secretimports', ns, 'shared');
    await cluster.apply('integrations', ns, {
      kind: 'Integration',
      metadata: { name: 'app' },
      spec: { projectRef: { name: 'shop' }, environment: 'dev', target: { name: 'app-secrets' } },
    });
    await cluster.waitReady('integrations', ns, 'app', 'Synced');
    await waitForData('app-secrets', { API_URL: 'https://api.example.com', DB_PASSWORD: 's3cret', SHARED_TOKEN: 'from-staging' }, 'the first sync');
    const secret = (await cluster.secret(ns, 'app-secrets'))!;
    expect(secret.metadata!.labels!['app.kubernetes.io/managed-by']).toBe('coffer');
    expect(secret.metadata!.managedFields!.some((field) => field.manager === 'coffer' && field.operation === 'Apply')).toBe(true);

    // a change through the API reaches the Secret
    expect((await call('PATCH', '/api/v3/secrets/raw/DB_PASSWORD', { workspaceId: projectId, environment: 'dev', secretPath: '/', secretValue: 'rotated' })).status).toBe(
      200,
    );
    await waitForData('app-secrets', { API_URL: 'https://api.example.com', DB_PASSWORD: 'rotated', SHARED_TOKEN: 'from-staging' }, 'the change to arrive');

    // Events (create) and the Lease (get/create/update in coffer-system) worked with this role too
    const events = await waitFor('a Synced Event', async () => {
      const list = await admin.core.listNamespacedEvent({ namespace: ns });
      const synced = list.items.filter((event) => event.reason === 'Synced' && event.involvedObject.name === 'app');
      return synced.length > 0 ? synced : false;
    });
    expect(events[0]!.source?.component).toBe('coffer-operator');
    const lease = await admin.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: 'coffer-system', name: 'coffer-operator' });
    expect(lease.spec?.holderIdentity).toBeTruthy();

    // deleting the Integration deletes the Secret
    await cluster.remove('integrations', ns, 'app');
    await waitFor('the Secret to be deleted', async () => (await cluster.secret(ns, 'app-secrets')) === undefined, { timeoutMs: 60_000 });

    // and no call of the operator was refused
    expect(operator.output.join('')).not.toMatch(/User \\?"?operator\\?"? cannot/);
  });

  test('workload reload is off without deploy/reload/: an Integration asking for it says ReloadForbidden, its Secret syncs, the Deployment is never touched, and the operator stays ready', async () => {
    onTestFailed(() => console.error(`operator output (tail):\n${operator.output.join('').slice(-6000)}`));
    const labels = { app: 'reader' };
    await admin.apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'reader', annotations: { 'coffer.dev/reload': 'true' } },
        spec: {
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'example.com/app:1', envFrom: [{ secretRef: { name: 'reload-secrets' } }] }] } },
        },
      },
    });
    await cluster.apply('integrations', ns, {
      kind: 'Integration',
      metadata: { name: 'reloading' },
      spec: { projectRef: { name: 'shop' }, environment: 'dev', target: { name: 'reload-secrets' }, reload: { workloads: [{ kind: 'Deployment', name: 'reader' }] } },
    });
    const resource = await cluster.waitReady('integrations', ns, 'reloading', 'Synced');
    const reloaded = await waitFor('Reloaded=False ReloadForbidden', async () => {
      const conditions = (await cluster.get('integrations', ns, 'reloading')).status?.conditions ?? [];
      return conditions.find((condition: { type: string; reason: string }) => condition.type === 'Reloaded' && condition.reason === 'ReloadForbidden');
    });
    expect(reloaded.status).toBe('False');
    expect(reloaded.message).toContain('apps');
    expect(resource.status.syncedRevision).toEqual(expect.any(Number));
    expect((await cluster.secretData(ns, 'reload-secrets'))?.DB_PASSWORD).toBe('rotated');
    expect((await call('PATCH', '/api/v3/secrets/raw/DB_PASSWORD', { workspaceId: projectId, environment: 'dev', secretPath: '/', secretValue: 'again' })).status).toBe(
      200,
    );
    await waitFor('the change to arrive', async () => (await cluster.secretData(ns, 'reload-secrets'))?.DB_PASSWORD === 'again');
    const deployment = await admin.apps.readNamespacedDeployment({ namespace: ns, name: 'reader' });
    expect(deployment.metadata?.generation).toBe(1);
    expect(Object.keys(deployment.metadata?.annotations ?? {}).filter((key) => key.startsWith('checksum.coffer.dev/'))).toEqual([]);
    expect((await fetch(`${operator.probes}/readyz`)).status).toBe(200);
    expect(operator.output.join('')).not.toMatch(/User \\?"?operator\\?"? cannot/);
    await cluster.remove('integrations', ns, 'reloading');
  });
});
