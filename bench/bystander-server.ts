/**
 * The server bench/bystander.ts measures, run as its own process from the checkout given (so that
 * an older commit can be measured with the same bench): opens a fresh database, builds the API
 * from `<checkout>/src`, sets up two organizations through it (a second one written directly, as
 * bootstrap makes only the first), listens, and prints one JSON line with the URL and the tokens.
 *
 *   node bench/bystander-server.ts --checkout /path/to/coffer --backend pglite|postgres [--database-url URL]
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';

const { values: args } = parseArgs({
  options: {
    checkout: { type: 'string' },
    backend: { type: 'string', default: 'pglite' },
    'database-url': { type: 'string' },
    viewers: { type: 'string', default: '15' },
  },
});
const checkout = args.checkout!;
const from = (path: string) => import(join(checkout, 'src', path));

const { openDatabase } = await from('db/database.ts');
const { migrate } = await from('db/migrate.ts');
const { createServices } = await from('app/container.ts');
const { buildApiApp } = await from('http/app.ts');
const { insertIdentity } = await from('identities/identity-store.ts');
const { insertIdentityOrgMembership, insertOrganization } = await from('orgs/org-store.ts');

const database = await openDatabase(args.backend === 'postgres' ? { databaseUrl: args['database-url'], dataDir: '' } : { dataDir: 'memory://' });
await migrate(database);
const services = createServices(
  database,
  { encryptionKey: randomBytes(32).toString('base64'), authSecret: randomBytes(48).toString('base64') },
  { auditRetentionDays: 90 },
);
const { app } = await buildApiApp(services, { logger: pino({ level: 'silent' }), trustedProxies: [] });
await app.ready();

async function call(method: string, url: string, token: string | undefined, body?: unknown) {
  const response = await app.inject({ method, url, headers: token ? { authorization: `Bearer ${token}` } : {}, ...(body === undefined ? {} : { payload: body }) });
  if (response.statusCode !== 200) throw new Error(`${method} ${url} → ${response.statusCode} ${response.body}`);
  return JSON.parse(response.body);
}

async function tokenOf(identityId: string): Promise<string> {
  const issued = await services.auth.issueIdentityToken(database.db, {
    identityId,
    authMethod: 'token-auth',
    name: null,
    accessTokenTtl: 0,
    accessTokenMaxTtl: 0,
    accessTokenNumUsesLimit: 0,
  });
  return issued.accessToken;
}

// the hostile organization: an admin, a project, and read-only viewers
const boot = await call('POST', '/api/v1/admin/bootstrap', undefined, { email: 'bench@example.com', password: 'a long benchmark password', organization: 'Hostile' });
const adminToken: string = boot.identity.credentials.token;
const orgId: string = boot.organization.id;
const { project } = await call('POST', '/api/v2/workspace', adminToken, { projectName: 'Hostile' });
const viewers: string[] = [];
for (let index = 0; index < Number(args.viewers); index++) {
  const { identity } = await call('POST', '/api/v1/identities', adminToken, { name: `viewer-${index}`, organizationId: orgId, role: 'member' });
  await call('POST', `/api/v2/workspace/${project.id}/identity-memberships/${identity.id}`, adminToken, { roles: [{ role: 'admin' }] });
  viewers.push(await tokenOf(identity.id));
}

// the bystander: an organization of its own with a project of 20 secrets
const org = await insertOrganization(database.db, { name: 'Bystander', slug: 'bystander' });
const bystanderIdentity = await insertIdentity(database.db, { name: 'bystander-admin', authMethod: 'token-auth' });
await insertIdentityOrgMembership(database.db, { identityId: bystanderIdentity.id, orgId: org.id, role: 'admin' });
const bystanderToken = await tokenOf(bystanderIdentity.id);
const bystanderProject = (await call('POST', '/api/v2/workspace', bystanderToken, { projectName: 'Bystander' })).project;
for (let index = 0; index < 20; index++) {
  await call('POST', `/api/v3/secrets/raw/KEY_${index}`, bystanderToken, { workspaceId: bystanderProject.id, environment: 'dev', secretValue: `value-${index}` });
}

await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address() as { port: number };
process.stdout.write(
  `${JSON.stringify({
    url: `http://127.0.0.1:${address.port}`,
    hostile: { adminToken, orgId, projectId: project.id, viewers },
    bystander: { token: bystanderToken, projectId: bystanderProject.id },
  })}\n`,
);
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => database.close())
    .finally(() => process.exit(0));
});
