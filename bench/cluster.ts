/**
 * The cluster side of the operator benchmarks: the test control plane (etcd + kube-apiserver, no
 * controller manager), a fleet of projects / SecretsProjects / Integrations created before the
 * measured operator starts, apiserver and operator metrics, and a watch that tells when every
 * Integration is Synced.
 */
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, makeInformer, type KubernetesObject, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import { type ControlPlane, ensureTestBinaries, startControlPlane } from '../test/k8s/controlplane.ts';
import { apiRequest, call, cpuSeconds, log, type Server } from './common.ts';

export const GROUP = 'coffer.dev';
export const VERSION = 'v1alpha1';

export interface Cluster {
  plane: ControlPlane;
  kc: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  custom: CustomObjectsApi;
}

/** `crdDirs`: where the CRDs come from (another checkout's, for a commit measured beside this one); this checkout's by default. */
export async function startCluster(options: { crdDirs?: string[] } = {}): Promise<Cluster> {
  const binDir = await ensureTestBinaries({ log: (message) => log(`[control plane] ${message}`) });
  // No controller manager: nothing here needs garbage collection, and it would take CPU from the measurement.
  const plane = await startControlPlane({
    binDir,
    ...(options.crdDirs ? { crdDirs: options.crdDirs } : {}),
    controllerManager: false,
    profiling: Boolean(process.env.BENCH_APISERVER_PROF),
    log: (message) => log(`[control plane] ${message}`),
  });
  const kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  kc.setCurrentContext('admin');
  return { plane, kc, core: kc.makeApiClient(CoreV1Api), apps: kc.makeApiClient(AppsV1Api), custom: kc.makeApiClient(CustomObjectsApi) };
}

/** Runs `work` over `items` with at most `limit` at a time. */
export async function bounded<T>(items: T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index]!, index);
      }
    }),
  );
}

async function retrying<T>(what: string, work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts) throw new Error(`${what}: ${(error as Error).message}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The fleet

export interface FleetShape {
  /** Projects p-0 … p-(projects-1); project j lives in namespace j % namespaces. */
  projects: number;
  namespaces: number;
  integrationsPerProject: number;
  secretsPerProject: number;
}

export const namespaceName = (index: number) => `bench-ns-${index}`;
export const projectSlug = (index: number) => `bench-p-${String(index).padStart(4, '0')}`;
export const integrationName = (project: number, index: number) => `i-${project}-${index}`;
export const targetName = (project: number, index: number) => `s-${project}-${index}`;

/**
 * Grants the namespace the project; false when the server has no namespace grants at all (the route unknown: a
 * commit from before them, measured by bench:scale --commit, whose SecretsProjects claim projects without one).
 */
async function grantNamespace(api: Server, token: string, projectId: string, namespace: string): Promise<boolean> {
  const path = `/api/v1/workspace/${projectId}/namespace-grants`;
  const { ok, status, text } = await apiRequest(api, 'POST', path, token, { namespace });
  if (ok) return true;
  if (status === 404 && /^Route POST \S+ not found$/.test(JSON.parse(text).message ?? '')) {
    log('fleet: this server has no namespace grants (no such route): its SecretsProjects claim their projects without one');
    return false;
  }
  throw new Error(`POST ${path} → ${status} ${text.slice(0, 500)}`);
}

/**
 * Creates what is missing of the fleet: projects (through the API, with secrets in dev at /),
 * namespaces, one SecretsProject per project (claiming it by slug, with a namespace grant) and its Integrations.
 * What `from` describes is taken as existing already.
 */
export async function createFleet(
  cluster: Cluster,
  api: Server,
  token: string,
  shape: FleetShape,
  from: Omit<FleetShape, 'secretsPerProject'> = { projects: 0, namespaces: 0, integrationsPerProject: 0 },
) {
  const started = Date.now();
  const projects = Array.from({ length: shape.projects - from.projects }, (_, index) => from.projects + index);
  const projectIds = new Map<number, string>();
  let grants = true;
  await bounded(projects, 4, async (index) => {
    const { project } = await call(api, 'POST', '/api/v2/workspace', token, { projectName: `Bench ${index}`, slug: projectSlug(index) });
    projectIds.set(index, project.id);
    // a SecretsProject claims an existing project only with its namespace's grant
    if (grants) grants = await grantNamespace(api, token, project.id, namespaceName(index % shape.namespaces));
    const secrets = Array.from({ length: shape.secretsPerProject }, (_, key) => ({ secretKey: `KEY_${key}`, secretValue: `value-${index}-${key}` }));
    if (secrets.length > 0) await call(api, 'POST', '/api/v3/secrets/batch/raw', token, { workspaceId: project.id, environment: 'dev', secretPath: '/', secrets });
  });
  log(`fleet: ${projects.length} projects through the API in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  for (let index = from.namespaces; index < shape.namespaces; index++) {
    await retrying('namespace', () => cluster.core.createNamespace({ body: { metadata: { name: namespaceName(index), labels: { 'coffer.dev/bench': 'true' } } } }));
  }
  const create = (namespace: string, plural: string, body: object) =>
    retrying(`create ${plural}`, () =>
      cluster.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, body: { apiVersion: `${GROUP}/${VERSION}`, ...body } }),
    );
  await bounded(projects, 16, async (index) => {
    await create(namespaceName(index % shape.namespaces), 'secretsprojects', {
      kind: 'SecretsProject',
      metadata: { name: `p-${index}` },
      spec: { name: `Bench ${index}`, slug: projectSlug(index) },
    });
  });
  const integrations = Array.from({ length: shape.projects }, (_, project) => project).flatMap((project) => {
    const first = project < from.projects ? from.integrationsPerProject : 0;
    return Array.from({ length: Math.max(0, shape.integrationsPerProject - first) }, (_, index) => [project, first + index] as const);
  });
  let done = 0;
  await bounded(integrations, 16, async ([project, index]) => {
    await create(namespaceName(project % shape.namespaces), 'integrations', {
      kind: 'Integration',
      metadata: { name: integrationName(project, index) },
      spec: { projectRef: { name: `p-${project}` }, environment: 'dev', target: { name: targetName(project, index) } },
    });
    if (++done % 1000 === 0) log(`fleet: ${done}/${integrations.length} Integrations created`);
  });
  log(`fleet: ${projects.length} SecretsProjects and ${integrations.length} Integrations in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return projectIds;
}

export const workloadName = (project: number, index: number) => `w-${project}-${index}`;

/**
 * Gives each of a project's Integrations a Deployment that reads `key` of its Secret (env valueFrom)
 * and names it in spec.reload with no debounce: every change of the key rolls them.
 */
export async function addReloadingWorkloads(cluster: Cluster, shape: Pick<FleetShape, 'namespaces' | 'integrationsPerProject'>, project: number, key: string) {
  const namespace = namespaceName(project % shape.namespaces);
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  for (let index = 0; index < shape.integrationsPerProject; index++) {
    const labels = { app: workloadName(project, index) };
    const env = [{ name: key, valueFrom: { secretKeyRef: { name: targetName(project, index), key } } }];
    await cluster.apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: workloadName(project, index) },
        spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'example.com/app:1', env }] } } },
      },
    });
    await cluster.custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace,
        plural: 'integrations',
        name: integrationName(project, index),
        body: { spec: { reload: { workloads: [{ kind: 'Deployment', name: workloadName(project, index) }], debounce: '0s' } } },
      },
      mergePatch,
    );
  }
}

/** Watches one Deployment's pod template annotation and resolves waiters when it changes from the value they name. */
export async function watchPodTemplateAnnotation(cluster: Cluster, namespace: string, name: string, annotation: string) {
  let current: { value: string | undefined; at: number } | undefined;
  const waiters = new Set<{ from: string | undefined; resolve: (at: number) => void }>();
  const controller = await new Watch(cluster.kc).watch(
    `/apis/apps/v1/namespaces/${namespace}/deployments`,
    { fieldSelector: `metadata.name=${name}` },
    (_phase, deployment) => {
      const at = performance.now();
      const value: string | undefined = deployment?.spec?.template?.metadata?.annotations?.[annotation];
      if (current?.value === value) return;
      current = { value, at };
      for (const waiter of waiters) {
        if (waiter.from === value) continue;
        waiters.delete(waiter);
        waiter.resolve(at);
      }
    },
    () => {},
  );
  return {
    /** The annotation's value now (as the watch last saw it). */
    value: () => current?.value,
    /** performance.now() at which the annotation was seen holding something else than `from`. */
    untilChangedFrom(from: string | undefined, timeoutMs: number): Promise<number> {
      if (current && current.value !== from) return Promise.resolve(current.at);
      return new Promise((resolve, reject) => {
        const waiter = {
          from,
          resolve: (at: number) => {
            clearTimeout(timer);
            resolve(at);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`Deployment ${namespace}/${name} was not rolled within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    stop: () => controller.abort(),
  };
}

// ---------------------------------------------------------------------------------------------
// Watching Integrations

interface IntegrationObject extends KubernetesObject {
  status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] };
}

function isSynced(resource: IntegrationObject): boolean {
  const synced = resource.status?.conditions?.find((condition) => condition.type === 'Synced');
  return synced?.status === 'True' && resource.status?.observedGeneration === resource.metadata?.generation;
}

/** An informer over every Integration in the cluster: how many exist and how many are Synced. */
export async function watchIntegrations(cluster: Cluster) {
  const path = `/apis/${GROUP}/${VERSION}/integrations`;
  const list = () => cluster.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'integrations' });
  const informer = makeInformer<IntegrationObject>(cluster.kc, path, list as never);
  informer.on('error', () => setTimeout(() => void informer.start().catch(() => {}), 1000));
  await informer.start();
  const counts = () => {
    const all = informer.list();
    return { total: all.length, synced: all.filter(isSynced).length };
  };
  return {
    counts,
    /** Resolves when `expected` Integrations exist and all are Synced; ms since `since`. */
    async allSynced(expected: number, since: number, timeoutMs: number, progress?: () => string): Promise<number> {
      let lastLog = Date.now();
      for (;;) {
        const { total, synced } = counts();
        if (total >= expected && synced >= expected) return Date.now() - since;
        if (Date.now() - since > timeoutMs) throw new Error(`only ${synced}/${expected} Integrations Synced after ${timeoutMs} ms`);
        if (Date.now() - lastLog > 10_000) {
          lastLog = Date.now();
          log(`  ${synced}/${expected} Synced after ${((Date.now() - since) / 1000).toFixed(0)} s${progress ? `; ${progress()}` : ''}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    stop: () => informer.stop(),
  };
}

/** How many Integrations exist and how many are Synced, by a paginated LIST (no watch kept open). */
export async function countIntegrations(cluster: Cluster): Promise<{ total: number; synced: number }> {
  let total = 0;
  let synced = 0;
  let _continue: string | undefined;
  do {
    const page = (await cluster.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'integrations', limit: 1000, _continue })) as {
      items: IntegrationObject[];
      metadata: { continue?: string };
    };
    total += page.items.length;
    synced += page.items.filter(isSynced).length;
    _continue = page.metadata.continue || undefined;
  } while (_continue);
  return { total, synced };
}

/** Watches one Secret and resolves waiters when its key holds the value they wait for. */
export async function watchSecretValue(cluster: Cluster, namespace: string, name: string, key: string) {
  const waiters = new Map<string, (at: number) => void>();
  const seen = new Map<string, number>();
  const controller = await new Watch(cluster.kc).watch(
    `/api/v1/namespaces/${namespace}/secrets`,
    { fieldSelector: `metadata.name=${name}` },
    (_phase, secret) => {
      const at = performance.now();
      const encoded = secret?.data?.[key];
      if (!encoded) return;
      const value = Buffer.from(encoded, 'base64').toString('utf8');
      seen.set(value, at);
      waiters.get(value)?.(at);
      waiters.delete(value);
    },
    () => {},
  );
  return {
    /** performance.now() at which the Secret was seen holding `value`. */
    until(value: string, timeoutMs: number): Promise<number> {
      const already = seen.get(value);
      if (already !== undefined) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`Secret ${namespace}/${name} did not get the value within ${timeoutMs} ms`)), timeoutMs);
        waiters.set(value, (at) => {
          clearTimeout(timer);
          resolve(at);
        });
      });
    },
    stop: () => controller.abort(),
  };
}

// ---------------------------------------------------------------------------------------------
// Metrics

/** Prometheus text → sum of each series of `metric`, keyed by the chosen labels. */
export function sumMetric(text: string, metric: string, labels: string[]): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`) && !line.startsWith(`${metric} `)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const labelText = /\{(.*)\}/.exec(line)?.[1] ?? '';
    const found = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1], match[2]]));
    const key = labels.map((label) => found[label] ?? '').join(' ');
    sums.set(key, (sums.get(key) ?? 0) + value);
  }
  return sums;
}

/** kube-apiserver's own request counts (apiserver_request_total), by verb and resource. */
export function apiserverRequests(cluster: Cluster): Promise<Map<string, number>> {
  const url = new URL('/metrics', cluster.plane.server);
  return new Promise((resolve, reject) => {
    const request = https.get(url, { ca: cluster.plane.caPem, headers: { authorization: `Bearer ${cluster.plane.tokens.admin}` } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve(sumMetric(body, 'apiserver_request_total', ['verb', 'resource', 'subresource'])));
    });
    request.on('error', reject);
  });
}

export function difference(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const result = new Map<string, number>();
  for (const [key, value] of after) {
    const delta = value - (before.get(key) ?? 0);
    if (delta > 0) result.set(key, delta);
  }
  return result;
}

export const total = (counts: Map<string, number>, filter: (key: string) => boolean = () => true) =>
  [...counts].filter(([key]) => filter(key)).reduce((sum, [, value]) => sum + value, 0);

/**
 * The operator process's metrics, only those named when `names` is given: the bench polls every half second,
 * and the whole text (three series per condition of every resource) would have the measured process render
 * 9 MB per poll at 10,000 Integrations, a cost that grows with the fleet and is not the operator's.
 */
export async function operatorMetrics(server: Server, names?: readonly string[]): Promise<string> {
  const query = names ? `?${names.map((name) => `name[]=${encodeURIComponent(name)}`).join('&')}` : '';
  return (await fetch(`${server.probes}/metrics${query}`)).text();
}

/** CPU seconds so far of the control plane's etcd and kube-apiserver (Linux /proc: the processes whose command line names the plane's directory). */
export function controlPlaneCpuSeconds(cluster: Cluster): Map<string, number> {
  const seconds = new Map<string, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!command.some((argument) => argument.includes(cluster.plane.dir))) continue;
      const name = path.basename(command[0]!);
      if (name === 'etcd' || name === 'kube-apiserver') seconds.set(name, (seconds.get(name) ?? 0) + cpuSeconds(Number(entry)));
    } catch {
      // ended since it was listed
    }
  }
  return seconds;
}

/** A CPU profile of the kube-apiserver over the next `seconds` (pprof format, for `go tool pprof`); needs BENCH_APISERVER_PROF at startCluster. */
export function apiserverProfile(cluster: Cluster, seconds: number, file: string): Promise<void> {
  const url = new URL(`/debug/pprof/profile?seconds=${seconds}`, cluster.plane.server);
  return new Promise((resolve, reject) => {
    const request = https.get(url, { ca: cluster.plane.caPem, headers: { authorization: `Bearer ${cluster.plane.tokens.admin}` } }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`apiserver profile: HTTP ${response.statusCode}`));
        return;
      }
      response.pipe(createWriteStream(file)).on('finish', resolve).on('error', reject);
    });
    request.on('error', reject);
  });
}

/**
 * How big one synced Integration and its Secret are as the apiserver serves them (JSON, managedFields included):
 * the apiserver and etcd spend per byte on every write and watch event, so a richer object shows here first.
 */
export async function storedSizes(cluster: Cluster, namespace: string, integration: string, secret: string): Promise<string> {
  const describe = (object: { metadata?: { managedFields?: unknown[]; annotations?: object; labels?: object } }) => {
    const { managedFields = [], annotations = {}, labels = {} } = object.metadata ?? {};
    const withoutFields = { ...object, metadata: { ...object.metadata, managedFields: undefined } };
    return `${JSON.stringify(object).length} bytes (${JSON.stringify(withoutFields).length} without its ${managedFields.length} managedFields entries; ${Object.keys(labels).length} labels, ${Object.keys(annotations).length} annotations)`;
  };
  const resource = await cluster.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'integrations', name: integration });
  const target = await cluster.core.readNamespacedSecret({ namespace, name: secret });
  return `Integration ${describe(resource as object)}; its Secret ${describe(target)}`;
}
