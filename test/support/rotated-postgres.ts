import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type PrivatePostgres, signsIn, startPrivatePostgres } from './private-postgres.ts';

/**
 * A PostgreSQL server of the test's own for rotations to act on: a role that
 * may change passwords (the connection's), and two login roles that take turns.
 */
export interface RotatedPostgres {
  server: PrivatePostgres;
  roles: { rotator: string; first: string; second: string };
  rotatorPassword: string;
  superuserPassword: string;
  /** The connection's credentials, as POST /api/v1/app-connections/postgres takes them. */
  connectionCredentials(password?: string): { host: string; port: number; database: string; username: string; password: string };
  /** Signs in as `user` with `password`: true when the server accepts it. */
  canLogIn(user: string, password: string): Promise<boolean>;
  /** Runs a statement as the superuser. */
  admin(statement: string): Promise<void>;
  /** The body of POST /api/v2/secret-rotations/postgres-credentials for an on-demand rotation `orders` writing DB_USER and DB_PASSWORD at dev:/. */
  onDemandRotation(projectId: string, connectionId: string, extra?: Record<string, unknown>): Record<string, unknown>;
}

export async function startRotatedPostgres(): Promise<RotatedPostgres> {
  const suffix = randomBytes(4).toString('hex');
  const roles = { rotator: `rotator_${suffix}`, first: `app_a_${suffix}`, second: `app_b_${suffix}` };
  const superuserPassword = randomBytes(12).toString('hex');
  const rotatorPassword = randomBytes(12).toString('hex');
  const server = await startPrivatePostgres({ superuserPassword });
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  await admin(`CREATE ROLE ${roles.rotator} LOGIN CREATEROLE PASSWORD '${rotatorPassword}'`);
  for (const role of [roles.first, roles.second]) await admin(`CREATE ROLE ${role} LOGIN PASSWORD '${randomBytes(12).toString('hex')}'`);
  return {
    server,
    roles,
    rotatorPassword,
    superuserPassword,
    admin,
    onDemandRotation: (projectId, connectionId, extra = {}) => ({
      name: 'orders',
      projectId,
      connectionId,
      environment: 'dev',
      secretPath: '/',
      isAutoRotationEnabled: false,
      rotationInterval: 1,
      parameters: { username1: roles.first, username2: roles.second },
      secretsMapping: { username: 'DB_USER', password: 'DB_PASSWORD' },
      ...extra,
    }),
    connectionCredentials: (password = rotatorPassword) => ({ host: '127.0.0.1', port: server.port, database: 'postgres', username: roles.rotator, password }),
    canLogIn: (user, password) => signsIn(server, user, password),
  };
}
