import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { literalOf, statement, statementOf, type StatementValue } from '../../src/db/statements.ts';
import { type UnitOfWorkDeps, WriteContext } from '../../src/services/unit-of-work.ts';
import { statementBuilder } from '../support/statement-builder.ts';

// A write at commit is sent in the closing script, where the unit of work does not see which tables it writes: one
// that names a table a cache is read from is refused before anything is sent (caches/README.md).
describe('WriteContext.writeAtCommit', () => {
  const context = () => new WriteContext(undefined as never, null, 1, {} as UnitOfWorkDeps);
  const write = statement`UPDATE integrations SET is_synced = TRUE WHERE FALSE`;

  test('a write to tables no cache reads is taken', () => {
    expect(() => context().writeAtCommit(write, ['integrations', 'integrationTargetKeys'])).not.toThrow();
  });

  test('a write to a table a cache is read from is refused, naming the caches', () => {
    expect(() => context().writeAtCommit(write, ['integrations', 'projectEnvironments'])).toThrow(/environments, folders, approvalPolicies/);
    expect(() => context().writeAtCommit(write, ['identityAccessTokens'])).toThrow(/identityTokens/);
  });
});

// statementOf gives a compiled Kysely query's values back to either way of sending it: bound, they are parameters
// again; written in, each is a literal of its kind, and a value no literal is made for is refused.
describe('statementOf', () => {
  // compiled only, as Coffer's database names columns (snake case)
  const db = statementBuilder({ camelCase: true });

  test("a query's values are bound again, or written into its text as literals", () => {
    const at = new Date('2026-11-27T12:00:00.000Z');
    const query = db.updateTable('integrations').set({ isSynced: true, syncMessage: null, lastUsed: at, app: "it's $1" }).where('id', '=', 'x');
    const bound = statementOf(query).bound().compile(db);
    expect(bound.parameters).toEqual([true, null, at, "it's $1", 'x']);
    expect(bound.sql).toBe(query.compile().sql);
    const written = statementOf(query).written();
    expect(written).toContain(`"is_synced" = TRUE, "sync_message" = NULL, "last_used" = '2026-11-27T12:00:00.000Z', "app" = 'it''s $1'`);
    expect(written).toContain(`where "id" = 'x'`);
  });

  test('a value with no literal, or a number that is not a safe integer, is refused', () => {
    expect(() => literalOf(Buffer.from('x') as unknown as StatementValue)).toThrow(/not a value/);
    expect(() => literalOf(1.5)).toThrow(/not an integer/);
  });
});

describe('statement', () => {
  const db = statementBuilder({ camelCase: true });

  test('a statement nested in another takes its place, bound or written', () => {
    const lock = statement`SELECT pg_advisory_xact_lock(${7})`;
    const outer = statement`WITH locked AS (${lock}) SELECT ${'a'}, ${null} FROM locked`;
    const bound = outer.bound().compile(db);
    expect(bound.sql).toBe('WITH locked AS (SELECT pg_advisory_xact_lock($1)) SELECT $2, $3 FROM locked');
    expect(bound.parameters).toEqual([7, 'a', null]);
    expect(outer.written()).toBe("WITH locked AS (SELECT pg_advisory_xact_lock(7)) SELECT 'a', NULL FROM locked");
  });

  // written by hand (node-postgres's builds its literal a character at a time): it must give exactly what node-postgres's gives
  test("a string is written as node-postgres's escapeLiteral writes it", () => {
    const alphabet = ["'", '\\', '"', '$', 'a', 'é', '😀', ' ', '\n', '\\\\', "''", 'E'];
    const strings = ['', "it's", 'back\\slash', "both ' and \\", ...Array.from({ length: 2000 }, (_, index) => randomString(alphabet, index))];
    for (const value of strings) expect(literalOf(value)).toBe(pg.escapeLiteral(value));
  });
});

/** A string of up to 24 of `alphabet`'s pieces, the same for the same seed. */
function randomString(alphabet: string[], seed: number): string {
  let state = seed * 2654435761 + 1;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state;
  };
  return Array.from({ length: next() % 25 }, () => alphabet[next() % alphabet.length]).join('');
}
