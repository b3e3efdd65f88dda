import type { Logger } from 'pino';
import { CliError, EXIT } from './cli/exit-codes.ts';
import { type Config, loginLimits } from './config.ts';
import { loadOrCreateKeysFile } from './crypto/secrets-file.ts';
import { lockDataDir } from './db/data-dir-lock.ts';
import { type Database, openDatabase } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { holdServingLock, RotationUnderWayError } from './db/serving-lock.ts';
import { verifyRootKey } from './installation/root-key.ts';
import { createLogger as createProcessLogger } from './logger.ts';
import { createServices, type SecurityKeys, type Services } from './app/container.ts';

/** `serve` logs to stdout; one-shot commands log to stderr so their stdout stays parseable. */
export function createLogger(config: Config, fd: 1 | 2 = 1): Logger {
  return createProcessLogger({ level: config.logLevel, format: config.logFormat }, fd);
}

/**
 * The root key and token secret: from the configuration, or in embedded mode
 * generated once into the data directory.
 */
export function resolveKeys(config: Config, logger: Logger): SecurityKeys {
  if (config.encryptionKey && config.authSecret) return { encryptionKey: config.encryptionKey, authSecret: config.authSecret };
  const stored = loadOrCreateKeysFile(config.dataDir);
  logger.warn(
    { path: stored.path, generated: stored.created },
    'COFFER_ENCRYPTION_KEY / COFFER_AUTH_SECRET not set: using keys kept in the data directory. Set both for production and back them up.',
  );
  return {
    encryptionKey: config.encryptionKey ?? stored.encryptionKey,
    authSecret: config.authSecret ?? stored.authSecret,
  };
}

/**
 * Opens the configured database and applies pending migrations. The embedded
 * database's directory is taken for this process alone first (DataDirInUseError
 * names the process that holds it).
 */
export async function openMigratedDatabase(config: Config, logger: Logger, command: string): Promise<Database> {
  const applicationName = command === 'serve' ? 'coffer' : `coffer-${command}`;
  const dataDirLock = config.databaseUrl
    ? undefined
    : await lockDataDir(config.dataDir, command, (error) => {
        logger.fatal({ err: error, dataDir: config.dataDir }, 'the data directory lock was taken by another process; stopping before anything more is written');
        process.exit(EXIT.dataDirLost);
      });
  if (!config.databaseUrl)
    logger.info({ dataDir: config.dataDir }, `opening the embedded database in ${config.dataDir} (the first start creates it, which takes a few seconds)`);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    applicationName,
    dataDirLock,
    poolSize: config.databasePoolSize,
    preparedStatements: config.databasePreparedStatements,
    connectTimeoutMs: config.databaseConnectTimeout,
    statementTimeoutMs: config.databaseStatementTimeout,
    onConnectionError: (error) => logger.warn({ err: error }, 'database connection lost; it is replaced on next use'),
  }).catch(async (error: unknown) => {
    await dataDirLock?.release();
    throw error;
  });
  const applied = await migrate(database, undefined, {
    onPending: (names) => logger.info({ count: names.length }, `applying ${names.length} database migration${names.length === 1 ? '' : 's'}`),
    onApplied: (name, ms) => logger.info({ migration: name, ms }, `migration ${name} applied`),
  }).catch(async (error: unknown) => {
    await database.close();
    throw error;
  });
  logger.info({ backend: database.backend, applied: applied.length }, 'database ready');
  return database;
}

/**
 * The database (migrated), the services, and the root key checked against the
 * database before anything is served. On PostgreSQL the process holds the
 * serving lock (serving-lock.ts) until the database is closed.
 */
export async function startServices(config: Config, logger: Logger, command: string): Promise<Services> {
  const database = await openMigratedDatabase(config, logger, command);
  try {
    const keys = resolveKeys(config, logger);
    const services = createServices(database, keys, {
      auditRetentionDays: config.auditRetentionDays,
      loginLimits: loginLimits(config),
      logger,
      clusterName: config.clusterName,
      publicUrl: config.publicUrl,
      ssoBreakGlass: config.ssoBreakGlass,
      outbound: { denyPrivateAddresses: config.outboundDenyPrivate },
    });
    await holdServingLock(database, {
      command,
      stillValid: async () => void (await verifyRootKey(database.db, services.keyring)),
      onLost: (error) => {
        logger.fatal({ err: error }, 'the database connection holding the serving lock broke and the lock could not be taken again; stopping');
        process.exit(EXIT.dataDirLost);
      },
    }).catch((error: unknown) => {
      throw error instanceof RotationUnderWayError ? new CliError(error.message, EXIT.database) : error;
    });
    const { installationId, recorded } = await verifyRootKey(database.db, services.keyring);
    logger.info({ installationId, ...(recorded ? { rootKeyCheck: 'recorded' } : {}) }, 'root key matches this database');
    return services;
  } catch (error) {
    await database.close();
    throw error;
  }
}
