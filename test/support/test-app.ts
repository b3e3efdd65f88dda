import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pino from 'pino';
import { inject } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { DEFAULT_LOGIN_LIMITS, type LoginThrottleLimits } from '../../src/auth/login-throttle.ts';
import type { ServiceOptions } from '../../src/app/container.ts';
import { migrate } from '../../src/db/migrate.ts';
import { buildApiApp, type ZodApp } from '../../src/http/app.ts';
import type { ConsoleFiles } from '../../src/http/console/console-files.ts';
import type { EventStreamSettings } from '../../src/http/routes/events.routes.ts';
import { loggerOptions } from '../../src/logger.ts';
import { createServices, type Services } from '../../src/app/container.ts';
import { adminQuery, databaseUrl } from './postgres-server.ts';

export type Backend = 'pglite' | 'postgres';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Record<string, unknown>;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

export interface TestApp {
  backend: Backend;
  app: ZodApp;
  services: Services;
  database: Database;
  /** The PostgreSQL database's URL (undefined on PGlite). */
  databaseUrl?: string;
  keys: { encryptionKey: string; authSecret: string };
  /** The login throttle's limits this app runs with. */
  loginLimits: LoginThrottleLimits;
  /** The sign-in settings it runs with (a replica gets the same). */
  signIn?: Pick<ServiceOptions, 'ssoBreakGlass' | 'publicUrl' | 'clock'>;
  /** Every log line the app wrote, as JSON text. */
  logs: string[];
  request<T = any>(method: string, url: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

export function currentBackend(): Backend {
  const backend = process.env.COFFER_TEST_BACKEND;
  if (backend !== 'pglite' && backend !== 'postgres') throw new Error('COFFER_TEST_BACKEND must be pglite or postgres');
  return backend;
}

/** A migrated database for one test file, and its URL (PostgreSQL only). */
async function openTestDatabase(backend: Backend): Promise<{ database: Database; url?: string }> {
  if (backend === 'pglite') {
    const template = inject('pgliteTemplate');
    const initialDataDir = template ? new Blob([readFileSync(template)]) : undefined;
    const database = await openDatabase({ dataDir: 'memory://', initialDataDir });
    await migrate(database);
    // as on PostgreSQL below (PGlite's one session does not take a database's settings)
    await database.execScript(database.db, 'SET plan_cache_mode = force_generic_plan');
    return { database };
  }
  const adminUrl = inject('postgresAdminUrl');
  const name = `${inject('postgresRunPrefix')}_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${inject('postgresTemplate')}`);
  // every statement prepared (the second time a connection sends it; on PGlite too, pglite-prepared.ts) runs its generic plan at once, where production
  // may switch to it after five runs: a statement that cannot run so (a parameter where planning needs a value)
  // fails here, not in a long-running server
  await adminQuery(adminUrl, `ALTER DATABASE ${name} SET plan_cache_mode = force_generic_plan`);
  const url = databaseUrl(adminUrl, name);
  return { database: await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 5 }), url };
}

/** Secret values in a request body (long enough to be told apart from ids and names). */
function secretValuesIn(body: unknown): string[] {
  if (typeof body !== 'object' || body === null) return [];
  const record = body as Record<string, unknown>;
  const own = typeof record.secretValue === 'string' && record.secretValue.length >= 8 ? [record.secretValue] : [];
  const items = Array.isArray(record.secrets) ? record.secrets.flatMap(secretValuesIn) : [];
  return [...own, ...items];
}

/**
 * Login throttling in tests: every request comes from 127.0.0.1 and many tests
 * log in with wrong credentials on purpose, so the harness raises the failure
 * limits; test/api/login-throttling.test.ts runs with the shipped defaults.
 */
export const TEST_LOGIN_LIMITS: LoginThrottleLimits = { ...DEFAULT_LOGIN_LIMITS, maxFailures: 1000, addressMaxFailures: 10_000, credentialMaxFailures: 10_000 };

/** A fresh, empty, migrated instance of the service for one test file. */
export async function startTestApp(
  options: {
    loginLimits?: LoginThrottleLimits;
    eventStreams?: Partial<EventStreamSettings>;
    heldRequestLimits?: ServiceOptions['heldRequestLimits'];
    /** Sign-in settings: break-glass, the public URL, the TOTP clock. */
    signIn?: Pick<ServiceOptions, 'ssoBreakGlass' | 'publicUrl' | 'clock'>;
    /** The built web console to serve at `/` (test/console/). */
    console?: ConsoleFiles;
    /** Caps on dynamic secret leases. */
    leaseLimits?: ServiceOptions['leaseLimits'];
  } = {},
): Promise<TestApp> {
  const backend = currentBackend();
  const { database, url } = await openTestDatabase(backend);
  const keys = { encryptionKey: randomBytes(32).toString('base64'), authSecret: randomBytes(48).toString('base64') };
  return serveTestApp(backend, database, keys, url, {
    loginLimits: options.loginLimits ?? TEST_LOGIN_LIMITS,
    eventStreams: options.eventStreams,
    heldRequestLimits: options.heldRequestLimits,
    signIn: options.signIn,
    console: options.console,
    leaseLimits: options.leaseLimits,
  });
}

/**
 * Another replica of `app`: its own process state (caches, connection pool)
 * over the same PostgreSQL database, with the same keys.
 */
/** What a second server may be started with besides the first's settings. */
export interface OtherServerOptions {
  eventStreams?: Partial<EventStreamSettings>;
  heldRequestLimits?: ServiceOptions['heldRequestLimits'];
}

export async function startReplica(app: TestApp, options: OtherServerOptions = {}): Promise<TestApp> {
  if (!app.databaseUrl) throw new Error('replicas share a PostgreSQL database; this app runs on PGlite');
  const database = await openDatabase({ databaseUrl: app.databaseUrl, dataDir: '', poolSize: 5 });
  return serveTestApp(app.backend, database, app.keys, app.databaseUrl, { loginLimits: app.loginLimits, signIn: app.signIn, ...options });
}

/**
 * Another server process over the same database (PGlite or PostgreSQL, the
 * same Database object) with other keys; closing it leaves the database open.
 */
export async function startSibling(app: TestApp, keys: TestApp['keys'], options: OtherServerOptions = {}): Promise<TestApp> {
  return serveTestApp(app.backend, app.database, keys, app.databaseUrl, { loginLimits: app.loginLimits, ownsDatabase: false, ...options });
}

async function serveTestApp(
  backend: Backend,
  database: Database,
  keys: TestApp['keys'],
  databaseUrl: string | undefined,
  {
    loginLimits,
    ownsDatabase = true,
    eventStreams,
    heldRequestLimits,
    signIn,
    console,
    leaseLimits,
  }: {
    console?: ConsoleFiles;
    leaseLimits?: ServiceOptions['leaseLimits'];
    loginLimits: LoginThrottleLimits;
    ownsDatabase?: boolean;
    eventStreams?: Partial<EventStreamSettings>;
    heldRequestLimits?: ServiceOptions['heldRequestLimits'];
    signIn?: Pick<ServiceOptions, 'ssoBreakGlass' | 'publicUrl' | 'clock'>;
  },
): Promise<TestApp> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = pino(loggerOptions('debug'), sink);
  const services = createServices(database, keys, { auditRetentionDays: 90, loginLimits, logger, heldRequestLimits, leaseLimits, ...signIn });
  const { app } = await buildApiApp(services, {
    logger,
    trustedProxies: [],
    console,
    eventStreams: { heartbeatMs: 250, recheckMs: 500, stallTimeoutMs: 2_000, ...eventStreams },
  });
  await app.ready();

  // Every credential and secret value the tests sent; close() fails the file if
  // any reached a log line or the audit log.
  const credentials = new Set<string>();
  const secretValues = new Set<string>();

  async function request<T>(method: string, url: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const bearer = headers.authorization?.split(' ')[1];
    if (bearer && bearer.length > 16) credentials.add(bearer);
    for (const value of secretValuesIn(options.body)) secretValues.add(value);
    const response = await app.inject({
      method: method as 'GET',
      url,
      query: options.query,
      headers,
      ...(options.body === undefined ? {} : { payload: options.body as object }),
    });
    const text = response.body;
    return { status: response.statusCode, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  }

  return {
    backend,
    app,
    services,
    database,
    databaseUrl,
    keys,
    loginLimits,
    signIn,
    logs,
    request,
    async close() {
      const audit = JSON.stringify(await database.db.selectFrom('auditLogs').select(['eventMetadata', 'actorMetadata']).execute());
      await app.close();
      if (ownsDatabase) await database.close();
      const leaked = [...credentials].filter((credential) => logs.some((line) => line.includes(credential)) || audit.includes(credential));
      if (leaked.length > 0) throw new Error(`${leaked.length} access token(s) appeared in the service's logs or audit log`);
      const exposed = [...secretValues].filter((value) => audit.includes(value) || logs.some((line) => line.includes(value)));
      if (exposed.length > 0) throw new Error(`secret values appeared in the audit log or logs: ${exposed.length}`);
    },
  };
}

/** Bootstraps the instance and returns the admin identity's token and ids. */
export async function bootstrap(app: TestApp, organization = 'Acme') {
  const response = await app.request('POST', '/api/v1/admin/bootstrap', {
    body: { email: 'admin@example.com', password: 'correct horse battery', organization },
  });
  if (response.status !== 200) throw new Error(`bootstrap failed: ${JSON.stringify(response.body)}`);
  return {
    token: response.body.identity.credentials.token as string,
    orgId: response.body.organization.id as string,
    identityId: response.body.identity.id as string,
    userId: response.body.user.id as string,
  };
}

/**
 * Every row of every table, as text; two snapshots are equal exactly when the
 * database holds the same data. `except` leaves tables out (a failed login
 * changes only login_throttles: its failure is counted).
 */
export async function snapshotDatabase(database: Database, except: string[] = []): Promise<Record<string, string[]>> {
  const tables = await sql<{ name: string }>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`.execute(database.db);
  const snapshot: Record<string, string[]> = {};
  for (const { name } of tables.rows) {
    if (except.includes(name)) continue;
    const rows = await sql<{ row: string }>`SELECT row_to_json(t)::text AS row FROM ${sql.table(name)} t`.execute(database.db);
    snapshot[name] = rows.rows.map((entry) => entry.row).sort();
  }
  return snapshot;
}
