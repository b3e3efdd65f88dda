import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Database, ReadOnlyDb } from './database.ts';

/** Works from both src/db and dist/db: migrations/ sits at the package root. */
const migrationsDir = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** Arbitrary constant key for pg_advisory_lock: "coffer" in ASCII. */
const MIGRATION_LOCK_KEY = 0x636f66666572;
const MIGRATION_NAME = /^[0-9]{4}_[a-z0-9_]+$/;

export interface Migration {
  name: string;
  sql: string;
}

export function listMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => {
      const name = file.replace(/\.sql$/, '');
      if (!MIGRATION_NAME.test(name)) throw new Error(`migration file name ${file} must look like 0001_some_name.sql`);
      return { name, sql: readFileSync(`${dir}/${file}`, 'utf8') };
    });
}

export interface MigrationProgress {
  /** Called once, before the first pending migration, with all pending names. */
  onPending?: (names: string[]) => void;
  onApplied?: (name: string, ms: number) => void;
}

/**
 * Applies pending migrations, each in its own transaction, while holding a
 * session-level advisory lock so that replicas starting together apply each
 * migration exactly once. Returns the names applied now.
 */
export async function migrate(database: Database, migrations = listMigrations(), progress: MigrationProgress = {}): Promise<string[]> {
  return database.db.connection().execute(async (connection) => {
    // A migration (or waiting for another replica's) may take longer than a request's statement may.
    await sql`SET statement_timeout = 0`.execute(connection);
    await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(connection);
    try {
      await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
        name text PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`.execute(connection);
      const applied = await appliedNames(connection);
      const pending = migrations.filter((migration) => !applied.has(migration.name));
      if (pending.length > 0) progress.onPending?.(pending.map((migration) => migration.name));
      for (const migration of pending) {
        const started = performance.now();
        const script = `BEGIN;\n${migration.sql}\n;INSERT INTO schema_migrations (name) VALUES ('${migration.name}');\nCOMMIT;`;
        try {
          await database.execScript(connection, script);
        } catch (error) {
          await database.execScript(connection, 'ROLLBACK').catch(() => {});
          throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
        }
        progress.onApplied?.(migration.name, Math.round(performance.now() - started));
      }
      return pending.map((migration) => migration.name);
    } finally {
      await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(connection);
      await sql`RESET statement_timeout`.execute(connection);
    }
  });
}

async function appliedNames(db: ReadOnlyDb): Promise<Set<string>> {
  const rows = await db.selectFrom('schemaMigrations').select('name').execute();
  return new Set(rows.map((row) => row.name));
}

/** Names of migrations shipped with this build that the database has not applied. */
export async function pendingMigrations(db: ReadOnlyDb, migrations = listMigrations()): Promise<string[]> {
  const exists = await sql<{ present: boolean }>`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`.execute(db);
  if (!exists.rows[0]?.present) return migrations.map((migration) => migration.name);
  const applied = await appliedNames(db);
  return migrations.filter((migration) => !applied.has(migration.name)).map((migration) => migration.name);
}
