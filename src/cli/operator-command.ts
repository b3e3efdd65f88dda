import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { CoreV1Api, KubeConfig } from '../kubernetes/client-node.ts';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { type Config, loadConfig } from '../config.ts';
import { metricsText } from '../http/metrics.ts';
import { Operator } from '../operator/operator.ts';
import { OperatorMetrics } from '../operator/runtime/metrics.ts';
import { connectHttp } from '../remote/http-port.ts';
import { ServerConnection } from '../remote/server-connection.ts';
import { type KubernetesAuthCredentials, TokenKeeper, type UniversalAuthCredentials } from '../remote/token-keeper.ts';
import { createLogger } from '../runtime.ts';
import { VERSION } from '../version.ts';
import type { CommandSpec } from './command.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { kubeFailureReason, loadKubeConfig } from './kube-config.ts';
import { explainListenError } from './startup-errors.ts';

export const operatorCommand: CommandSpec = {
  name: 'operator',
  summary: 'run only the operator, syncing from a Coffer server over HTTP(S)',
  description:
    'Runs the controllers for SecretsProject, SecretImport and Integration in this cluster without a database: it acts as a machine identity ' +
    'of the Coffer server COFFER_SERVER bound to this cluster (Kubernetes Auth with its own service-account token from COFFER_SERVICE_ACCOUNT_TOKEN_FILE ' +
    'as COFFER_IDENTITY_ID by default, no stored secret; or COFFER_AUTH_METHOD=universal with the Secret COFFER_CREDENTIALS_SECRET in the operator namespace), follows ' +
    "the server's change stream and catches up by revision after any disconnect. Its reads are audited as k8-operator with the cluster's name. " +
    'Serves /healthz, /readyz and /metrics on COFFER_PROBE_PORT.',
  settings: ['remote', 'operator', 'logging'],
  flags: [
    { flags: '--probe-port <port>', description: 'port of /healthz, /readyz and /metrics (default 8081) [COFFER_PROBE_PORT]' },
    { flags: '--host <address>', description: 'address the probes listen on (default 127.0.0.1; the container image sets 0.0.0.0) [COFFER_HOST]' },
  ],
  examples: [
    'coffer operator --server https://coffer.example.com --cluster-name eu-west-1 --identity-id 8a4c2e6f-1b3d-4f5a-8c7e-9d1b3f5a7c9e',
    'coffer operator --server https://coffer.example.com --cluster-name eu-west-1 --auth-method universal',
    'COFFER_SERVER=https://coffer.internal:8443 COFFER_SERVER_CA_FILE=/etc/coffer/ca.crt coffer operator --cluster-name edge-7',
  ],
  run: runOperator,
};

async function runOperator(flags: Record<string, unknown>): Promise<void> {
  const config = loadConfig(flags);
  if (!config.server) throw new CliError('COFFER_SERVER (--server) is required: the URL of the Coffer server to sync from', EXIT.configuration);
  const logger = createLogger(config);
  const { kubeConfig, source } = loadKubeConfig();
  const server = new ServerConnection({
    url: config.server,
    caFile: config.serverCaFile,
    tlsServerName: config.serverTlsServerName,
    clientCertFile: config.serverClientCertFile,
    clientKeyFile: config.serverClientKeyFile,
    userAgent: `k8-operator/${VERSION} (cluster ${config.clusterName})`,
  });
  if (config.authMethod === 'kubernetes' && !config.identityId) {
    throw new CliError(
      'COFFER_IDENTITY_ID (--identity-id) is required with Kubernetes Auth (the default): the machine identity this operator logs in as; or set COFFER_AUTH_METHOD=universal',
      EXIT.configuration,
    );
  }
  const tokens = new TokenKeeper(server, () =>
    config.authMethod === 'kubernetes' ? readServiceAccountToken(config.identityId!, config.serviceAccountTokenFile) : readCredentials(kubeConfig, source, config),
  );
  const registry = new Registry();
  const operator = new Operator(
    {
      connect: () => connectHttp(server, tokens, { clusterName: config.clusterName }),
      waitingFor:
        config.authMethod === 'kubernetes'
          ? `the Coffer server at ${server.url.origin} and a Kubernetes Auth login as identity ${config.identityId} with the token in ${config.serviceAccountTokenFile}`
          : `the Coffer server at ${server.url.origin} and the credentials in Secret ${config.operatorNamespace}/${config.credentialsSecret}`,
    },
    logger,
    {
      kubeConfig,
      clusterName: config.clusterName,
      leaseNamespace: config.operatorNamespace,
      replicaName: `${process.env.POD_NAME || hostname()}_${randomUUID().slice(0, 8)}`,
      leaderElection: config.leaderElection,
      watchNamespace: config.watchNamespace,
      resyncIntervalMs: config.resyncInterval,
      concurrency: config.operatorConcurrency,
      metrics: new OperatorMetrics(registry),
    },
  );
  const probes = Fastify({ logger: false });
  probes.get('/healthz', async () => ({ status: 'ok' }));
  probes.get('/readyz', async (_request, reply) => {
    const problem = operator.readinessProblem();
    if (problem) return reply.status(503).send({ status: 'not ready', reason: problem });
    return { status: 'ready' };
  });
  probes.get('/metrics', async (request, reply) => reply.header('content-type', registry.contentType).send(await metricsText(registry, request.query)));
  try {
    await probes.listen({ host: config.host, port: config.probePort });
  } catch (error) {
    throw explainListenError(error, 'probes', config.host, config.probePort, 'COFFER_PROBE_PORT (--probe-port)');
  }
  logger.info(
    { server: server.url.origin, cluster: config.clusterName },
    `coffer ${VERSION} operator for cluster '${config.clusterName}', syncing from ${server.url.origin}`,
  );
  operator.start().catch((error: unknown) => logger.error({ err: error }, 'the operator failed to start'));
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await operator.stop().catch((error: unknown) => logger.warn({ err: error }, 'operator stop failed'));
    tokens.stop();
    await Promise.allSettled([probes.close(), server.close()]);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/** The pod's service-account token, read at each login (the kubelet rotates a projected token in place). */
async function readServiceAccountToken(identityId: string, file: string): Promise<KubernetesAuthCredentials> {
  const jwt = (
    await readFile(file, 'utf8').catch((error: unknown) => {
      throw new Error(`cannot read the service-account token at ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    })
  ).trim();
  if (!jwt) throw new Error(`the service-account token file ${file} is empty`);
  return { identityId, jwt };
}

/** The machine identity's credentials, read from the Secret at each login (a rotated secret applies at the next one). */
async function readCredentials(kubeConfig: KubeConfig, source: string, config: Config): Promise<UniversalAuthCredentials> {
  const secret = await kubeConfig
    .makeApiClient(CoreV1Api)
    .readNamespacedSecret({ namespace: config.operatorNamespace, name: config.credentialsSecret })
    .catch((error: unknown) => {
      throw new Error(
        `cannot read Secret ${config.operatorNamespace}/${config.credentialsSecret} from the Kubernetes API at ${kubeConfig.getCurrentCluster()?.server} with ${source}: ${kubeFailureReason(error)}`,
      );
    });
  const field = (key: string) => {
    const value = secret.data?.[key];
    if (!value) throw new Error(`Secret ${config.operatorNamespace}/${config.credentialsSecret} has no '${key}'`);
    return Buffer.from(value, 'base64').toString('utf8').trim();
  };
  return { clientId: field('clientId'), clientSecret: field('clientSecret') };
}
