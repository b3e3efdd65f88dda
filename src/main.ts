import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { configFlags, loadConfig } from './config.ts';
import {
  AlreadyBootstrappedError,
  adminSecretData,
  assertCanStoreSecret,
  type BootstrapResult,
  bootstrapOverHttp,
  parseTimeout,
  resolveSecretTarget,
  storeSecret,
  withoutToken,
} from './bootstrap/bootstrap-remote.ts';
import { DataDirInUseError } from './db/data-dir-lock.ts';
import { AppError } from './errors.ts';
import { scheduleAuditRetention } from './audit/audit-retention.ts';
import { buildApiApp } from './http/app.ts';
import { registerDatabaseMetrics } from './http/metrics.ts';
import { buildProbeApp } from './http/probe-app.ts';
import { startOperator } from './operator/start.ts';
import { rotateKeyCommand } from './installation/rotate-key-command.ts';
import { createLogger, openMigratedDatabase, startServices } from './runtime.ts';
import type { Services } from './services/container.ts';

export const VERSION = '0.1.0';

const USAGE = `Usage: coffer <command> [flags]

Commands:
  serve       Run the API (COFFER_PORT) and probes (COFFER_PROBE_PORT)
  migrate     Apply pending database migrations and exit
  bootstrap   Create the admin user, organization and admin identity token
              --email <email> --password <password> --organization <name> [--json]
              (or COFFER_BOOTSTRAP_EMAIL / _PASSWORD / _ORGANIZATION)
              --server <url>        through a running server's API instead of the database
                                    (retries until it answers, up to --timeout, default 5m)
              --store-secret <name> write the result (token, email, organization and identity
                                    ids) into that Kubernetes Secret in POD_NAMESPACE instead
                                    of printing the token (KUBECONFIG or in-cluster)
              --if-needed           an instance that is already set up is not an error
  rotate-key  Re-wrap every project data key under a new root key, in one transaction
              --new-key <base64> (or COFFER_NEW_ENCRYPTION_KEY); the current key as usual
              (COFFER_ENCRYPTION_KEY, or keys.json, which then receives the new key).
              Stop every coffer server first; start them with the new key afterwards.
  version     Print the version

Settings (flag or environment variable):
  --host COFFER_HOST (127.0.0.1)           --port COFFER_PORT (8080)
  --probe-port COFFER_PROBE_PORT (8081)    --database-url DATABASE_URL (embedded PGlite when unset)
  --data-dir COFFER_DATA_DIR (./.coffer-data)
  --encryption-key COFFER_ENCRYPTION_KEY   --auth-secret COFFER_AUTH_SECRET
  --log-level COFFER_LOG_LEVEL (info)      --audit-retention-days COFFER_AUDIT_RETENTION_DAYS (90)
  --trusted-proxies COFFER_TRUSTED_PROXIES (comma-separated addresses or CIDRs)
  --db-connect-timeout COFFER_DB_CONNECT_TIMEOUT (5s)   --db-statement-timeout COFFER_DB_STATEMENT_TIMEOUT (10s)
  --db-pool-size COFFER_DB_POOL_SIZE (10)

Login throttling (universal-auth login, user login, invite acceptance):
  --login-max-failures COFFER_LOGIN_MAX_FAILURES (5, per client id or email)
  --login-address-max-failures COFFER_LOGIN_ADDRESS_MAX_FAILURES (30, per source address)
  --login-failure-window COFFER_LOGIN_FAILURE_WINDOW (15m)
  --login-lockout COFFER_LOGIN_LOCKOUT (1m, doubling with each lockout)
  --login-max-lockout COFFER_LOGIN_MAX_LOCKOUT (1h)

Operator (runs inside serve):
  --operator COFFER_OPERATOR (auto: only inside a cluster, with service-account credentials;
                              true: also with a kubeconfig; false)
  --cluster-name COFFER_CLUSTER_NAME (local: the cluster's name in namespace grants)
  --resync-interval COFFER_RESYNC_INTERVAL (10m)   --operator-namespace COFFER_OPERATOR_NAMESPACE (Lease namespace)
  --watch-namespace COFFER_WATCH_NAMESPACE (all)   --operator-org COFFER_OPERATOR_ORG (the only organization)
  --leader-election COFFER_LEADER_ELECTION (true)  --operator-concurrency COFFER_OPERATOR_CONCURRENCY (16)
`;

const commandFlags = {
  email: { type: 'string' },
  password: { type: 'string' },
  organization: { type: 'string' },
  json: { type: 'boolean' },
  server: { type: 'string' },
  'store-secret': { type: 'string' },
  'if-needed': { type: 'boolean' },
  'new-key': { type: 'string' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: { ...configFlags, ...commandFlags }, allowPositionals: true });
  const command = positionals[0];
  if (values.help || !command || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  switch (command) {
    case 'version':
      process.stdout.write(`coffer ${VERSION}\n`);
      return;
    case 'serve':
      return serve(values);
    case 'migrate':
      return migrateCommand(values);
    case 'bootstrap':
      return bootstrapCommand(values);
    case 'rotate-key':
      return rotateKeyCommand(values);
    default:
      throw new Error(`unknown command '${command}'\n\n${USAGE}`);
  }
}

async function serve(flags: Record<string, unknown>): Promise<void> {
  const config = loadConfig(flags);
  const logger = createLogger(config);
  const services = await startServices(config, logger, 'serve');
  const { app, metrics } = await buildApiApp(services, { logger, trustedProxies: config.trustedProxies });
  registerDatabaseMetrics(metrics.registry, services.database);
  const probes = buildProbeApp(services, metrics.registry);
  const stopRetention = scheduleAuditRetention(services.db, logger);
  const stopThrottlePruning = services.loginThrottle.schedulePruning(logger);
  await app.listen({ host: config.host, port: config.port });
  await probes.listen({ host: config.host, port: config.probePort });
  services.database.dataDirLock?.announce(`http://${reachableHost(config.host)}:${config.port}`);
  const operator = startOperator(config, services, logger, VERSION, metrics.registry);
  logger.info({ api: `http://${config.host}:${config.port}`, docs: `http://${config.host}:${config.port}/api/docs`, probes: config.probePort }, 'coffer is serving');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stopRetention();
    stopThrottlePruning();
    await operator?.stop().catch((error: unknown) => logger.warn({ err: error }, 'operator stop failed'));
    await Promise.allSettled([app.close(), probes.close()]);
    await services.database.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/** Where a local client reaches a server listening on `host`. */
function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

async function migrateCommand(flags: Record<string, unknown>): Promise<void> {
  const config = loadConfig(flags);
  const logger = createLogger(config, 2);
  try {
    const database = await openMigratedDatabase(config, logger, 'migrate');
    await database.close();
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    throw new Error(`${error.message}. A serving coffer applies its migrations when it starts; stop it to run coffer migrate.`);
  }
}

const bootstrapInput = z.object({
  email: z.email('--email must be an email address'),
  password: z.string().min(8, '--password must be at least 8 characters'),
  organization: z.string().trim().min(1, '--organization is required'),
});

async function bootstrapCommand(flags: Record<string, unknown>): Promise<void> {
  const parsed = bootstrapInput.safeParse({
    email: flags.email ?? process.env.COFFER_BOOTSTRAP_EMAIL,
    password: flags.password ?? process.env.COFFER_BOOTSTRAP_PASSWORD,
    organization: flags.organization ?? process.env.COFFER_BOOTSTRAP_ORGANIZATION,
  });
  if (!parsed.success) throw new Error(parsed.error.issues.map((issue) => issue.message).join('; '));
  const server = typeof flags.server === 'string' ? flags.server : undefined;
  const timeoutMs = typeof flags.timeout === 'string' ? parseTimeout(flags.timeout) : undefined;
  // Before the one-time bootstrap: a token that cannot be stored afterwards would be lost.
  const target = typeof flags['store-secret'] === 'string' ? resolveSecretTarget(flags['store-secret']) : undefined;
  if (target) await assertCanStoreSecret(target);

  let result: BootstrapResult;
  try {
    result = server
      ? await bootstrapOverHttp({ server, input: parsed.data, timeoutMs, log: (message) => process.stderr.write(`coffer bootstrap: ${message}\n`) })
      : await bootstrapDatabase(flags, parsed.data);
  } catch (error) {
    const already = error instanceof AlreadyBootstrappedError || (error instanceof AppError && error.error === 'BootstrapError');
    if (already && flags['if-needed']) {
      process.stdout.write(`The instance is already set up; nothing to do.${target ? ` Secret ${target.namespace}/${target.name} is left as it is.` : ''}\n`);
      return;
    }
    throw error;
  }

  if (target) {
    await retry(() => storeSecret(target, adminSecretData(result, server)), 5, 2_000);
    if (flags.json) {
      process.stdout.write(`${JSON.stringify({ ...withoutToken(result), secret: { namespace: target.namespace, name: target.name } }, null, 2)}\n`);
    } else {
      process.stdout.write(
        `Bootstrapped organization '${result.organization.name}' (${result.organization.id}) with admin ${result.user.email}.\n` +
          `Admin identity '${result.identity.name}' (${result.identity.id}): its access token is in Secret ${target.namespace}/${target.name} (key token).\n`,
      );
    }
    return;
  }
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    process.stdout.write(
      `Bootstrapped organization '${result.organization.name}' (${result.organization.id}) with admin ${result.user.email}.\n` +
        `Admin identity '${result.identity.name}' (${result.identity.id}) access token:\n${result.identity.credentials.token}\n`,
    );
  }
}

/**
 * The bootstrap straight into the database; on an embedded directory that a
 * local `coffer serve` holds, through that server's API instead.
 */
async function bootstrapDatabase(flags: Record<string, unknown>, input: z.output<typeof bootstrapInput>): Promise<BootstrapResult> {
  const config = loadConfig(flags);
  const logger = createLogger(config, 2);
  let services: Services;
  try {
    services = await startServices(config, logger, 'bootstrap');
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    const server = error.holder?.host === hostname() ? error.holder.api : undefined;
    if (!server) throw new Error(`${error.message}. Run coffer bootstrap --server <its API address> to bootstrap through it.`);
    process.stderr.write(`coffer bootstrap: ${error.message}; bootstrapping through its API at ${server}\n`);
    return bootstrapOverHttp({ server, input, timeoutMs: 30_000 });
  }
  try {
    return await services.bootstrap.bootstrap(input);
  } finally {
    await services.database.close();
  }
}

async function retry<T>(action: () => Promise<T>, attempts: number, delayMs: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (error) {
      if (attempt >= attempts) throw error;
      process.stderr.write(`coffer bootstrap: ${error instanceof Error ? error.message : String(error)}; retrying\n`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
