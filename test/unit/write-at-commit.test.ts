import { sql } from 'kysely';
import { describe, expect, test } from 'vitest';
import { boundValue, inlineValue, statementOf, type StatementValue } from '../../src/db/statements.ts';
import { type UnitOfWorkDeps, WriteContext } from '../../src/services/unit-of-work.ts';
import { statementBuilder } from '../support/statement-builder.ts';

// A write at commit is sent in the closing script, where the unit of work does not see which tables it writes: one
// that names a table a cache is read from is refused before anything is sent (caches/README.md).
describe('WriteContext.writeAtCommit', () => {
  const context = () => new WriteContext(undefined as never, null, 1, {} as UnitOfWorkDeps);
  const statement = () => sql`UPDATE integrations SET is_synced = TRUE WHERE FALSE`;

  test('a write to tables no cache reads is taken', () => {
    expect(() => context().writeAtCommit(statement, ['integrations', 'integrationTargetKeys'])).not.toThrow();
  });

  test('a write to a table a cache is read from is refused, naming the caches', () => {
    expect(() => context().writeAtCommit(statement, ['integrations', 'projectEnvironments'])).toThrow(/environments, folders, approvalPolicies/);
    expect(() => context().writeAtCommit(statement, ['identityAccessTokens'])).toThrow(/identityTokens/);
  });
});

// statementOf gives a compiled Kysely query's values back to either writer: bound, they are parameters again;
// written in, each is a literal of its kind, and a value no literal is made for is refused.
describe('statementOf', () => {
  // compiled only, as Coffer's database names columns (snake case)
  const db = statementBuilder({ camelCase: true });

  test("a query's values are bound again, or written into its text as literals", () => {
    const at = new Date('2026-11-27T12:00:00.000Z');
    const query = db.updateTable('integrations').set({ isSynced: true, syncMessage: null, lastUsed: at, app: "it's $1" }).where('id', '=', 'x');
    const bound = statementOf(query)(boundValue).compile(db);
    expect(bound.parameters).toEqual([true, null, at, "it's $1", 'x']);
    expect(bound.sql).toBe(query.compile().sql);
    const written = statementOf(query)(inlineValue).compile(db);
    expect(written.parameters).toEqual([]);
    expect(written.sql).toContain(`"is_synced" = TRUE, "sync_message" = NULL, "last_used" = '2026-11-27T12:00:00.000Z', "app" = 'it''s $1'`);
    expect(written.sql).toContain(`where "id" = 'x'`);
  });

  test('a value with no literal, or a number that is not a safe integer, is refused', () => {
    expect(() => inlineValue(Buffer.from('x') as unknown as StatementValue)).toThrow(/not a value/);
    expect(() => inlineValue(1.5)).toThrow(/not an integer/);
  });
});
