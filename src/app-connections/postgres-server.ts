import pg from 'pg';
import { BadRequestError } from '../errors.ts';

/**
 * How Coffer signs in to a PostgreSQL server of a customer's (one a rotation changes passwords on, one a dynamic
 * secret makes roles on). This module is the one place that talks to such a server, so the rule that the driver's
 * text is never passed on (it can quote a statement, and a statement can hold a password) has one owner.
 */
export interface PostgresCredentials {
  host: string;
  port: number;
  database: string;
  username: string;
  password: string;
  sslEnabled: boolean;
  sslRejectUnauthorized: boolean;
  sslCertificate?: string;
}

const CONNECT_TIMEOUT_MS = 10_000;
const STATEMENT_TIMEOUT_MS = 10_000;

/**
 * A failure to reach or act on the server, as a fixed sentence chosen by the error's code: the driver's own text
 * can quote a statement (and a statement setting a password quotes the password), so it is never passed on.
 */
export class PostgresServerError extends BadRequestError {
  constructor(message: string) {
    super(message, 'PostgresServerError');
  }
}

const SQLSTATE_MESSAGES: Record<string, string> = {
  '28P01': 'The PostgreSQL server rejected the connection credentials',
  '28000': 'The PostgreSQL server rejected the connection credentials',
  '3D000': 'The database named in the connection does not exist',
  '42704': 'A role named in the statement does not exist on the PostgreSQL server',
  '42710': 'A role of that name already exists on the PostgreSQL server',
  '42601': 'The PostgreSQL server refused the statement as a syntax error',
  '42501': "The connection's role may not change that role's password",
  '57014': 'The PostgreSQL server did not answer in time',
};

const ERRNO_MESSAGES: Record<string, string> = {
  ECONNREFUSED: 'The PostgreSQL server refused the connection',
  ENOTFOUND: "The PostgreSQL server's host name does not resolve",
  ETIMEDOUT: 'The PostgreSQL server did not answer in time',
  EHOSTUNREACH: 'The PostgreSQL server cannot be reached',
  ECONNRESET: 'The PostgreSQL server closed the connection',
};

/** The fixed sentence for a driver error (never its own message). */
export function describeServerError(error: unknown): PostgresServerError {
  const code = typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  if (code && SQLSTATE_MESSAGES[code]) return new PostgresServerError(SQLSTATE_MESSAGES[code]);
  if (code && ERRNO_MESSAGES[code]) return new PostgresServerError(ERRNO_MESSAGES[code]);
  if (error instanceof Error && /timeout/i.test(error.message)) return new PostgresServerError('The PostgreSQL server did not answer in time');
  return new PostgresServerError(code ? `The PostgreSQL server answered with error ${code}` : 'The PostgreSQL server could not be used');
}

/** Who Coffer is on the server (pg_stat_activity's application_name). */
export type ServerPurpose = 'coffer-secret-rotation' | 'coffer-dynamic-secret';

function clientConfig(credentials: PostgresCredentials, purpose: ServerPurpose): pg.ClientConfig {
  return {
    host: credentials.host,
    port: credentials.port,
    database: credentials.database,
    user: credentials.username,
    password: credentials.password,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: STATEMENT_TIMEOUT_MS,
    application_name: purpose,
    ssl: credentials.sslEnabled ? { rejectUnauthorized: credentials.sslRejectUnauthorized, ca: credentials.sslCertificate ?? undefined } : false,
  };
}

/** Connects, runs `work`, disconnects; every failure is a PostgresServerError. */
async function withServer<T>(credentials: PostgresCredentials, work: (client: pg.Client) => Promise<T>, purpose: ServerPurpose = 'coffer-secret-rotation'): Promise<T> {
  const client = new pg.Client(clientConfig(credentials, purpose));
  // a connection dropped while idle must not become an unhandled 'error' event
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } catch (error) {
    throw describeServerError(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The credentials sign in (what creating or changing a connection checks). */
export async function verifyPostgresConnection(credentials: PostgresCredentials): Promise<void> {
  await withServer(credentials, (client) => client.query('SELECT 1'));
}

/** Sets `role`'s password. The same call again with the same password changes nothing a client sees (a resumed run repeats it). */
export async function setRolePassword(credentials: PostgresCredentials, role: string, password: string): Promise<void> {
  await withServer(credentials, async (client) => {
    await client.query(`ALTER ROLE ${client.escapeIdentifier(role)} WITH PASSWORD ${client.escapeLiteral(password)}`);
  });
}

/** `role` exists on the server (what creating a rotation checks, before anything is changed). */
export async function roleExists(credentials: PostgresCredentials, role: string): Promise<boolean> {
  return withServer(credentials, async (client) => (await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).rowCount === 1);
}

/**
 * Runs `statements` as one simple-protocol query (several statements in one implicit transaction) on a fresh
 * connection: a dynamic secret's creation, renewal or revocation template with its generated values filled in.
 */
export async function runStatements(credentials: PostgresCredentials, statements: string): Promise<void> {
  await withServer(credentials, (client) => client.query(statements), 'coffer-dynamic-secret');
}
