/**
 * The client side of `coffer bootstrap --server <url>` and `--store-secret <name>`: bootstrap a
 * running instance through its API (retrying until it answers), and keep the result in a
 * Kubernetes Secret instead of printing the token (the Helm chart's post-install job).
 */
import type { V1Secret } from '@kubernetes/client-node';
import { AuthorizationV1Api, CoreV1Api, KubeConfig } from '../kubernetes/client-node.ts';
import { readFileSync } from 'node:fs';
import type { BootstrapInput } from './bootstrap-service.ts';

export interface BootstrapResult {
  message: string;
  user: { id: string; email: string; username: string };
  organization: { id: string; name: string; slug: string };
  identity: { id: string; name: string; credentials: { token: string } };
}

/** `90s`, `10m`, `1h` or plain seconds → milliseconds. */
export function parseTimeout(value: string): number {
  const match = /^(\d+)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) throw new Error(`--timeout must be a duration such as 90s, 10m or 1h, not '${value}'`);
  const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  return Number(match[1]) * units[(match[2] ?? 's') as keyof typeof units];
}

export class AlreadyBootstrappedError extends Error {}

export interface RemoteBootstrapOptions {
  /** base URL of the API, e.g. http://coffer.coffer-system.svc:8080 */
  server: string;
  input: BootstrapInput;
  /** how long to keep trying while the server does not answer (default 5 min) */
  timeoutMs?: number;
  /** progress (never carries the password or the token) */
  log?: (message: string) => void;
}

/**
 * POST /api/v1/admin/bootstrap. Retries while the server is unreachable or answers 5xx, until the
 * timeout; an instance that is already set up → AlreadyBootstrappedError; any other answer → Error.
 */
export async function bootstrapOverHttp(options: RemoteBootstrapOptions): Promise<BootstrapResult> {
  let base: URL;
  try {
    base = new URL(options.server);
  } catch {
    throw new Error(`--server must be a URL such as http://coffer:8080, not '${options.server}'`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`--server must be an http:// or https:// URL, not '${options.server}'`);
  const url = new URL('api/v1/admin/bootstrap', base.href.endsWith('/') ? base : `${base.href}/`);
  const timeoutMs = options.timeoutMs ?? 300_000;
  const deadline = Date.now() + timeoutMs;
  let delay = 500;
  let attempt = 0;
  for (;;) {
    attempt++;
    let problem: string;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'coffer-bootstrap' },
        body: JSON.stringify(options.input),
        signal: AbortSignal.timeout(Math.max(1000, Math.min(15_000, deadline - Date.now()))),
      });
      const text = await response.text();
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      if (response.ok) return body as BootstrapResult;
      const error = body as { error?: string; code?: string; message?: unknown } | undefined;
      const message = typeof error?.message === 'string' ? error.message : text.slice(0, 200);
      if (response.status === 400 && (error?.code === 'BootstrapError' || error?.error === 'BootstrapError' || /already been set up/i.test(message))) {
        throw new AlreadyBootstrappedError(message);
      }
      if (response.status < 500 && response.status !== 429) {
        throw new Error(`the server refused the bootstrap (HTTP ${response.status}): ${message}`);
      }
      problem = `HTTP ${response.status}`;
    } catch (error) {
      if (error instanceof AlreadyBootstrappedError || (error instanceof Error && error.message.startsWith('the server refused'))) throw error;
      problem = describeFetchError(error);
    }
    if (Date.now() + delay > deadline) {
      throw new Error(`${url.origin} did not answer the bootstrap within ${Math.round(timeoutMs / 1000)} s (${attempt} attempts; last: ${problem})`);
    }
    options.log?.(`waiting for ${url.origin} (${problem}); retrying in ${(delay / 1000).toFixed(1)} s`);
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 5_000);
  }
}

function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code;
  if (error.name === 'TimeoutError') return 'request timed out';
  return cause?.message ?? error.message;
}

/** The Secret's keys (values never logged). */
export function adminSecretData(result: BootstrapResult, server?: string): Record<string, string> {
  return {
    token: result.identity.credentials.token,
    email: result.user.email,
    'organization-id': result.organization.id,
    'organization-name': result.organization.name,
    'organization-slug': result.organization.slug,
    'identity-id': result.identity.id,
    'identity-name': result.identity.name,
    ...(server ? { 'api-url': server } : {}),
  };
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface SecretTarget {
  name: string;
  namespace: string;
  kubeConfig: KubeConfig;
}

/**
 * Where --store-secret writes: the Kubernetes configuration from KUBECONFIG or the pod's service
 * account (in-cluster), the namespace from POD_NAMESPACE, else the context's, else the pod's own.
 */
export function resolveSecretTarget(name: string, env: NodeJS.ProcessEnv = process.env): SecretTarget {
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253) {
    throw new Error(`--store-secret must be a Kubernetes Secret name (lowercase letters, digits, '-', '.'), not '${name}'`);
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  if (!kubeConfig.getCurrentCluster()) {
    throw new Error('--store-secret needs a Kubernetes configuration: run in a pod (service account) or set KUBECONFIG');
  }
  let namespace = env.POD_NAMESPACE || kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace;
  if (!namespace) {
    try {
      namespace = readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
    } catch {
      /* not in a pod */
    }
  }
  if (!namespace) throw new Error('--store-secret: set POD_NAMESPACE to the namespace the Secret goes to');
  return { name, namespace, kubeConfig };
}

/**
 * Checks, before the one-time bootstrap, that the Secret can be written afterwards: a token that
 * cannot be stored would be lost.
 */
export async function assertCanStoreSecret(target: SecretTarget): Promise<void> {
  const authorization = target.kubeConfig.makeApiClient(AuthorizationV1Api);
  for (const verb of ['create', 'get', 'update'] as const) {
    const review = await authorization
      .createSelfSubjectAccessReview({
        body: {
          spec: {
            resourceAttributes: { namespace: target.namespace, verb, resource: 'secrets', ...(verb === 'create' ? {} : { name: target.name }) },
          },
        },
      })
      .catch((error: unknown) => {
        throw new Error(`--store-secret: cannot reach the Kubernetes API to check access (${describeKubeError(error)})`);
      });
    if (!review.status?.allowed) {
      throw new Error(
        `--store-secret: not allowed to ${verb} Secret ${target.namespace}/${target.name}` +
          (review.status?.reason ? ` (${review.status.reason})` : '') +
          '; nothing was bootstrapped',
      );
    }
  }
}

/** Creates the Secret, or replaces its data when it exists. Uses create, get and update only. */
export async function storeSecret(target: SecretTarget, data: Record<string, string>): Promise<void> {
  const core = target.kubeConfig.makeApiClient(CoreV1Api);
  const body: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: target.name,
      namespace: target.namespace,
      labels: { 'app.kubernetes.io/name': 'coffer', 'app.kubernetes.io/component': 'admin-credentials' },
      annotations: { 'coffer.dev/written-by': 'coffer bootstrap --store-secret' },
    },
    type: 'Opaque',
    stringData: data,
  };
  try {
    await core.createNamespacedSecret({ namespace: target.namespace, body });
    return;
  } catch (error) {
    if ((error as { code?: number }).code !== 409)
      throw new Error(`could not create Secret ${target.namespace}/${target.name}: ${describeKubeError(error)}`, { cause: error });
  }
  const current = await core.readNamespacedSecret({ namespace: target.namespace, name: target.name });
  await core
    .replaceNamespacedSecret({
      namespace: target.namespace,
      name: target.name,
      body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion } },
    })
    .catch((error: unknown) => {
      throw new Error(`could not update Secret ${target.namespace}/${target.name}: ${describeKubeError(error)}`);
    });
}

/** An ApiException's status and message (never a request body). */
function describeKubeError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number') {
    let message = '';
    try {
      message = (JSON.parse(String((error as { body?: unknown }).body)) as { message?: string }).message ?? '';
    } catch {
      /* no JSON body */
    }
    return `HTTP ${code}${message ? `: ${message}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The result as printed when the token went into a Secret: everything but the token. */
export function withoutToken(result: BootstrapResult): Omit<BootstrapResult, 'identity'> & { identity: { id: string; name: string } } {
  const { credentials: _credentials, ...identity } = result.identity;
  return { ...result, identity };
}
