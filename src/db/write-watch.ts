import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryId, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/**
 * The tables an INSERT, UPDATE or DELETE built with the query builder writes, its WITH clauses' writes included
 * (a data-modifying CTE writes as surely as the statement around it; raw SQL is not seen).
 */
export function writtenTables(node: RootOperationNode): string[] {
  return writeNodes(node).flatMap(ownTables);
}

/** The statement's own write, if it is one, then its WITH clauses' writes. */
function writeNodes(node: OperationNode): RootOperationNode[] {
  const own = isWrite(node) ? [node] : [];
  const ctes = ((node as { with?: { expressions: { expression: OperationNode }[] } }).with?.expressions ?? []).flatMap((cte) => writeNodes(cte.expression));
  return [...own, ...ctes];
}

function isWrite(node: OperationNode): node is RootOperationNode {
  return node.kind === 'InsertQueryNode' || node.kind === 'UpdateQueryNode' || node.kind === 'DeleteQueryNode';
}

function ownTables(node: RootOperationNode): string[] {
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
 * Told the tables a statement is about to write (names as the code spells them, e.g. `projectMemberships`);
 * answers what to run once the statement has returned, if anything.
 */
export type WriteObserver = (tables: string[], statement: WriteStatement) => (() => Promise<void>) | undefined;

/** What kind of write a statement is; for an UPDATE, the columns it sets. */
export type WriteStatement = { kind: 'insert' } | { kind: 'update'; columns: string[] } | { kind: 'delete' };

/** The statement's first write (its own, else its first WITH clause's): a CTE's UPDATE of a SELECT is an update. */
function statementOf(node: RootOperationNode): WriteStatement {
  const write = writeNodes(node)[0] ?? node;
  if (write.kind === 'InsertQueryNode') return { kind: 'insert' };
  if (write.kind !== 'UpdateQueryNode') return { kind: 'delete' };
  const updates = (write.updates ?? []) as unknown as { column: { kind: string; column?: { name: string } } }[];
  return { kind: 'update', columns: updates.map((update) => update.column.column?.name ?? '') };
}

/**
 * Tells an observer which tables each statement built with the query builder
 * writes, as it is sent, and runs what the observer asked for once the
 * statement has returned (caches/cache-versions.ts: the versions of the
 * caches read from those tables).
 */
export class WriteWatch implements KyselyPlugin {
  #observer: WriteObserver | undefined;
  readonly #afterwards = new WeakMap<QueryId, () => Promise<void>>();

  observe(observer: WriteObserver): void {
    if (this.#observer) throw new Error('the write watch has an observer already');
    this.#observer = observer;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.#observer) {
      const written = writtenTables(args.node);
      const afterwards = written.length > 0 ? this.#observer(written, statementOf(args.node)) : undefined;
      if (afterwards) this.#afterwards.set(args.queryId, afterwards);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const afterwards = this.#afterwards.get(args.queryId);
    if (afterwards) {
      this.#afterwards.delete(args.queryId);
      await afterwards();
    }
    return args.result;
  }
}
