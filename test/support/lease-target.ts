import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type PrivatePostgres, signsIn, startPrivatePostgres } from './private-postgres.ts';

/** What POST /api/v1/dynamic-secrets takes as `provider`. */
export interface LeaseProvider {
  type: 'sql-database';
  inputs: {
    client: 'postgres';
    host: string;
    port: number;
    database: string;
    username: string;
    password: string;
    creationStatement: string;
    renewStatement: string;
    revocationStatement: string;
  };
}

/**
 * A PostgreSQL server of the test's own for dynamic secrets to lease roles on: sign-ins over TCP check passwords
 * (scram), so a test proves which credentials work, and the dynamic secret's admin role may create and drop roles.
 */
export interface LeaseTarget {
  server: PrivatePostgres;
  /** The admin connection and statements that create a login role valid until the lease's expiry, move it, and drop it. */
  provider(): LeaseProvider;
  /** True when the server accepts `user` with `password` now. */
  signsIn(user: string, password: string): Promise<boolean>;
  /** The role's VALID UNTIL (null: none); undefined when no such role exists. */
  validUntil(user: string): Promise<Date | null | undefined>;
  destroy(): Promise<void>;
}

export async function startLeaseTarget(): Promise<LeaseTarget> {
  const server = await startPrivatePostgres({ superuserPassword: randomBytes(12).toString('hex') });
  const admin = { name: `leaser_${randomBytes(4).toString('hex')}`, password: randomBytes(12).toString('hex') };
  const query = async (text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    return client.query(text, values).finally(() => client.end());
  };
  await query(`CREATE ROLE ${admin.name} LOGIN CREATEROLE PASSWORD '${admin.password}'`);
  return {
    server,
    provider: () => ({
      type: 'sql-database',
      inputs: {
        client: 'postgres',
        host: '127.0.0.1',
        port: server.port,
        database: 'postgres',
        username: admin.name,
        password: admin.password,
        creationStatement: `CREATE ROLE "{{username}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';`,
        renewStatement: `ALTER ROLE "{{username}}" VALID UNTIL '{{expiration}}';`,
        revocationStatement: 'DROP ROLE IF EXISTS "{{username}}";',
      },
    }),
    signsIn: (user, password) => signsIn(server, user, password),
    async validUntil(user) {
      const { rows } = await query('SELECT rolvaliduntil FROM pg_roles WHERE rolname = $1', [user]);
      return rows.length === 0 ? undefined : (rows[0].rolvaliduntil as Date | null);
    },
    destroy: () => server.destroy(),
  };
}
