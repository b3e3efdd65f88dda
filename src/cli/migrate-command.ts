import { loadConfig } from '../config.ts';
import { createLogger, openMigratedDatabase } from '../runtime.ts';
import type { CommandSpec } from './command.ts';
import { withDatabaseExplained } from './database-errors.ts';

export const migrateCommand: CommandSpec = {
  name: 'migrate',
  summary: 'apply pending database migrations and exit',
  description:
    'Applies the database migrations this release ships that the database has not applied yet, each in its own transaction, ' +
    'and exits. `coffer serve` does the same when it starts; run this before rolling out several replicas, or to check a database. ' +
    'Progress is logged to stderr.',
  settings: ['storage', 'logging'],
  examples: ['DATABASE_URL=postgresql://coffer:…@db:5432/coffer coffer migrate'],
  async run(flags) {
    const config = loadConfig(flags);
    const logger = createLogger(config, 2);
    const database = await withDatabaseExplained(config, () => openMigratedDatabase(config, logger));
    await database.close();
  },
};
