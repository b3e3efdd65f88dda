import pg from 'pg';

/** The name a connection keeps BEGIN prepared under (postgres-pool.ts). */
export const BEGIN_STATEMENT = 'coffer_begin';

/** What node-postgres's Query writes with (not in pg's types): the extended protocol's messages. */
interface ProtocolWriter {
  parse(message: { text: string; name: string; types: unknown[] }): void;
  bind(message: { statement: string; portal: string; values: unknown[] }): void;
  execute(message: { portal: string; rows: number }): void;
}

/** How BEGIN goes in front: under which name ('' unnamed), and whether it is parsed first (not yet prepared under it). */
export interface BeginMessages {
  name: string;
  parse: boolean;
}

/**
 * A statement with parameters sent with the BEGIN of its transaction in one message: BEGIN's Bind and Execute (and
 * Parse, when it is not prepared) go before the statement's own messages and its one Sync, as libpq's pipeline mode
 * sends them. PostgreSQL runs them in order, so the statement runs inside the transaction BEGIN opened, and answers
 * with one ReadyForQuery: node-postgres sees one query with two results, BEGIN's first.
 *
 * BEGIN is parsed here only in front of an unnamed statement: node-postgres takes any ParseComplete as its query's
 * own, and would note a named statement as prepared before PostgreSQL had parsed it.
 */
export class StatementAfterBegin extends pg.Query {
  readonly #begin: BeginMessages;

  constructor(config: pg.QueryConfig & { callback: (error: Error | undefined, result: pg.QueryResult | pg.QueryResult[]) => void }, begin: BeginMessages) {
    super(config as pg.QueryConfig);
    this.#begin = begin;
  }

  /** node-postgres calls this with the stream corked: everything written here leaves in one write. */
  prepare(connection: ProtocolWriter): void {
    const { name, parse } = this.#begin;
    if (parse) connection.parse({ text: 'BEGIN', name, types: [] });
    connection.bind({ statement: name, portal: '', values: [] });
    connection.execute({ portal: '', rows: 0 });
    (pg.Query.prototype as unknown as { prepare(connection: ProtocolWriter): void }).prepare.call(this, connection);
  }
}
