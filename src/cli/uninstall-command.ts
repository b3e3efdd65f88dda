import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '../kubernetes/client-node.ts';
import { FINALIZER, GROUP, KINDS, type KindName, VERSION } from '../operator/resources.ts';
import { parseDuration } from '../validation/duration.ts';
import type { CommandSpec } from './command.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { kubeFailureReason, loadKubeConfig } from './kube-config.ts';

export const uninstallCommand: CommandSpec = {
  name: 'uninstall',
  summary: 'delete every Coffer resource from the cluster, letting the operator clean up (or releasing its finalizers when it is gone)',
  description:
    'The first step of removing Coffer from a cluster, before the operator and the CRDs: deletes every Integration, SecretImport and ' +
    'SecretsProject (in --namespace, or in all namespaces) and waits for them to go while the operator cleans up after each (an Owner ' +
    "Secret goes with its Integration, a Merge Integration's keys are taken out, SecretsProjects with deletionPolicy Delete delete their " +
    'projects; an Owner or Orphan Integration has no finalizer: it goes at once, and the operator drops its record when it sees it go). ' +
    'With the operator already gone, nothing removes the coffer.dev/finalizer and the resources that have one, and so their namespaces, stay ' +
    'Terminating: --release-finalizers then removes it from what is left after --timeout, and the resources go without that clean-up (an Owner ' +
    "Secret is still deleted by Kubernetes' garbage collector; Orphan and Merge Secrets stay as they are; nothing changes in Coffer). Uses the " +
    'kubeconfig as kubectl does (KUBECONFIG, ~/.kube/config, or the in-cluster service account).',
  flags: [
    { flags: '-n, --namespace <name>', description: 'only this namespace (default: all namespaces)' },
    { flags: '--timeout <duration>', description: 'how long to wait for the operator to clean up (default 60s)' },
    { flags: '--release-finalizers', description: 'remove coffer.dev/finalizer from what is still there after --timeout (use when the operator is gone)' },
  ],
  examples: ['coffer uninstall', 'coffer uninstall --namespace shop --timeout 2m', 'coffer uninstall --release-finalizers   # the operator is already gone'],
  run: uninstall,
};

/** Integrations first: their clean-up reads the projects that SecretsProjects may delete. */
const ORDER: KindName[] = ['Integration', 'SecretImport', 'SecretsProject'];

interface Left {
  kind: KindName;
  namespace: string;
  name: string;
  finalizers: string[];
}

async function uninstall(flags: Record<string, unknown>): Promise<void> {
  const timeoutMs = typeof flags.timeout === 'string' ? parseDuration(flags.timeout) : 60_000;
  if (timeoutMs === undefined) throw new CliError(`--timeout must be a duration such as 30s or 5m, not '${String(flags.timeout)}'`, EXIT.usage);
  const namespace = typeof flags.namespace === 'string' ? flags.namespace : undefined;
  const api = customObjects();
  const where = namespace ? `namespace ${namespace}` : 'all namespaces';
  for (const kind of ORDER) {
    const found = await listLeft(api, kind, namespace);
    for (const resource of found) await deleteResource(api, resource);
    process.stdout.write(`deleting ${found.length} ${KINDS[kind].plural} in ${where}\n`);
  }
  let left = await waitForNone(api, namespace, timeoutMs);
  if (left.length > 0 && flags['release-finalizers']) {
    for (const resource of left) {
      await releaseFinalizer(api, resource);
      process.stdout.write(`released ${FINALIZER} of ${resource.kind} ${resource.namespace}/${resource.name} (no clean-up by the operator)\n`);
    }
    left = await waitForNone(api, namespace, timeoutMs);
  }
  if (left.length > 0) {
    const names = left.map((resource) => `${resource.kind} ${resource.namespace}/${resource.name} (finalizers: ${resource.finalizers.join(', ') || 'none'})`);
    throw new CliError(
      `${left.length} Coffer resources are still there after ${timeoutMs / 1000} s: ${names.join('; ')}. Is the operator running? ` +
        'If it is gone, run coffer uninstall --release-finalizers.',
      EXIT.failed,
    );
  }
  process.stdout.write(`no Coffer resources left in ${where}; next remove the operator, then the CRDs (README, "Uninstall")\n`);
}

function customObjects(): CustomObjectsApi {
  return loadKubeConfig().kubeConfig.makeApiClient(CustomObjectsApi);
}

interface Listed {
  items: { metadata: { name: string; namespace: string; finalizers?: string[] } }[];
}

async function listLeft(api: CustomObjectsApi, kind: KindName, namespace: string | undefined): Promise<Left[]> {
  const { plural } = KINDS[kind];
  const list = (await kubeCall(
    `list ${plural}`,
    namespace
      ? api.listNamespacedCustomObject({ group: GROUP, version: VERSION, plural, namespace })
      : api.listClusterCustomObject({ group: GROUP, version: VERSION, plural }),
  )) as Listed;
  return list.items.map(({ metadata }) => ({ kind, namespace: metadata.namespace, name: metadata.name, finalizers: metadata.finalizers ?? [] }));
}

async function deleteResource(api: CustomObjectsApi, resource: Left): Promise<void> {
  const { plural } = KINDS[resource.kind];
  await kubeCall(
    `delete ${resource.kind} ${resource.namespace}/${resource.name}`,
    api.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, plural, namespace: resource.namespace, name: resource.name }),
  );
}

async function releaseFinalizer(api: CustomObjectsApi, resource: Left): Promise<void> {
  const { plural } = KINDS[resource.kind];
  const finalizers = resource.finalizers.filter((finalizer) => finalizer !== FINALIZER);
  await kubeCall(
    `release the finalizer of ${resource.kind} ${resource.namespace}/${resource.name}`,
    api.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, plural, namespace: resource.namespace, name: resource.name, body: { metadata: { finalizers } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    ),
  );
}

/** Polls until no Coffer resource is left (answers []) or the time is up (answers what is left). */
async function waitForNone(api: CustomObjectsApi, namespace: string | undefined, timeoutMs: number): Promise<Left[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = (await Promise.all(ORDER.map((kind) => listLeft(api, kind, namespace)))).flat();
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000, Math.max(0, deadline - Date.now()))));
  }
}

/** A Kubernetes call; a 404 (already gone, or the CRD is not installed) is nothing to do, other failures name what was tried. */
async function kubeCall<T>(what: string, call: Promise<T>): Promise<T | { items: [] }> {
  try {
    return await call;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return { items: [] };
    throw new CliError(`cannot ${what}: ${kubeFailureReason(error)}`, EXIT.failed);
  }
}
