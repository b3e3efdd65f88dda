import { existsSync } from 'node:fs';
import pg from 'pg';

export interface PostgresServer {
  /** URL of a maintenance database on the server, used to create and drop test databases. */
  adminUrl: string;
  source: string;
  stop(): Promise<void>;
}

const LOCAL_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

async function reachable(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

function dockerEngineAnswers(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

/** Why the tests could not get a PostgreSQL server (resolvePostgresServer's order), or null when they can. */
export async function postgresProblem(): Promise<string | null> {
  const given = process.env.TEST_DATABASE_URL;
  if (given) {
    const problem = await reachable(given);
    return problem && `TEST_DATABASE_URL is set but unreachable: ${problem}`;
  }
  if (dockerEngineAnswers()) return null;
  const problem = await reachable(LOCAL_URL);
  return problem && `no TEST_DATABASE_URL, no Docker engine, and ${LOCAL_URL} does not answer (${problem})`;
}

/**
 * TEST_DATABASE_URL when given; else a PostgreSQL container when a Docker
 * engine answers; else the local server at 127.0.0.1:5432. None reachable
 * fails the suite with the reasons.
 */
export async function resolvePostgresServer(): Promise<PostgresServer> {
  const failures: string[] = [];
  const given = process.env.TEST_DATABASE_URL;
  if (given) {
    const problem = await reachable(given);
    if (!problem) return { adminUrl: given, source: 'TEST_DATABASE_URL', stop: async () => {} };
    throw new Error(`TEST_DATABASE_URL is set but unreachable: ${problem}`);
  }
  if (dockerEngineAnswers()) {
    try {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const container = await new PostgreSqlContainer('postgres:17-alpine').start();
      return { adminUrl: container.getConnectionUri(), source: 'testcontainers', stop: async () => void (await container.stop()) };
    } catch (error) {
      failures.push(`testcontainers: ${(error as Error).message.split('\n')[0]}`);
    }
  } else {
    failures.push('testcontainers: no Docker engine (no DOCKER_HOST, no /var/run/docker.sock)');
  }
  const problem = await reachable(LOCAL_URL);
  if (!problem) return { adminUrl: LOCAL_URL, source: 'local server 127.0.0.1:5432', stop: async () => {} };
  failures.push(`local server ${LOCAL_URL}: ${problem}`);
  throw new Error(`No PostgreSQL for the tests. Set TEST_DATABASE_URL, start Docker, or run PostgreSQL at 127.0.0.1:5432.\n  ${failures.join('\n  ')}`);
}

/** The same server, another database. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function adminQuery(adminUrl: string, statement: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await client.query(statement);
  } finally {
    await client.end();
  }
}
