import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, expectTypeOf, test } from 'vitest';
import type { ReadOnlyDb } from '../../src/db/database.ts';
import type { ServiceDeps } from '../../src/services/deps.ts';

/**
 * The layer rules fail on a planted violation: SQL outside a store (eslint, with the rules the repository's
 * eslint.config.js computes for each path), and a write through a domain's read-only handle (the type checker).
 */
const eslint = new ESLint({ cwd: process.cwd() });

async function syntaxFindings(path: string, code: string): Promise<string[]> {
  const config = (await eslint.calculateConfigForFile(path)) as Linter.Config;
  const linter = new Linter({ configType: 'flat' });
  const rules = { 'no-restricted-syntax': config.rules?.['no-restricted-syntax'] ?? 'off' };
  return linter.verify(code, [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules }], { filename: path }).map((m) => m.message);
}

const PLANTED_QUERY = `import type { ReadOnlyDb } from '../db/database.ts';
export function planted(db: ReadOnlyDb) { return db.selectFrom('projects').selectAll().execute(); }`;
const PLANTED_SQL_TAG = `import { sql } from 'kysely';
export const planted = sql\`SELECT 1\`;`;

describe('SQL lives only in stores and db/', () => {
  test.each(['src/secrets/planted-service.ts', 'src/http/routes/planted.routes.ts', 'src/operator/planted.ts'])('a query in %s is refused', async (path) => {
    expect(await syntaxFindings(path, PLANTED_QUERY)).toEqual([expect.stringContaining('SQL only in a store')]);
    expect(await syntaxFindings(path, PLANTED_SQL_TAG)).toEqual([expect.stringContaining('SQL only in a store'), expect.stringContaining('SQL only in a store')]);
  });

  test.each(['src/secrets/secret-store.ts', 'src/db/statements.ts'])('the same query in %s is allowed', async (path) => {
    expect(await syntaxFindings(path, PLANTED_QUERY)).toEqual([]);
  });
});

describe("a domain's database handle builds reads only", () => {
  test('ServiceDeps.db has the query builders for reads and none for writes', () => {
    expectTypeOf<ServiceDeps['db']>().toEqualTypeOf<ReadOnlyDb>();
    expectTypeOf<ReadOnlyDb>().toHaveProperty('selectFrom');
    expectTypeOf<ReadOnlyDb>().not.toHaveProperty('insertInto');
    expectTypeOf<ReadOnlyDb>().not.toHaveProperty('updateTable');
    expectTypeOf<ReadOnlyDb>().not.toHaveProperty('deleteFrom');
    expectTypeOf<ReadOnlyDb>().not.toHaveProperty('transaction');
  });
});

// Checked by `npm run typecheck` (as are the expectTypeOf lines above): if the handle could write, these
// directives would be unused and fail the build.
export function plantedWrites(deps: ServiceDeps) {
  // @ts-expect-error a service cannot insert through its read-only handle
  void deps.db.insertInto('projects');
  // @ts-expect-error nor open a transaction of its own (writes go through deps.unitOfWork)
  void deps.db.transaction();
}
