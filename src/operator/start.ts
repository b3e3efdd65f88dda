import { KubeConfig } from '../kubernetes/client-node.ts';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Services } from '../app/container.ts';
import type { Registry } from 'prom-client';
import { Operator } from './operator.ts';
import { connectInProcess } from './port/in-process.ts';
import { OperatorMetrics } from './runtime/metrics.ts';

/** Where a pod's service-account token is mounted: the sign of running in a cluster. */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * The Kubernetes configuration the operator runs with, or why there is none.
 * COFFER_OPERATOR=false never runs it; auto runs it only inside a cluster
 * (service-account credentials), never because a kubeconfig is around (a
 * developer's laptop must not become a cluster's operator); true requires a
 * configuration (a kubeconfig or the service account).
 */
export function operatorKubeConfig(
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
  tokenPath = SERVICE_ACCOUNT_TOKEN,
): { kubeConfig: KubeConfig } | { reason: string } {
  if (config.operator === 'false') return { reason: 'operator disabled (COFFER_OPERATOR=false)' };
  const inCluster = Boolean(env.KUBERNETES_SERVICE_HOST) && existsSync(tokenPath);
  if (config.operator === 'auto' && !inCluster) {
    return {
      reason: env.KUBECONFIG
        ? 'operator not started: COFFER_OPERATOR=auto starts it only inside a cluster (service-account credentials); a kubeconfig alone needs --operator true (COFFER_OPERATOR=true)'
        : 'operator not started: not running in a cluster (COFFER_OPERATOR=auto)',
    };
  }
  const kubeConfig = new KubeConfig();
  if (config.operator === 'auto') kubeConfig.loadFromCluster();
  else kubeConfig.loadFromDefault();
  if (!kubeConfig.getCurrentCluster()) {
    throw new Error('COFFER_OPERATOR=true but no Kubernetes configuration was found (set KUBECONFIG or run in a cluster)');
  }
  return { kubeConfig };
}

/**
 * This replica's name in the Lease. In a pod, the pod's name (POD_NAME, from
 * the downward API): unique while the pod lives, and the same for a
 * restarted container, which then resumes leading at once instead of
 * waiting for its own Lease to expire. Elsewhere the host name and a random
 * suffix, as client-go does: two processes on one host must not share it.
 */
export function replicaName(env: NodeJS.ProcessEnv = process.env): string {
  return env.POD_NAME || `${hostname()}_${randomUUID().slice(0, 8)}`;
}

/** Starts the operator in the background when configured; resolves to it (or null). */
export function startOperator(config: Config, services: Services, logger: Logger, version: string, registry?: Registry): Operator | null {
  const found = operatorKubeConfig(config);
  if ('reason' in found) {
    logger.info(found.reason);
    return null;
  }
  const connector = {
    connect: () => connectInProcess(services, { organization: config.operatorOrganization, version, clusterName: config.clusterName }),
    waitingFor: 'the instance to be bootstrapped (or COFFER_OPERATOR_ORG to name one organization)',
  };
  const operator = new Operator(connector, logger, {
    kubeConfig: found.kubeConfig,
    clusterName: config.clusterName,
    leaseNamespace: config.operatorNamespace,
    replicaName: replicaName(),
    leaderElection: config.leaderElection,
    watchNamespace: config.watchNamespace,
    resyncIntervalMs: config.resyncInterval,
    concurrency: config.operatorConcurrency,
    metrics: registry ? new OperatorMetrics(registry) : undefined,
  });
  operator.start().catch((error: unknown) => logger.error({ err: error }, 'the operator failed to start'));
  return operator;
}
