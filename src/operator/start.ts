import { KubeConfig } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Services } from '../services/container.ts';
import type { Registry } from 'prom-client';
import { OperatorMetrics } from './metrics.ts';
import { Operator } from './operator.ts';

/**
 * The Kubernetes configuration the operator runs with: COFFER_OPERATOR=false
 * never runs it; auto runs it when KUBECONFIG is set or inside a cluster;
 * true requires one.
 */
export function operatorKubeConfig(config: Config, env: NodeJS.ProcessEnv = process.env): KubeConfig | null {
  if (config.operator === 'false') return null;
  if (config.operator === 'auto' && !env.KUBECONFIG && !env.KUBERNETES_SERVICE_HOST) return null;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  if (!kubeConfig.getCurrentCluster()) {
    if (config.operator === 'true') throw new Error('COFFER_OPERATOR=true but no Kubernetes configuration was found (set KUBECONFIG or run in a cluster)');
    return null;
  }
  return kubeConfig;
}

/** Starts the operator in the background when configured; resolves to it (or null). */
export function startOperator(config: Config, services: Services, logger: Logger, version: string, registry?: Registry): Operator | null {
  const kubeConfig = operatorKubeConfig(config);
  if (!kubeConfig) {
    logger.info('operator disabled (COFFER_OPERATOR=false, or no KUBECONFIG / in-cluster configuration)');
    return null;
  }
  const operator = new Operator(services, logger, {
    kubeConfig,
    version,
    leaseNamespace: config.operatorNamespace,
    // Unique per process, as client-go does: a restarted replica must not inherit a dead one's lease.
    replicaName: `${process.env.POD_NAME || hostname()}_${randomUUID().slice(0, 8)}`,
    leaderElection: config.leaderElection,
    watchNamespace: config.watchNamespace,
    organization: config.operatorOrganization,
    resyncIntervalMs: config.resyncInterval,
    concurrency: config.operatorConcurrency,
    metrics: registry ? new OperatorMetrics(registry) : undefined,
  });
  operator.start().catch((error: unknown) => logger.error({ err: error }, 'the operator failed to start'));
  return operator;
}
