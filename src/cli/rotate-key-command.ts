import { loadConfig } from '../config.ts';
import { replaceStoredEncryptionKey } from '../crypto/secrets-file.ts';
import { DatabaseInUseError, withServingLockExclusive } from '../db/serving-lock.ts';
import { createLogger, openMigratedDatabase, resolveKeys } from '../runtime.ts';
import { rotateRootKey } from '../installation/root-key.ts';
import { CliError, EXIT } from './exit-codes.ts';

function parseNewKey(value: unknown): Buffer {
  if (typeof value !== 'string' || value === '') {
    throw new Error('the new root key is required: --new-key <32 bytes, base64> or COFFER_NEW_ENCRYPTION_KEY (openssl rand -base64 32)');
  }
  const key = Buffer.from(value, 'base64');
  if (key.length !== 32) throw new Error('the new root key must be 32 bytes, base64-encoded (openssl rand -base64 32)');
  return key;
}

/**
 * `coffer rotate-key --new-key <base64>`: re-wraps every project data key
 * under the new root key in one transaction (see rotateRootKey). Servers must
 * be stopped: the embedded directory's lock enforces it there, and on
 * PostgreSQL the serving lock (serving-lock.ts), which every server holds,
 * makes the command refuse (exit 4) naming the processes that hold it.
 */
export async function rotateKeyCommand(flags: Record<string, unknown>): Promise<void> {
  const config = loadConfig(flags);
  const newKey = parseNewKey(flags['new-key'] ?? process.env.COFFER_NEW_ENCRYPTION_KEY);
  const logger = createLogger(config, 2);
  const database = await openMigratedDatabase(config, logger, 'rotate-key');
  try {
    const current = resolveKeys(config, logger).encryptionKey;
    if (Buffer.from(current, 'base64').equals(newKey)) throw new Error('the new root key is the current one; nothing to rotate');
    const result = await withServingLockExclusive(database, (connection) => rotateRootKey(connection, Buffer.from(current, 'base64'), newKey)).catch((error: unknown) => {
      throw error instanceof DatabaseInUseError ? new CliError(`nothing rotated: ${error.message}`, EXIT.database) : error;
    });
    const stored = config.encryptionKey ? undefined : replaceStoredEncryptionKey(config.dataDir, newKey.toString('base64'));
    process.stdout.write(
      `Re-wrapped the data keys of ${result.projects} project(s) under the new root key (installation ${result.installationId}).\n` +
        (stored ? `The new key replaced the old one in ${stored}.\n` : 'Start coffer with the new COFFER_ENCRYPTION_KEY; the old key no longer opens this database.\n'),
    );
  } finally {
    await database.close();
  }
}
