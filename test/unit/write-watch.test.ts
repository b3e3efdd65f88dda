import { describe, expect, test } from 'vitest';
import { writtenTables } from '../../src/db/write-watch.ts';
import { statementBuilder } from '../support/statement-builder.ts';

/** Builds statements only (no connection): what the write watch is told a statement writes. */
const builder = statementBuilder();

describe('the tables a statement writes', () => {
  test('a plain write names its table; a read names none', () => {
    expect(writtenTables(builder.deleteFrom('projects').where('id', '=', 'x').toOperationNode())).toEqual(['projects']);
    expect(writtenTables(builder.selectFrom('projects').selectAll().toOperationNode())).toEqual([]);
  });

  // A data-modifying WITH clause writes as surely as the statement around it: a cache read from its table must
  // move (caches/README.md), whether the statement around it is a read or a write of another table.
  test('writes in WITH clauses are named, under a SELECT and under another write', () => {
    const underSelect = builder
      .with('written', (qb) => qb.updateTable('secretFolders').set({ name: 'renamed' }).where('id', '=', 'x').returningAll())
      .selectFrom('written')
      .selectAll()
      .toOperationNode();
    expect(writtenTables(underSelect)).toEqual(['secretFolders']);
    const underInsert = builder
      .with('gone', (qb) => qb.deleteFrom('projectEnvironments').where('id', '=', 'x').returning('projectId'))
      .insertInto('auditLogs')
      .values({ orgId: 'o', eventType: 'e', actorType: 'user', actorId: 'a', metadata: {} } as never)
      .toOperationNode();
    expect(writtenTables(underInsert).sort()).toEqual(['auditLogs', 'projectEnvironments']);
  });
});
