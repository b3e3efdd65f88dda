import { loadConfig } from '../config.ts';
import { createLogger, openMigratedDatabase } from '../runtime.ts';
import type { CommandSpec } from './command.ts';
import { DataDirInUseError } from '../db/data-dir-lock.ts';
import { withDatabaseExplained } from './database-errors.ts';
import { CliError, EXIT } from './exit-codes.ts';

export const migrateCommand: CommandSpec = {
  name: 'migrate',
  summary: 'apply pending database migrations and exit',
  description:
    'Applies the database migrations this release ships that the database has not applied yet, each in its own transaction, ' +
    'and exits. `coffer serve` does the same when it starts; run this before rolling out several replicas, or to check a database. ' +
    'It needs only the database (DATABASE_URL, or the embedded data directory): no root key or token secret. Progress is logged to stderr.',
  settings: ['storage', 'logging'],
  examples: ['DATABASE_URL=postgresql://coffer:…@db:5432/coffer coffer migrate'],
  async run(flags) {
    const config = loadConfig(flags, process.env, { keys: false });
    const logger = createLogger(config, 2);
    try {
      const database = await withDatabaseExplained(config, () => openMigratedDatabase(config, logger, 'migrate'));
      await database.close();
    } catch (error) {
      if (!(error instanceof DataDirInUseError)) throw error;
      throw new CliError(`${error.message}. A serving coffer applies its migrations when it starts; stop it to run coffer migrate.`, EXIT.database);
    }
  },
};
