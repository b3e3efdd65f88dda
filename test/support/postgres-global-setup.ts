import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { adminQuery, databaseUrl, resolvePostgresServer } from './postgres-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string;
    /** A migrated database that each test file clones. */
    postgresTemplate: string;
    postgresRunPrefix: string;
  }
}

/**
 * Once per run: find a PostgreSQL server, create a fresh migrated template
 * database for this run, and drop every database the run created at the end.
 */
export default async function setup(project: TestProject) {
  const server = await resolvePostgresServer();
  const prefix = `coffer_test_${randomBytes(4).toString('hex')}`;
  const template = `${prefix}_template`;
  await adminQuery(server.adminUrl, `CREATE DATABASE ${template}`);
  const database = await openDatabase({ databaseUrl: databaseUrl(server.adminUrl, template), dataDir: '' });
  await migrate(database);
  await database.close();
  console.log(`PostgreSQL for tests: ${server.source}, databases ${prefix}_*`);

  project.provide('postgresAdminUrl', server.adminUrl);
  project.provide('postgresTemplate', template);
  project.provide('postgresRunPrefix', prefix);

  return async () => {
    const { rows } = await adminQuery(server.adminUrl, `SELECT datname FROM pg_database WHERE datname LIKE '${prefix}%'`);
    for (const { datname } of rows as { datname: string }[]) {
      await adminQuery(server.adminUrl, `DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
    await server.stop();
  };
}
