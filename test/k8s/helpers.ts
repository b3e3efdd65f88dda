/**
 * Helpers for tests that run against the real control plane started by test/k8s/global-setup.ts.
 *
 *   const kubeconfig = inject('kubeconfig');
 *   const { core, custom } = kubeClients(kubeconfig);            // user `admin` (system:masters)
 *   const asOperator = kubeClients(kubeconfig, 'operator');       // RBAC applies
 *   const ns = await createTestNamespace('my-test', kubeconfig);  // { name, cleanup }
 *   afterAll(() => ns.cleanup());
 *   await waitFor('secret to be deleted', async () => (await exists()) ? false : true, { timeoutMs: 60_000 });
 *
 * Isolation: each test file works in its own namespace (generateName); cluster-scoped fixtures
 * (CRDs) are installed once by the global setup.
 */
import { ApiextensionsV1Api, AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import { inject } from 'vitest';

export type KubeUser = 'admin' | 'operator';

export interface KubeClients {
  kc: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  custom: CustomObjectsApi;
  ext: ApiextensionsV1Api;
  objects: KubernetesObjectApi;
}

/** API clients for the test cluster as `admin` (system:masters) or `operator` (no permissions unless granted). */
export function kubeClients(kubeconfigPath: string = inject('kubeconfig'), user: KubeUser = 'admin'): KubeClients {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  kc.setCurrentContext(user);
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    ext: kc.makeApiClient(ApiextensionsV1Api),
    objects: KubernetesObjectApi.makeApiClient(kc),
  };
}

export interface TestNamespace {
  name: string;
  /** Deletes the namespace (404 is fine). With wait, until it is gone (the namespace controller runs). */
  cleanup(opts?: { wait?: boolean; timeoutMs?: number }): Promise<void>;
}

/** Creates a namespace named `<prefix>-<random>` (generateName), labelled coffer.dev/test=true. */
export async function createTestNamespace(prefix: string, kubeconfigPath: string = inject('kubeconfig')): Promise<TestNamespace> {
  const { core } = kubeClients(kubeconfigPath, 'admin');
  const base =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '-')
      .replace(/^-+/, '')
      .slice(0, 40) || 'test';
  const ns = await core.createNamespace({
    body: { metadata: { generateName: `${base.replace(/-+$/, '')}-`, labels: { 'coffer.dev/test': 'true' } } },
  });
  const name = ns.metadata!.name!;
  return {
    name,
    async cleanup(opts = {}) {
      try {
        await core.deleteNamespace({ name });
      } catch (err) {
        if (apiStatus(err) !== 404) throw err;
      }
      if (opts.wait) {
        await waitFor(
          `namespace ${name} to be deleted`,
          async () => {
            try {
              const got = await core.readNamespace({ name });
              throw new Error(`still present (phase ${got.status?.phase})`);
            } catch (err) {
              if (apiStatus(err) === 404) return true;
              throw err;
            }
          },
          { timeoutMs: opts.timeoutMs ?? 60_000 },
        );
      }
    },
  };
}

export interface WaitOptions {
  /** default 30 000 */
  timeoutMs?: number;
  /** default 250 */
  intervalMs?: number;
}

/**
 * Polls fn until it returns a value that is not false/undefined/null (returned) or the timeout passes.
 * Errors thrown by fn count as "not yet". Throws
 * `Timed out after <timeoutMs>ms waiting for <description>; last error/value: ...`.
 */
export async function waitFor<T>(description: string, fn: () => T | Promise<T>, opts: WaitOptions = {}): Promise<Exclude<T, false | undefined | null>> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const intervalMs = opts.intervalMs ?? 250;
  const deadline = Date.now() + timeoutMs;
  let last: string = 'none';
  for (;;) {
    try {
      const v = await fn();
      if (v !== false && v !== undefined && v !== null) return v as Exclude<T, false | undefined | null>;
      last = `value ${JSON.stringify(v)}`;
    } catch (err) {
      last = `error ${describeError(err)}`;
    }
    if (Date.now() >= deadline) {
      throw new Error(`Timed out after ${timeoutMs}ms waiting for ${description}; last error/value: ${last}`);
    }
    await new Promise((r) => setTimeout(r, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
  }
}

/** HTTP status of a @kubernetes/client-node ApiException, else undefined. */
export function apiStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The apiserver's Status body of an ApiException (parsed), if any. */
export function apiStatusBody(err: unknown): { reason?: string; message?: string; code?: number; details?: unknown } | undefined {
  let body = (err as { body?: unknown } | null)?.body;
  if (typeof body === 'string') {
    const text = body;
    try {
      body = JSON.parse(text);
    } catch {
      return { message: text };
    }
  }
  return body && typeof body === 'object' ? body : undefined;
}

/**
 * Awaits a call that must fail; returns its HTTP status and Status body. Throws if it succeeded.
 *   const e = await apiError(core.readNamespacedSecret({ name: 'nope', namespace }));
 *   expect(e.status).toBe(404);
 */
export async function apiError(call: Promise<unknown>): Promise<{ status: number | undefined; reason?: string; message: string; body: unknown }> {
  try {
    const v = await call;
    throw new ExpectedFailureError(`expected the API call to fail, but it succeeded: ${JSON.stringify(v).slice(0, 500)}`);
  } catch (err) {
    if (err instanceof ExpectedFailureError) throw err;
    const body = apiStatusBody(err);
    return {
      status: apiStatus(err),
      reason: body?.reason,
      message: body?.message ?? (err instanceof Error ? err.message : String(err)),
      body,
    };
  }
}

class ExpectedFailureError extends Error {}

function describeError(err: unknown): string {
  const status = apiStatus(err);
  if (status !== undefined) {
    const b = apiStatusBody(err);
    return `HTTP ${status}${b?.reason ? ` ${b.reason}` : ''}${b?.message ? `: ${b.message}` : ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}
