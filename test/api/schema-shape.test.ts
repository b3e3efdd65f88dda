import { sql } from 'kysely';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { SCHEMA_SHAPE } from '../support/schema-shape.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

/** Every table and column of the migrated database with its nullability, in the Kysely schema's camelCase names. */
async function migratedShape(): Promise<Record<string, Record<string, string>>> {
  const { rows } = await sql<{ tableName: string; columnName: string; isNullable: 'YES' | 'NO' }>`
    SELECT table_name, column_name, is_nullable FROM information_schema.columns
    WHERE table_schema = current_schema() ORDER BY table_name, column_name`.execute(app.database.db);
  const shape: Record<string, Record<string, string>> = {};
  for (const row of rows) {
    (shape[camelCase(row.tableName)] ??= {})[camelCase(row.columnName)] = row.isNullable === 'YES' ? 'nullable' : 'not null';
  }
  return shape;
}

function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

test('src/db/schema.ts has exactly the tables and columns, with their nullability, of the migrated database', async () => {
  expect(await migratedShape()).toEqual(SCHEMA_SHAPE);
});
