import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/** The tables an INSERT, UPDATE or DELETE built with the query builder writes (raw SQL is not seen). */
export function writtenTables(node: RootOperationNode): string[] {
  switch (node.kind) {
    case 'InsertQueryNode':
      return tableNames(node.into);
    case 'UpdateQueryNode':
      return tableNames(node.table);
    case 'DeleteQueryNode':
      return node.from.froms.flatMap(tableNames);
    default:
      return [];
  }
}

function tableNames(node: OperationNode | undefined): string[] {
  if (!node) return [];
  if (node.kind === 'TableNode') return [(node as unknown as { table: { identifier: { name: string } } }).table.identifier.name];
  if (node.kind === 'AliasNode') return tableNames((node as unknown as { node: OperationNode }).node);
  return [];
}

/**
 * Tells listeners when a statement is about to write one of their tables
 * (names as the code spells them, e.g. `projectMemberships`). In-process
 * caches use it to drop what a write may have changed.
 */
export class WriteWatch implements KyselyPlugin {
  readonly #listeners: { tables: ReadonlySet<string>; listener: () => void }[] = [];

  onWrite(tables: readonly string[], listener: () => void): void {
    this.#listeners.push({ tables: new Set(tables), listener });
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.#listeners.length > 0) {
      const written = writtenTables(args.node);
      for (const { tables, listener } of this.#listeners) if (written.some((table) => tables.has(table))) listener();
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
