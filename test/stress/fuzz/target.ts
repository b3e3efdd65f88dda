import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { type Database, openDatabase } from '../../../src/db/database.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { buildApiApp, type ZodApp } from '../../../src/http/app.ts';
import { createServices } from '../../../src/app/container.ts';
import type { FuzzRequest, FuzzTarget } from './fuzzer.ts';

/** The fuzzer's view of an API app: its OpenAPI document, a way to send, and an admin token from bootstrapping it. */
export async function fuzzTargetFor(app: ZodApp): Promise<FuzzTarget> {
  const send = async (request: FuzzRequest) => {
    const response = await app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.payload });
    return { status: response.statusCode, body: response.body };
  };
  const openapi = JSON.parse((await send({ method: 'GET', url: '/api/docs/openapi.json', headers: {} })).body);
  const boot = await send({
    method: 'POST',
    url: '/api/v1/admin/bootstrap',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ email: 'admin@example.com', password: 'correct horse battery', organization: 'Fuzz' }),
  });
  if (boot.status !== 200) throw new Error(`bootstrap failed: ${boot.body}`);
  const result = JSON.parse(boot.body);
  return { openapi, send, token: result.identity.credentials.token, orgId: result.organization.id, ownIdentityId: result.identity.id };
}

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A fresh instance of the API in this process (a new PGlite in memory, or a new database on TEST_DATABASE_URL's server). */
export async function startFuzzTarget(backend: 'pglite' | 'postgres'): Promise<{ target: FuzzTarget; close(): Promise<void> }> {
  let database: Database;
  let drop = async () => {};
  if (backend === 'postgres') {
    const name = `coffer_fuzz_${randomBytes(4).toString('hex')}`;
    await admin(`CREATE DATABASE ${name}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    database = await openDatabase({ databaseUrl: url.toString(), dataDir: '' });
    drop = () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } else {
    database = await openDatabase({ dataDir: 'memory://' });
  }
  await migrate(database);
  const keys = { encryptionKey: randomBytes(32).toString('base64'), authSecret: randomBytes(48).toString('base64') };
  const services = createServices(database, keys, { auditRetentionDays: 90 });
  const { app } = await buildApiApp(services, { logger: pino({ level: 'silent' }), trustedProxies: [] });
  await app.ready();
  return {
    target: await fuzzTargetFor(app),
    async close() {
      await app.close();
      await database.close();
      await drop();
    },
  };
}
