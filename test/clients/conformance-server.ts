import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { type CofferProcess, callCoffer, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import { adminQuery, databaseUrl } from '../support/postgres-server.ts';

export type Backend = 'pglite' | 'postgres';

export interface ConformanceServer {
  server: CofferProcess;
  url: string;
  adminToken: string;
  projectId: string;
  projectSlug: string;
  orgId: string;
  /** The bootstrapped admin user's login. */
  email: string;
  password: string;
  /** The machine identity (universal auth; a project member). */
  identityId: string;
  clientId: string;
  clientSecret: string;
  /** Calls the API as the bootstrap admin; a non-200 answer throws. */
  admin(method: string, path: string, body?: unknown): Promise<any>;
  /** Logs the machine identity in with universal auth (no other header); answers its access token. */
  identityLogin(): Promise<string>;
  /** Audit event types written so far, oldest first. */
  auditEvents(): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * A fresh `coffer serve` (the built binary) on `backend`, bootstrapped, with a project
 * ("dev" holds /shared/FROM_IMPORT, imported into "/") and a machine identity with
 * universal auth (project member, access tokens that live `tokenTtl` seconds).
 */
export async function startConformanceServer(backend: Backend, tokenTtl = 3600): Promise<ConformanceServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'coffer-clients-'));
  const env: Record<string, string> = {
    COFFER_DATA_DIR: dataDir,
    COFFER_OPERATOR: 'false',
    COFFER_LOG_LEVEL: 'warn',
    COFFER_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    COFFER_AUTH_SECRET: randomBytes(48).toString('base64'),
  };
  if (backend === 'postgres') {
    const name = `${inject('postgresRunPrefix')}_${randomBytes(6).toString('hex')}`;
    await adminQuery(inject('postgresAdminUrl'), `CREATE DATABASE ${name} TEMPLATE ${inject('postgresTemplate')}`);
    env.DATABASE_URL = databaseUrl(inject('postgresAdminUrl'), name);
  }
  const server = await startCoffer(env);
  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const response = await callCoffer(server, method, path, token, body);
    if (response.status !== 200) throw new Error(`${method} ${path} → ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const [email, password] = ['admin@example.com', 'a long password'];
  const boot = await call('POST', '/api/v1/admin/bootstrap', { email, password, organization: 'Clients' });
  const adminToken: string = boot.identity.credentials.token;
  const admin = (method: string, path: string, body?: unknown) => call(method, path, body, adminToken);
  const projectSlug = 'client-conformance';
  const { project } = await admin('POST', '/api/v2/workspace', { projectName: 'Client conformance', slug: projectSlug });
  await admin('POST', '/api/v1/folders', { workspaceId: project.id, environment: 'dev', path: '/', name: 'shared' });
  await admin('POST', '/api/v3/secrets/raw/FROM_IMPORT', { workspaceId: project.id, environment: 'dev', secretPath: '/shared', secretValue: 'imported' });
  await admin('POST', '/api/v3/secrets/raw/BASE', { workspaceId: project.id, environment: 'dev', secretValue: 'base-value' });
  await admin('POST', '/api/v1/secret-imports', { workspaceId: project.id, environment: 'dev', path: '/', import: { environment: 'dev', path: '/shared' } });
  const { identity } = await admin('POST', '/api/v1/identities', { name: 'conformance', organizationId: boot.organization.id, role: 'member' });
  await admin('POST', `/api/v2/workspace/${project.id}/identity-memberships/${identity.id}`, { role: 'member' });
  const { identityUniversalAuth } = await admin('POST', `/api/v1/auth/universal-auth/identities/${identity.id}`, { accessTokenTTL: tokenTtl, accessTokenMaxTTL: 86400 });
  const { clientSecret } = await admin('POST', `/api/v1/auth/universal-auth/identities/${identity.id}/client-secrets`, {});
  return {
    server,
    url: server.api,
    adminToken,
    projectId: project.id,
    projectSlug,
    orgId: boot.organization.id,
    email,
    password,
    identityId: identity.id,
    clientId: identityUniversalAuth.clientId,
    clientSecret,
    admin,
    async identityLogin() {
      return (await call('POST', '/api/v1/auth/universal-auth/login', { clientId: identityUniversalAuth.clientId, clientSecret })).accessToken as string;
    },
    async auditEvents() {
      const { auditLogs } = await admin('GET', `/api/v1/organization/audit-logs?limit=1000`);
      return (auditLogs as { event: { type: string } }[]).map((entry) => entry.event.type).reverse();
    },
    async stop() {
      await stopCoffer(server);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
