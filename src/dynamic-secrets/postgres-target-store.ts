import pg from 'pg';

/** The admin connection a dynamic secret uses to reach the customer's PostgreSQL server. */
export interface PostgresTarget {
  host: string;
  port: number;
  database: string;
  username: string;
  password: string;
  ca?: string;
}

const CONNECT_TIMEOUT_MS = 10_000;
const STATEMENT_TIMEOUT_MS = 10_000;

/** Why a statement against the target failed, without the driver's text (it can quote the statement and its values). */
export class TargetDatabaseError extends Error {
  readonly sqlState: string | undefined;

  constructor(sqlState: string | undefined) {
    super(sqlState ? `the database refused the statement (SQLSTATE ${sqlState})` : 'the database could not be reached');
    this.sqlState = sqlState;
  }
}

/**
 * Runs the filled-in statements as one simple-protocol query (several statements in one implicit transaction) on a
 * fresh connection with the admin credentials, closed afterwards. The statements come from the project admin's
 * template with only generated values substituted (dynamic-secret-template.ts).
 */
export async function runOnTarget(target: PostgresTarget, statements: string): Promise<void> {
  const client = new pg.Client({
    host: target.host,
    port: target.port,
    database: target.database,
    user: target.username,
    password: target.password,
    ssl: target.ca ? { ca: target.ca } : undefined,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query(statements);
  } catch (error) {
    throw new TargetDatabaseError(sqlStateOf(error));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A five-character SQLSTATE from the server; a socket error's code (ECONNREFUSED …) is not one. */
function sqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
