import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { loadOrCreateKeysFile } from './crypto/secrets-file.ts';
import { type Database, openDatabase } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { createLogger as createProcessLogger } from './logger.ts';
import { createServices, type SecurityKeys, type Services } from './services/container.ts';

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

/** Opens the configured database and applies pending migrations. */
export async function openMigratedDatabase(config: Config, logger: Logger): Promise<Database> {
  if (!config.databaseUrl) logger.info({ dataDir: config.dataDir }, `opening the embedded database in ${config.dataDir} (the first start creates it, which takes a few seconds)`);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const applied = await migrate(database, undefined, {
    onPending: (names) => logger.info({ count: names.length }, `applying ${names.length} database migration${names.length === 1 ? '' : 's'}`),
    onApplied: (name, ms) => logger.info({ migration: name, ms }, `migration ${name} applied`),
  });
  logger.info({ backend: database.backend, applied: applied.length }, 'database ready');
  return database;
}

export async function startServices(config: Config, logger: Logger): Promise<Services> {
  const keys = resolveKeys(config, logger);
  const database = await openMigratedDatabase(config, logger);
  return createServices(database, keys, { auditRetentionDays: config.auditRetentionDays });
}
