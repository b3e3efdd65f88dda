import { CamelCasePlugin, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { DB } from '../../src/db/schema.ts';

/** A Kysely that builds and compiles statements only (no connection); `camelCase`: columns named as Coffer's database names them. */
export function statementBuilder(options: { camelCase?: boolean } = {}): Kysely<DB> {
  return new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    plugins: options.camelCase ? [new CamelCasePlugin()] : [],
  });
}
