import type { Config } from '../config.ts';
import { explainEmbeddedError, explainPostgresError } from './startup-errors.ts';

/** Runs a step that opens (and migrates) the configured database; its failure names the database and the setting. */
export async function withDatabaseExplained<T>(config: Config, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw config.databaseUrl ? explainPostgresError(error, config.databaseUrl) : explainEmbeddedError(error, config.dataDir);
  }
}
