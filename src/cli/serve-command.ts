import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { scheduleAuditRetention } from '../audit/audit-retention.ts';
import { loadConfig } from '../config.ts';
import { buildApiApp } from '../http/app.ts';
import { loadConsoleFiles } from '../http/console/console-files.ts';
import { registerDatabaseMetrics, registerRotationMetrics } from '../http/metrics.ts';
import { scheduleRotations } from '../rotations/rotation-scheduler.ts';
import { buildProbeApp } from '../http/probe-app.ts';
import { startOperator } from '../operator/start.ts';
import { createLogger, startServices } from '../runtime.ts';
import type { Services } from '../app/container.ts';
import { VERSION } from '../version.ts';
import type { CommandSpec } from './command.ts';
import { withDatabaseExplained } from './database-errors.ts';
import { explainListenError } from './startup-errors.ts';

export const serveCommand: CommandSpec = {
  name: 'serve',
  summary: 'run the API, the probes and (in a cluster) the operator',
  description:
    'Serves the API (COFFER_PORT, docs at /api/docs) and the probes /healthz, /readyz and /metrics (COFFER_PROBE_PORT), ' +
    'applies pending database migrations first, and runs the Kubernetes operator in-process when a Kubernetes configuration is found. ' +
    'Without DATABASE_URL it stores everything in an embedded database in COFFER_DATA_DIR.',
  settings: ['server', 'storage', 'keys', 'logging', 'login', 'operator'],
  examples: [
    'coffer serve                                   # embedded database in ./.coffer-data, API on 127.0.0.1:8080',
    'DATABASE_URL=postgresql://coffer:…@db:5432/coffer COFFER_ENCRYPTION_KEY=… COFFER_AUTH_SECRET=… coffer serve --host 0.0.0.0',
  ],
  run: serve,
};

async function serve(flags: Record<string, unknown>): Promise<void> {
  const config = loadConfig(flags);
  const logger = createLogger(config);
  const services = await withDatabaseExplained(config, () => startServices(config, logger, 'serve'));
  const { app, metrics } = await buildApiApp(services, { logger, trustedProxies: config.trustedProxies, console: await loadConsoleFiles() });
  registerDatabaseMetrics(metrics.registry, services.database);
  registerRotationMetrics(metrics.registry, services.rotations);
  let operator: ReturnType<typeof startOperator> = null;
  // the operator, once started, says whether it can work (its RBAC): /readyz follows it
  const probes = buildProbeApp(services, metrics.registry, () => operator?.readinessProblem() ?? null);
  const stopRetention = scheduleAuditRetention(services.database.db, logger);
  const stopThrottlePruning = services.loginThrottle.schedulePruning(logger);
  const stopRotations = scheduleRotations(() => services.rotations.runDue(), logger);
  const stopWebhooks = services.webhookDispatcher.start(logger);
  const stopAuditStreams = services.auditStreamDispatcher.start(logger);
  const stopLeaseExpiry = services.dynamicSecretLeases.scheduleExpiry(logger);
  try {
    await listen(app, 'API', config.host, config.port, 'COFFER_PORT (--port)');
    await listen(probes, 'probes', config.host, config.probePort, 'COFFER_PROBE_PORT (--probe-port)');
  } catch (error) {
    stopRetention();
    stopThrottlePruning();
    stopRotations();
    stopWebhooks();
    stopAuditStreams();
    stopLeaseExpiry();
    await Promise.allSettled([app.close(), probes.close()]);
    await services.database.close();
    throw error;
  }
  const api = `http://${reachableHost(config.host)}:${config.port}`;
  services.database.dataDirLock?.announce(api);
  operator = startOperator(config, services, logger, VERSION, metrics.registry);
  logger.info(
    { listening: `${config.host}:${config.port}`, api, docs: `${api}/api/docs`, probes: `http://${reachableHost(config.host)}:${config.probePort}` },
    `coffer ${VERSION} is serving the API on ${api} (docs: ${api}/api/docs)`,
  );
  await announceBootstrap(services, logger, api);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stopRetention();
    stopThrottlePruning();
    stopRotations();
    stopWebhooks();
    stopAuditStreams();
    stopLeaseExpiry();
    await operator?.stop().catch((error: unknown) => logger.warn({ err: error }, 'operator stop failed'));
    await Promise.allSettled([app.close(), probes.close()]);
    await services.database.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

async function listen(app: FastifyInstance, what: string, host: string, port: number, setting: string): Promise<void> {
  try {
    await app.listen({ host, port, listenTextResolver: (address) => `${what} listening on ${address}` });
  } catch (error) {
    throw explainListenError(error, what, host, port, setting);
  }
}

/** An instance without an organization cannot be used yet: say how to set it up. */
async function announceBootstrap(services: Services, logger: Logger, api: string): Promise<void> {
  if (await services.bootstrap.isBootstrapped()) return;
  logger.info(
    { bootstrapped: false },
    `this instance is not set up yet. Create the admin user, the organization and an admin token once, with ` +
      `'npx coffer bootstrap --server ${api} --email you@example.com --password "…" --organization "Acme"' ` +
      `or POST ${api}/api/v1/admin/bootstrap (README "Quick start")`,
  );
}

/** Where a local client reaches a server listening on `host`. */
function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
