import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Actor } from '../../src/actor/actor.ts';
import type { Services } from '../../src/app/container.ts';
import { ANY_ADDRESS } from '../../src/universal-auth/trusted-ips.ts';
import { bootstrap, snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { json, type LocalServer, startLocalServer } from '../support/local-https.ts';
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.ts';
import * as OTPAuth from 'otpauth';
import { adminQuery } from '../support/postgres-server.ts';

/**
 * Every method of every service in the container, classified. A write must go
 * through the unit of work: this file runs each one and checks that it commits
 * with exactly its audit entries and change rows and wakes the in-process
 * subscribers before it returns (when it recorded a change), and that when its
 * audit row or its change row cannot be written nothing of it stays and nobody
 * is woken. A method added to a service and not listed here fails the first test.
 */

/** Not entry points: the unit of work's parts, and what runs inside units or requests. */
const INFRASTRUCTURE: Record<string, string> = {
  database: 'the connection',
  db: 'the query builder',
  unitOfWork: 'the unit of work itself',
  permissions: 'permission checks, called by the units',
  audit: "the audit writer, called by the units (and by reads' recordRead)",
  changes: 'the change feed, written by the units',
  keyring: 'encryption',
  lookups: 'cached reads',
  credentials: 'digests of client secrets and invite tokens',
  auth: "authentication: its only writes are a limited token's use count and an expired token's removal, bookkeeping of the request, not audited",
  loginThrottle: 'the login throttle: its attempt() runs the logins below in their unit; pruneIdle() deletes idle counters',
  changeFanout: 'the change stream of server-sent events',
  accessWatch: 'wakes held requests when a write that may end access commits; it writes nothing',
  webhookDispatcher:
    'background delivery: its bookkeeping (delivery rows, cursors, leases) is not audited; disabling a failing webhook is, in a unit of work (test/api/webhooks.test.ts)',
  auditStreamDispatcher:
    'background delivery of the audit log: its bookkeeping (cursors, leases, status) is not audited, or every delivery would be an entry to deliver (test/api/audit-log-streams.test.ts)',
};

/** Methods that only read (reads' audit entries are written after the read, by recordRead). */
const READS = new Set([
  'tokens.callerOf',
  'syncBarrier.assertMayWait',
  'identities.list',
  'identities.get',
  'orgMemberships.listUsers',
  'userMemberships.list',
  'identityMemberships.list',
  'identityMemberships.get',
  'roles.list',
  'roles.getBySlug',
  'privileges.get',
  'privileges.list',
  'bootstrap.isBootstrapped',
  'projects.list',
  'projects.get',
  'projects.getBySlug',
  'projects.effectivePermissions',
  'namespaceGrants.list',
  'projectClaims.authorizeUse',
  'projectClaims.claimantOfSlug',
  'clusters.list',
  'clusters.get',
  'environments.get',
  'folders.list',
  'folders.get',
  'auditExport.projectLogs',
  'auditExport.organizationLogs',
  'secretReader.list',
  'secretReader.get',
  'secretReader.foldersRead',
  'secretReader.readablePlaces',
  'operatorListings.list',
  'userLogin.organizations',
  'userLogin.organizationsAmong',
  'imports.list',
  'imports.get',
  'tags.list',
  'tags.getById',
  'tags.getBySlug',
  'integrationAuths.getById',
  'integrationAuths.listOfProject',
  'integrations.destinationsOf',
  'integrations.getById',
  'integrations.listOfProject',
  'integrations.listManaged',
  'projectEvents.subscribe',
  'changeStreams.open',
  'syncBarrier.wait',
  'syncBarrier.check',
  'mfa.status',
  'sessions.list',
  'oidcConfigs.get',
  'appConnections.list',
  'appConnections.get',
  'appConnections.getByName',
  'rotations.list',
  'rotations.get',
  'rotations.getByName',
  'rotations.generatedCredentials',
  'approvalPolicies.list',
  'approvalRequests.list',
  'approvalRequests.count',
  'approvalRequests.get',
  'snapshots.list',
  'snapshots.count',
  'snapshots.get',
  'webhooks.list',
  'webhooks.deliveries',
  'auditLogStreams.list',
  'auditLogStreams.get',
  'dynamicSecrets.get',
  'dynamicSecrets.list',
  'dynamicSecretLeases.get',
  'dynamicSecretLeases.list',
]);

/**
 * Writes that commit no audit row by design, each exercised by a case below. Their rows grant nothing:
 * what they prepare is audited by the write that uses it.
 */
const UNAUDITED_WRITES: Record<string, string> = {
  'oidcLogin.start':
    "stores a sign-in's single-use state (digest, nonce, sealed PKCE verifier, 10 minutes); audited by its callback (run by the oidcLogin.callback case)",
  'dynamicSecretLeases.revokeExpired':
    'claims due leases (a row update that grants nothing) and revokes each through the unit of dynamicSecretLeases.revoke (its case), audited as revoke-dynamic-secret-lease; test/api/dynamic-secrets.test.ts runs it',
  'dynamicSecretLeases.scheduleExpiry': 'starts the timer that runs revokeExpired',
  'mfa.enrol': 'stores a pending TOTP secret that no sign-in accepts until mfa.confirm, which is audited (run by the mfa.confirm case)',
};

/**
 * Writes made of several units on purpose: a secret rotation run claims its rotation and records the value it will
 * set (one unit, audited `secret-rotation-started`), sets it on an outside server, then publishes it (a second
 * unit, `secret-rotation-completed`) or records the failure (`secret-rotation-failed`). The first unit must stay
 * committed when a later one fails: it is what lets the next attempt finish with the same value. Each unit is a
 * unit of work; test/api/secret-rotations.test.ts covers the whole.
 */
const MULTI_UNIT_WRITES: Record<string, string> = {
  'rotations.createPostgres': 'creates the rotation (create-secret-rotation), then runs it once; a failed first run deletes it again',
  'rotations.createGenerated': 'creates the rotation (create-secret-rotation), then runs it once; a failed first run deletes it again',
  'rotations.rotateNow': 'one run: claim, server, publish',
  'rotations.runDue': "the scheduler's pass: one run per due rotation",
  'rotations.retireNow': 'sets an unknown password on the role not in use (the outside server), then records it (one unit, secret-rotation-retired)',
};

/** Runs inside a caller's unit of work (takes its WriteContext): covered by the cases that call it. */
const INSIDE_UNITS = new Set(['projects.createInTransaction']);

interface World {
  services: Services;
  admin: Actor;
  /** A new project (slug `p<n>`) with dev, staging, prod; returns its id and slug. */
  project(): Promise<{ id: string; slug: string }>;
  /** A new machine identity in the organization, member of `projectId` when given. */
  identity(projectId?: string): Promise<string>;
  /** A new user invited and accepted into the organization. */
  user(): Promise<{ id: string; email: string; password: string }>;
  origin: { ip: string; userAgent: string; userAgentType: 'other' };
  /** A real OpenID provider on 127.0.0.1 and the slug of the admin's organization. */
  sso: { provider: TestOidcProvider; orgSlug: string };
}

interface WriteCase {
  /** Audit event types the write commits, in order. */
  audit: string[];
  /** Change-feed kinds it records; none means it wakes nobody. */
  changes?: string[];
  /** The operator's own writes: change rows recorded, nobody in the process woken. */
  quiet?: boolean;
  /** Builds what the write needs (committed before the write is tried) and returns the write. */
  prepare(world: World): Promise<() => Promise<unknown>>;
}

/** A database of its own on the local PostgreSQL server, for dynamic secret leases (dropped in afterAll with their roles). */
const LEASE_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres';
const leaseDatabase = `coffer_mut_${process.pid}_${Date.now().toString(36)}`;
let leaseDatabaseMade: Promise<unknown> | undefined;

async function withDynamicSecret(world: World) {
  leaseDatabaseMade ??= adminQuery(LEASE_SERVER, `CREATE DATABASE ${leaseDatabase}`);
  await leaseDatabaseMade;
  const project = await world.project();
  const place = { projectSlug: project.slug, environmentSlug: 'dev', path: '/' };
  const name = `pg-${next()}`;
  const inputs = {
    client: 'postgres' as const,
    host: '127.0.0.1',
    port: 5432,
    database: leaseDatabase,
    username: 'postgres',
    password: '',
    creationStatement: `CREATE ROLE "{{username}}" WITH LOGIN VALID UNTIL '{{expiration}}';`,
    revocationStatement: 'DROP ROLE IF EXISTS "{{username}}";',
    renewStatement: `ALTER ROLE "{{username}}" VALID UNTIL '{{expiration}}';`,
  };
  await world.services.dynamicSecrets.create(world.admin, place, { name, provider: { type: 'sql-database', inputs }, defaultTTL: '1h', maxTTL: '1d' });
  return { place, name, inputs };
}

async function withLease(world: World) {
  const at = await withDynamicSecret(world);
  const created = await world.services.dynamicSecretLeases.create(world.admin, at.place, { dynamicSecretName: at.name });
  leaseRoles.add(created.data.DB_USERNAME);
  return { ...at, leaseId: created.lease.id };
}
const leaseRoles = new Set<string>();

let counter = 0;
const next = () => ++counter;
const dev = (projectId: string, path = '/') => ({ projectId, environment: 'dev', secretPath: path });
const folderAt = (projectId: string, path = '/') => ({ projectId, environment: 'dev', path });

async function withSecret(world: World, projectId: string, key = `KEY_${next()}`) {
  await world.services.secrets.create(world.admin, { ...dev(projectId), secretName: key, secretValue: 'value', type: 'shared' });
  return key;
}

/** A user of the organization who is a member of the project. */
async function withProjectUser(world: World, projectId: string): Promise<string> {
  const user = await world.user();
  await world.services.userMemberships.add(world.admin, projectId, { emails: [user.email], usernames: [] });
  return user.id;
}

/** A user of the organization, member of the project, as the actor its access token would give. */
async function withUserActor(world: World, projectId: string): Promise<Actor> {
  const user = await world.user();
  await world.services.userMemberships.add(world.admin, projectId, { emails: [user.email], usernames: [] });
  return { ...world.origin, kind: 'user', id: user.id, name: user.email, orgId: world.admin.orgId, orgRole: 'member', tokenId: null, authMethod: 'email' };
}

/** A project whose dev root needs one approval by `approver`, a secret there, and (unless `proposed` is false) an open request to update it. */
async function withRequest(world: World, proposed = true) {
  const project = await world.project();
  const secretName = await withSecret(world, project.id);
  const committer = await withUserActor(world, project.id);
  const approver = await withUserActor(world, project.id);
  await world.services.approvalPolicies.create(world.admin, project.id, {
    name: 'gate',
    environment: 'dev',
    secretPath: '/',
    approvers: [{ type: 'user', id: approver.id }],
    approvals: 1,
    enforcementLevel: 'hard',
  });
  const write = { op: 'update' as const, secretName, secretValue: 'proposed' };
  const request = proposed ? await world.services.approvalRequests.proposeIfProtected(committer, dev(project.id), [write]) : undefined;
  return { project, committer, approver, write, requestId: request?.id ?? '' };
}

async function withWebhook(world: World): Promise<string> {
  const project = await world.project();
  const created = await world.services.webhooks.create(world.admin, project.id, { environment: 'dev', secretPath: '/', webhookUrl: 'http://127.0.0.1:9/hook' });
  return created.webhook.id;
}

async function withPolicy(world: World) {
  const project = await world.project();
  const approver = await withProjectUser(world, project.id);
  const policy = await world.services.approvalPolicies.create(world.admin, project.id, {
    name: `gate-${next()}`,
    environment: 'dev',
    secretPath: '/',
    approvers: [{ type: 'user', id: approver }],
    approvals: 1,
    enforcementLevel: 'hard',
  });
  return { project, policyId: policy.id };
}

async function withIntegration(world: World) {
  const project = await world.project();
  const auth = await world.services.integrationAuths.createWithAccessToken(world.admin, { projectId: project.id, integration: 'github', accessToken: 'provider-token' });
  const integration = await world.services.integrations.create(world.admin, {
    integrationAuthId: auth.id,
    sourceEnvironment: 'dev',
    secretPath: '/',
    isActive: true,
    metadata: {},
    app: 'app',
  });
  return { project, auth, integration };
}

function managed(projectId: string, managedBy: string) {
  return { managedBy, projectId, environment: 'dev', secretPath: '/', app: 'target', owner: 'ns', targetEnvironment: 'ns' };
}

/** A session of `user` in the admin's organization, as the actor its token authenticates. */
async function signedIn(world: World, user: { email: string; password: string }): Promise<Actor> {
  const session = await world.services.userLogin.login({ email: user.email, password: user.password, organizationId: world.admin.orgId }, world.origin);
  return world.services.auth.authenticate(`Bearer ${session.accessToken}`, world.origin);
}

/** A user with a TOTP enrolment started (mfa.enrol) and a current code for it. */
async function withPendingTotp(world: World) {
  const user = await world.user();
  const { secret } = await world.services.mfa.enrol(user.id, world.origin);
  const code = () => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate();
  return { user, code };
}

/** The admin organization's OIDC configuration, made active against the test provider when missing. */
async function withOidcConfig(world: World) {
  const { provider, orgSlug } = world.sso;
  const existing = await world.services.oidcConfigs.get(world.admin, orgSlug).catch(() => undefined);
  if (existing) return;
  await world.services.oidcConfigs.create(world.admin, {
    orgSlug,
    discoveryURL: provider.issuer,
    clientId: provider.clientId,
    clientSecret: provider.clientSecret,
    allowedEmailDomains: ['example.com'],
    isActive: true,
    groupMappings: [],
  });
}

async function withUniversalAuth(world: World) {
  const identityId = await world.identity();
  await world.services.universalAuth.attach(world.admin, identityId, {
    accessTokenTtl: 3600,
    accessTokenMaxTtl: 0,
    accessTokenNumUsesLimit: 0,
    clientSecretTrustedIps: ANY_ADDRESS,
    accessTokenTrustedIps: ANY_ADDRESS,
  });
  return identityId;
}

const workloadSettings = { accessTokenTtl: 60, accessTokenMaxTtl: 0, accessTokenNumUsesLimit: 0, accessTokenTrustedIps: ANY_ADDRESS };
const jwtKeys = await generateKeyPair('ES256');
/** Answers every TokenReview "authenticated" for the one service account: what the write does with it is under test, not Kubernetes. */
let tokenReviews: LocalServer;
const OIDC_CALLBACK = 'http://127.0.0.1:8080/api/v1/sso/oidc/callback';

async function withKubernetesAuth(world: World, config: { kubernetesHost?: string; caCert?: string } = {}) {
  const identityId = await world.identity();
  const values = { kubernetesHost: 'https://k.example.com', caCert: '', allowedNamespaces: 'shop', allowedNames: '', allowedAudience: '', ...config };
  await world.services.kubernetesAuth.attach(world.admin, identityId, { ...values, ...workloadSettings });
  return identityId;
}

async function withJwtAuth(world: World) {
  const identityId = await world.identity();
  const values = {
    configurationType: 'static',
    jwksUrl: '',
    jwksCaCert: '',
    publicKeys: [await exportSPKI(jwtKeys.publicKey)],
    boundIssuer: '',
    boundAudiences: '',
    boundClaims: {},
    boundSubject: '',
  } as const;
  await world.services.jwtAuth.attach(world.admin, identityId, { ...values, publicKeys: [...values.publicKeys], ...workloadSettings });
  return identityId;
}

async function withClientSecret(world: World) {
  const identityId = await withUniversalAuth(world);
  const { clientSecret, clientSecretData } = await world.services.universalAuth.createClientSecret(world.admin, identityId, { description: '', numUsesLimit: 0, ttl: 0 });
  const { clientId } = await world.services.universalAuth.get(world.admin, identityId);
  return { identityId, clientSecret, clientSecretId: clientSecretData.id, clientId };
}

/** An identity's own access token, and that identity as an actor. */
async function withIdentityToken(world: World) {
  const { clientId, clientSecret } = await withClientSecret(world);
  const { accessToken } = await world.services.universalAuthLogin.login({ clientId, clientSecret }, world.origin);
  return { accessToken, actor: await world.services.auth.authenticate(`Bearer ${accessToken}`, world.origin) };
}

async function withRole(world: World) {
  const project = await world.project();
  const role = await world.services.roles.create(world.admin, project.id, {
    slug: `role-${next()}`,
    name: 'Role',
    permissions: [{ subject: 'secrets', action: ['read'] }],
  });
  return { project, role };
}

async function withPrivilege(world: World) {
  const project = await world.project();
  const identityId = await world.identity(project.id);
  const privilege = await world.services.privileges.create(world.admin, { identityId, projectSlug: project.slug }, { rules: [{ subject: 'secrets', action: ['read'] }] });
  return { project, identityId, privilege };
}

async function withUserMember(world: World) {
  const project = await world.project();
  const user = await world.user();
  const [membership] = await world.services.userMemberships.add(world.admin, project.id, { emails: [user.email], usernames: [] });
  return { project, membershipId: membership!.id };
}

async function withImport(world: World) {
  const project = await world.project();
  await world.services.folders.create(world.admin, { ...folderAt(project.id), name: 'shared' });
  const created = await world.services.imports.create(world.admin, { ...folderAt(project.id), source: { environment: 'staging', path: '/' } });
  return { project, importId: created.id };
}

async function withTag(world: World) {
  const project = await world.project();
  const tag = await world.services.tags.create(world.admin, project.id, { slug: `tag-${next()}`, color: '#ff0000' });
  return { project, tag };
}

/** The machine's PostgreSQL server (trust auth on 127.0.0.1:5432): signing in succeeds whatever the password. */
const localServer = {
  host: '127.0.0.1',
  port: 5432,
  database: 'postgres',
  username: 'postgres',
  password: 'unused-with-trust',
  sslEnabled: false,
  sslRejectUnauthorized: true,
};

async function withConnection(world: World) {
  const project = await world.project();
  const connection = await world.services.appConnections.create(world.admin, {
    name: `c-${next()}`,
    projectId: project.id,
    method: 'username-and-password',
    credentials: localServer,
  });
  return { project, connection };
}

async function withGeneratedRotation(world: World) {
  const project = await world.project();
  const rotation = await world.services.rotations.createGenerated(world.admin, {
    name: `r-${next()}`,
    projectId: project.id,
    environment: 'dev',
    secretPath: '/',
    isAutoRotationEnabled: true,
    rotationInterval: 1,
    rotateAtUtc: { hours: 0, minutes: 0 },
    consumerWaitMinutes: 60,
    parameters: { kind: 'uuid' },
    secretsMapping: { value: `ID_${next()}` },
  });
  return { project, rotation };
}

const claimant = () => ({ cluster: 'local', namespace: `ns-${next()}`, name: 'project', uid: `uid-${next()}` });

const WRITES: Record<string, WriteCase> = {
  'appConnections.create': {
    audit: ['create-app-connection'],
    prepare: async (world) => {
      const project = await world.project();
      const name = `c-${next()}`;
      return () => world.services.appConnections.create(world.admin, { name, projectId: project.id, method: 'username-and-password', credentials: localServer });
    },
  },
  'appConnections.update': {
    audit: ['update-app-connection'],
    prepare: async (world) => {
      const { connection } = await withConnection(world);
      return () => world.services.appConnections.update(world.admin, connection.id, { description: `changed ${next()}` });
    },
  },
  'appConnections.delete': {
    audit: ['delete-app-connection'],
    prepare: async (world) => {
      const { connection } = await withConnection(world);
      return () => world.services.appConnections.delete(world.admin, connection.id);
    },
  },
  'rotations.update': {
    audit: ['update-secret-rotation'],
    prepare: async (world) => {
      const { rotation } = await withGeneratedRotation(world);
      return () => world.services.rotations.update(world.admin, 'generated-secret', rotation.id, { rotationInterval: 2 });
    },
  },
  'rotations.delete': {
    audit: ['delete-secret-rotation'],
    prepare: async (world) => {
      const { rotation } = await withGeneratedRotation(world);
      return () => world.services.rotations.delete(world.admin, 'generated-secret', rotation.id);
    },
  },
  'tokens.renew': {
    audit: ['renew-identity-access-token'],
    prepare: async (world) => {
      const { accessToken, actor } = await withIdentityToken(world);
      return () => world.services.tokens.renew(actor, accessToken);
    },
  },
  'tokens.revoke': {
    audit: ['revoke-identity-access-token'],
    prepare: async (world) => {
      const { accessToken } = await withIdentityToken(world);
      return () => world.services.tokens.revoke(world.admin, accessToken);
    },
  },
  'tokens.logout': {
    audit: ['revoke-identity-access-token'],
    prepare: async (world) => {
      const { actor } = await withIdentityToken(world);
      return () => world.services.tokens.logout(actor);
    },
  },
  'identities.create': {
    audit: ['create-identity'],
    prepare: async (world) => () => world.services.identities.create(world.admin, { name: `id-${next()}`, organizationId: world.admin.orgId, role: 'member' }),
  },
  'identities.update': {
    audit: ['update-identity'],
    prepare: async (world) => {
      const id = await world.identity();
      return () => world.services.identities.update(world.admin, id, { name: `renamed-${next()}` });
    },
  },
  'identities.delete': {
    audit: ['delete-identity'],
    prepare: async (world) => {
      const id = await world.identity();
      return () => world.services.identities.delete(world.admin, id);
    },
  },
  'identities.ensureServiceIdentity': {
    audit: [],
    prepare: async (world) => () => world.services.identities.ensureServiceIdentity(world.admin.orgId, `service-${next()}`, 'admin'),
  },
  'universalAuth.attach': {
    audit: ['add-identity-universal-auth'],
    prepare: async (world) => {
      const id = await world.identity();
      return () =>
        world.services.universalAuth.attach(world.admin, id, {
          accessTokenTtl: 60,
          accessTokenMaxTtl: 0,
          accessTokenNumUsesLimit: 0,
          clientSecretTrustedIps: [],
          accessTokenTrustedIps: [],
        });
    },
  },
  'universalAuth.get': {
    audit: ['get-identity-universal-auth'],
    prepare: async (world) => {
      const id = await withUniversalAuth(world);
      return () => world.services.universalAuth.get(world.admin, id);
    },
  },
  'universalAuth.update': {
    audit: ['update-identity-universal-auth'],
    prepare: async (world) => {
      const id = await withUniversalAuth(world);
      return () => world.services.universalAuth.update(world.admin, id, { accessTokenTtl: 120 });
    },
  },
  'universalAuth.revoke': {
    audit: ['revoke-identity-universal-auth'],
    prepare: async (world) => {
      const id = await withUniversalAuth(world);
      return () => world.services.universalAuth.revoke(world.admin, id);
    },
  },
  'universalAuth.createClientSecret': {
    audit: ['create-identity-universal-auth-client-secret'],
    prepare: async (world) => {
      const id = await withUniversalAuth(world);
      return () => world.services.universalAuth.createClientSecret(world.admin, id, { description: 'd', numUsesLimit: 0, ttl: 0 });
    },
  },
  'universalAuth.listClientSecrets': {
    audit: ['get-identity-universal-auth-client-secret'],
    prepare: async (world) => {
      const id = await withUniversalAuth(world);
      return () => world.services.universalAuth.listClientSecrets(world.admin, id);
    },
  },
  'universalAuth.getClientSecret': {
    audit: ['get-identity-universal-auth-client-secret'],
    prepare: async (world) => {
      const { identityId, clientSecretId } = await withClientSecret(world);
      return () => world.services.universalAuth.getClientSecret(world.admin, identityId, clientSecretId);
    },
  },
  'universalAuth.revokeClientSecret': {
    audit: ['revoke-identity-universal-auth-client-secret'],
    prepare: async (world) => {
      const { identityId, clientSecretId } = await withClientSecret(world);
      return () => world.services.universalAuth.revokeClientSecret(world.admin, identityId, clientSecretId);
    },
  },
  'kubernetesAuth.attach': {
    audit: ['add-identity-kubernetes-auth'],
    prepare: async (world) => {
      const id = await world.identity();
      const values = { kubernetesHost: 'https://k.example.com', caCert: '', tokenReviewerJwt: 'reviewer', allowedNamespaces: '', allowedNames: '', allowedAudience: '' };
      return () => world.services.kubernetesAuth.attach(world.admin, id, { ...values, ...workloadSettings });
    },
  },
  'kubernetesAuth.get': {
    audit: ['get-identity-kubernetes-auth'],
    prepare: async (world) => {
      const id = await withKubernetesAuth(world);
      return () => world.services.kubernetesAuth.get(world.admin, id);
    },
  },
  'kubernetesAuth.update': {
    audit: ['update-identity-kubernetes-auth'],
    prepare: async (world) => {
      const id = await withKubernetesAuth(world);
      return () => world.services.kubernetesAuth.update(world.admin, id, { allowedNames: 'web', tokenReviewerJwt: 'new-reviewer' });
    },
  },
  'kubernetesAuth.revoke': {
    audit: ['revoke-identity-kubernetes-auth'],
    prepare: async (world) => {
      const id = await withKubernetesAuth(world);
      return () => world.services.kubernetesAuth.revoke(world.admin, id);
    },
  },
  'kubernetesAuthLogin.login': {
    audit: ['login-identity-kubernetes-auth'],
    prepare: async (world) => {
      const id = await withKubernetesAuth(world, { kubernetesHost: tokenReviews.url, caCert: tokenReviews.caCert });
      return () => world.services.kubernetesAuthLogin.login({ identityId: id, jwt: 'service-account-token' }, world.origin);
    },
  },
  'jwtAuth.attach': {
    audit: ['add-identity-jwt-auth'],
    prepare: async (world) => {
      const id = await world.identity();
      const values = {
        configurationType: 'jwks',
        jwksUrl: 'https://issuer.example.com/jwks',
        jwksCaCert: '',
        publicKeys: [],
        boundIssuer: '',
        boundAudiences: '',
        boundClaims: {},
        boundSubject: '',
      } as const;
      return () => world.services.jwtAuth.attach(world.admin, id, { ...values, publicKeys: [], ...workloadSettings });
    },
  },
  'jwtAuth.get': {
    audit: ['get-identity-jwt-auth'],
    prepare: async (world) => {
      const id = await withJwtAuth(world);
      return () => world.services.jwtAuth.get(world.admin, id);
    },
  },
  'jwtAuth.update': {
    audit: ['update-identity-jwt-auth'],
    prepare: async (world) => {
      const id = await withJwtAuth(world);
      return () => world.services.jwtAuth.update(world.admin, id, { boundSubject: 'me' });
    },
  },
  'jwtAuth.revoke': {
    audit: ['revoke-identity-jwt-auth'],
    prepare: async (world) => {
      const id = await withJwtAuth(world);
      return () => world.services.jwtAuth.revoke(world.admin, id);
    },
  },
  'jwtAuthLogin.login': {
    audit: ['login-identity-jwt-auth'],
    prepare: async (world) => {
      const id = await withJwtAuth(world);
      const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setExpirationTime('5m').sign(jwtKeys.privateKey);
      return () => world.services.jwtAuthLogin.login({ identityId: id, jwt }, world.origin);
    },
  },
  'universalAuthLogin.login': {
    audit: ['login-identity-universal-auth'],
    prepare: async (world) => {
      const { clientId, clientSecret } = await withClientSecret(world);
      return () => world.services.universalAuthLogin.login({ clientId, clientSecret }, world.origin);
    },
  },
  'invites.invite': {
    audit: ['invite-org-members'],
    prepare: async (world) => () =>
      world.services.invites.invite(world.admin, { organizationId: world.admin.orgId, emails: [`invited-${next()}@example.com`], role: 'member' }),
  },
  'invites.accept': {
    audit: ['accept-org-invite'],
    prepare: async (world) => {
      const email = `accepting-${next()}@example.com`;
      const [invite] = await world.services.invites.invite(world.admin, { organizationId: world.admin.orgId, emails: [email], role: 'member' });
      return () =>
        world.services.invites.accept({ email, organizationId: world.admin.orgId, inviteToken: invite!.inviteToken, password: 'a long password' }, world.origin);
    },
  },
  'oidcConfigs.create': {
    prepare: async (world) => () => withOidcConfig(world),
    audit: ['create-oidc-config'],
  },
  'oidcConfigs.update': {
    audit: ['update-oidc-config'],
    prepare: async (world) => {
      await withOidcConfig(world);
      return () => world.services.oidcConfigs.update(world.admin, { orgSlug: world.sso.orgSlug, allowedEmailDomains: ['example.com', `d${next()}.example.com`] });
    },
  },
  'oidcConfigs.updatePolicy': {
    audit: ['update-org-auth-policy'],
    // enforcing SSO or MFA would refuse the password logins of the other cases: the write is the same
    prepare: async (world) => () => world.services.oidcConfigs.updatePolicy(world.admin, world.admin.orgId, { authEnforced: false, enforceMfa: false }),
  },
  'oidcLogin.callback': {
    // each run is a whole sign-in (start, the provider's interaction, callback): a state and a code are single-use.
    // The state is consumed in its own commit before the exchange, so that a refused sign-in cannot be replayed.
    audit: ['login-user-sso'],
    prepare: async (world) => {
      await withOidcConfig(world);
      const { provider, orgSlug } = world.sso;
      const account = `sso-${next()}`;
      provider.accounts.set(account, { email: `${account}@example.com`, emailVerified: true, groups: [] });
      return async () => {
        const authorization = await world.services.oidcLogin.start(orgSlug, world.origin);
        provider.signInAs(account);
        const callback = await provider.authorize(authorization, OIDC_CALLBACK);
        return world.services.oidcLogin.callback(callback.search.slice(1), world.origin);
      };
    },
  },
  'mfa.confirm': {
    audit: ['enrol-mfa-totp'],
    prepare: async (world) => {
      const { user, code } = await withPendingTotp(world);
      return () => world.services.mfa.confirm(user.id, code(), world.origin);
    },
  },
  'mfa.reset': {
    audit: ['reset-user-mfa'],
    prepare: async (world) => {
      const { user, code } = await withPendingTotp(world);
      await world.services.mfa.confirm(user.id, code(), world.origin);
      return () => world.services.mfa.reset(world.admin, world.admin.orgId, user.id);
    },
  },
  'sessions.revoke': {
    audit: ['revoke-user-session'],
    prepare: async (world) => {
      const user = await world.user();
      const [actor, other] = [await signedIn(world, user), await signedIn(world, user)];
      return () => world.services.sessions.revoke(actor, other.tokenId!);
    },
  },
  'sessions.revokeAll': {
    audit: ['revoke-user-session'],
    prepare: async (world) => {
      const user = await world.user();
      const actor = await signedIn(world, user);
      await signedIn(world, user);
      return () => world.services.sessions.revokeAll(actor, true);
    },
  },
  'sessions.revokeMember': {
    audit: ['revoke-user-session'],
    prepare: async (world) => {
      const user = await world.user();
      await signedIn(world, user);
      return () => world.services.sessions.revokeMember(world.admin, world.admin.orgId, user.id);
    },
  },
  'userLogin.login': {
    audit: ['login-user'],
    prepare: async (world) => {
      const user = await world.user();
      return () => world.services.userLogin.login({ email: user.email, password: user.password }, world.origin);
    },
  },
  'userLogin.loginToChoose': {
    // a short-lived login token that can only choose an organization: nothing stored, nothing audited (the session is opened by selectOrganization)
    audit: [],
    prepare: async (world) => {
      const user = await world.user();
      return () => world.services.userLogin.loginToChoose({ email: user.email, password: user.password }, world.origin);
    },
  },
  'userLogin.selectOrganization': {
    audit: ['login-user'],
    prepare: async (world) => {
      const user = await world.user();
      return () => world.services.userLogin.selectOrganization(user.id, world.admin.orgId, world.origin);
    },
  },
  'userMemberships.add': {
    audit: ['add-workspace-members'],
    prepare: async (world) => {
      const project = await world.project();
      const user = await world.user();
      return () => world.services.userMemberships.add(world.admin, project.id, { emails: [user.email], usernames: [] });
    },
  },
  'userMemberships.updateRoles': {
    audit: ['update-user-workspace-role'],
    prepare: async (world) => {
      const { project, membershipId } = await withUserMember(world);
      return () => world.services.userMemberships.updateRoles(world.admin, project.id, membershipId, [{ role: 'viewer', isTemporary: false }]);
    },
  },
  'userMemberships.remove': {
    audit: ['remove-workspace-member'],
    prepare: async (world) => {
      const { project, membershipId } = await withUserMember(world);
      return () => world.services.userMemberships.remove(world.admin, project.id, membershipId);
    },
  },
  'identityMemberships.add': {
    audit: ['create-identity-project-membership'],
    prepare: async (world) => {
      const project = await world.project();
      const id = await world.identity();
      return () => world.services.identityMemberships.add(world.admin, project.id, id, [{ role: 'viewer', isTemporary: false }]);
    },
  },
  'identityMemberships.updateRoles': {
    audit: ['update-identity-project-membership'],
    prepare: async (world) => {
      const project = await world.project();
      const id = await world.identity(project.id);
      return () => world.services.identityMemberships.updateRoles(world.admin, project.id, id, [{ role: 'member', isTemporary: false }]);
    },
  },
  'identityMemberships.remove': {
    audit: ['delete-identity-project-membership'],
    prepare: async (world) => {
      const project = await world.project();
      const id = await world.identity(project.id);
      return () => world.services.identityMemberships.remove(world.admin, project.id, id);
    },
  },
  'roles.create': {
    audit: ['create-project-role'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.roles.create(world.admin, project.id, { slug: `role-${next()}`, name: 'R', permissions: [] });
    },
  },
  'roles.update': {
    audit: ['update-project-role'],
    prepare: async (world) => {
      const { project, role } = await withRole(world);
      return () => world.services.roles.update(world.admin, project.id, role.id, { name: 'Renamed' });
    },
  },
  'roles.delete': {
    audit: ['delete-project-role'],
    prepare: async (world) => {
      const { project, role } = await withRole(world);
      return () => world.services.roles.delete(world.admin, project.id, role.id);
    },
  },
  'privileges.create': {
    audit: ['create-identity-additional-privilege'],
    prepare: async (world) => {
      const project = await world.project();
      const identityId = await world.identity(project.id);
      return () => world.services.privileges.create(world.admin, { identityId, projectSlug: project.slug }, { rules: [{ subject: 'secrets', action: ['read'] }] });
    },
  },
  'privileges.update': {
    audit: ['update-identity-additional-privilege'],
    prepare: async (world) => {
      const { project, identityId, privilege } = await withPrivilege(world);
      return () => world.services.privileges.update(world.admin, { identityId, projectSlug: project.slug, privilegeSlug: privilege.slug }, { slug: `renamed-${next()}` });
    },
  },
  'privileges.delete': {
    audit: ['delete-identity-additional-privilege'],
    prepare: async (world) => {
      const { project, identityId, privilege } = await withPrivilege(world);
      return () => world.services.privileges.delete(world.admin, { identityId, projectSlug: project.slug, privilegeSlug: privilege.slug });
    },
  },
  'bootstrap.bootstrap': {
    // the one-time set-up is not audited; tried here on a set-up instance, it is refused and changes nothing
    audit: [],
    prepare: async (world) => () =>
      world.services.bootstrap.bootstrap({ email: 'second@example.com', password: 'a long password', organization: 'Second' }).catch((error: unknown) => error),
  },
  'projects.create': {
    audit: ['create-project'],
    prepare: async (world) => () => world.services.projects.create(world.admin, { projectName: 'Created', slug: `created-${next()}` }),
  },
  'projects.update': {
    audit: ['update-project'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.projects.update(world.admin, project.id, { name: 'Renamed' });
    },
  },
  'projects.delete': {
    audit: ['delete-project'],
    changes: ['project-deleted'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.projects.delete(world.admin, project.id);
    },
  },
  'namespaceGrants.create': {
    audit: ['create-namespace-grant'],
    changes: ['access'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.namespaceGrants.create(world.admin, project.id, { namespace: `ns-${next()}` });
    },
  },
  'namespaceGrants.revoke': {
    audit: ['delete-namespace-grant'],
    changes: ['access'],
    prepare: async (world) => {
      const project = await world.project();
      const grant = await world.services.namespaceGrants.create(world.admin, project.id, { namespace: `ns-${next()}` });
      return () => world.services.namespaceGrants.revoke(world.admin, project.id, grant.id);
    },
  },
  'projectClaims.declare': {
    audit: ['create-project', 'create-namespace-grant'],
    changes: ['access'],
    prepare: async (world) => () => world.services.projectClaims.declare(world.admin, claimant(), { slug: `declared-${next()}`, name: 'Declared' }),
  },
  'projectClaims.release': {
    audit: ['delete-project-claim'],
    prepare: async (world) => {
      const who = claimant();
      await world.services.projectClaims.declare(world.admin, who, { slug: `released-${next()}`, name: 'Released' });
      return () => world.services.projectClaims.release(world.admin, who, false);
    },
  },
  'projectClaims.dropOrphan': {
    audit: ['delete-project-claim'],
    prepare: async (world) => {
      const who = claimant();
      await world.services.projectClaims.declare(world.admin, who, { slug: `orphaned-${next()}`, name: 'Orphaned' });
      return () => world.services.projectClaims.dropOrphan(world.admin, who);
    },
  },
  'environments.create': {
    audit: ['create-environment'],
    changes: ['environment-created'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.environments.create(world.admin, project.id, { name: 'QA', slug: 'qa' });
    },
  },
  'environments.update': {
    audit: ['update-environment'],
    changes: ['environment-updated'],
    prepare: async (world) => {
      const project = await world.project();
      const [environment] = (await world.services.projects.get(world.admin, project.id)).environments;
      return () => world.services.environments.update(world.admin, project.id, environment!.id, { name: 'Renamed' });
    },
  },
  'environments.delete': {
    audit: ['delete-environment'],
    changes: ['environment-deleted'],
    prepare: async (world) => {
      const project = await world.project();
      const [environment] = (await world.services.projects.get(world.admin, project.id)).environments;
      return () => world.services.environments.delete(world.admin, project.id, environment!.id);
    },
  },
  'folders.create': {
    audit: ['create-folder'],
    changes: ['folder', 'folder'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.folders.create(world.admin, { ...folderAt(project.id, '/a'), name: 'b' });
    },
  },
  'folders.rename': {
    audit: ['update-folder'],
    changes: ['folder', 'folder'],
    prepare: async (world) => {
      const project = await world.project();
      const folder = await world.services.folders.create(world.admin, { ...folderAt(project.id), name: 'old' });
      return () => world.services.folders.rename(world.admin, folder.id, { ...folderAt(project.id), name: 'new' });
    },
  },
  'folders.delete': {
    audit: ['delete-folder'],
    changes: ['folder'],
    prepare: async (world) => {
      const project = await world.project();
      const folder = await world.services.folders.create(world.admin, { ...folderAt(project.id), name: 'gone' });
      return () => world.services.folders.delete(world.admin, folder.id, folderAt(project.id));
    },
  },
  'secrets.create': {
    audit: ['create-secret'],
    changes: ['secret'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.secrets.create(world.admin, { ...dev(project.id), secretName: 'NEW', secretValue: 'value', type: 'shared' });
    },
  },
  'secrets.update': {
    audit: ['update-secret'],
    changes: ['secret'],
    prepare: async (world) => {
      const project = await world.project();
      const key = await withSecret(world, project.id);
      return () => world.services.secrets.update(world.admin, { ...dev(project.id), secretName: key, secretValue: 'changed', type: 'shared' });
    },
  },
  'secrets.delete': {
    audit: ['delete-secret'],
    changes: ['secret'],
    prepare: async (world) => {
      const project = await world.project();
      const key = await withSecret(world, project.id);
      return () => world.services.secrets.delete(world.admin, { ...dev(project.id), secretName: key, type: 'shared' });
    },
  },
  'secretBatch.createMany': {
    audit: ['create-secrets'],
    changes: ['secret'],
    prepare: async (world) => {
      const project = await world.project();
      return () =>
        world.services.secretBatch.createMany(world.admin, dev(project.id), [
          { secretKey: 'A', secretValue: '1' },
          { secretKey: 'B', secretValue: '2' },
        ]);
    },
  },
  'secretBatch.updateMany': {
    audit: ['update-secrets'],
    changes: ['secret'],
    prepare: async (world) => {
      const project = await world.project();
      const key = await withSecret(world, project.id);
      return () => world.services.secretBatch.updateMany(world.admin, dev(project.id), [{ secretKey: key, secretValue: 'changed' }]);
    },
  },
  'secretBatch.deleteMany': {
    audit: ['delete-secrets'],
    changes: ['secret'],
    prepare: async (world) => {
      const project = await world.project();
      const key = await withSecret(world, project.id);
      return () => world.services.secretBatch.deleteMany(world.admin, dev(project.id), [{ secretKey: key, type: 'shared' }]);
    },
  },
  'secretTagging.attach': {
    audit: ['attach-secret-tags'],
    changes: ['tags'],
    prepare: async (world) => {
      const { project, tag } = await withTag(world);
      const key = await withSecret(world, project.id);
      return () =>
        world.services.secretTagging.attach(world.admin, {
          projectSlug: project.slug,
          environment: 'dev',
          secretPath: '/',
          secretName: key,
          type: 'shared',
          tagSlugs: [tag.slug],
        });
    },
  },
  'secretTagging.detach': {
    audit: ['detach-secret-tags'],
    changes: ['tags'],
    prepare: async (world) => {
      const { project, tag } = await withTag(world);
      const key = await withSecret(world, project.id);
      const input = { projectSlug: project.slug, environment: 'dev', secretPath: '/', secretName: key, type: 'shared' as const, tagSlugs: [tag.slug] };
      await world.services.secretTagging.attach(world.admin, input);
      return () => world.services.secretTagging.detach(world.admin, input);
    },
  },
  'imports.create': {
    audit: ['create-secret-import'],
    changes: ['import'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.imports.create(world.admin, { ...folderAt(project.id), source: { environment: 'staging', path: '/' } });
    },
  },
  'imports.update': {
    audit: ['update-secret-import'],
    changes: ['import'],
    prepare: async (world) => {
      const { project, importId } = await withImport(world);
      return () => world.services.imports.update(world.admin, importId, { ...folderAt(project.id), changes: { path: '/shared' } });
    },
  },
  'imports.delete': {
    audit: ['delete-secret-import'],
    changes: ['import'],
    prepare: async (world) => {
      const { project, importId } = await withImport(world);
      return () => world.services.imports.delete(world.admin, importId, folderAt(project.id));
    },
  },
  'approvalPolicies.create': {
    audit: ['create-secret-approval-policy'],
    prepare: async (world) => {
      const project = await world.project();
      const approver = await withProjectUser(world, project.id);
      return () =>
        world.services.approvalPolicies.create(world.admin, project.id, {
          name: 'gate',
          environment: 'dev',
          secretPath: '/**',
          approvers: [{ type: 'user', id: approver }],
          approvals: 1,
          enforcementLevel: 'hard',
        });
    },
  },
  'approvalPolicies.update': {
    audit: ['update-secret-approval-policy'],
    prepare: async (world) => {
      const { policyId } = await withPolicy(world);
      return () => world.services.approvalPolicies.update(world.admin, policyId, { enforcementLevel: 'soft' });
    },
  },
  'approvalPolicies.delete': {
    audit: ['delete-secret-approval-policy'],
    prepare: async (world) => {
      const { policyId } = await withPolicy(world);
      return () => world.services.approvalPolicies.delete(world.admin, policyId);
    },
  },
  'approvalRequests.proposeIfProtected': {
    audit: ['secret-approval-request'],
    prepare: async (world) => {
      const { project, committer, write } = await withRequest(world, false);
      return () => world.services.approvalRequests.proposeIfProtected(committer, dev(project.id), [write]);
    },
  },
  'approvalRequests.review': {
    audit: ['review-secret-approval-request'],
    prepare: async (world) => {
      const { approver, requestId } = await withRequest(world);
      return () => world.services.approvalRequests.review(approver, requestId, 'approved');
    },
  },
  'approvalRequests.setStatus': {
    audit: ['secret-approval-closed'],
    prepare: async (world) => {
      const { committer, requestId } = await withRequest(world);
      return () => world.services.approvalRequests.setStatus(committer, requestId, 'close');
    },
  },
  'approvalRequests.merge': {
    audit: ['update-secret', 'secret-approval-merged'],
    changes: ['secret'],
    prepare: async (world) => {
      const { approver, requestId } = await withRequest(world);
      await world.services.approvalRequests.review(approver, requestId, 'approved');
      return () => world.services.approvalRequests.merge(approver, requestId, {});
    },
  },
  'webhooks.create': {
    audit: ['create-webhook'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.webhooks.create(world.admin, project.id, { environment: 'dev', secretPath: '/', webhookUrl: 'http://127.0.0.1:9/hook' });
    },
  },
  'webhooks.setDisabled': {
    audit: ['update-webhook-status'],
    prepare: async (world) => {
      const webhookId = await withWebhook(world);
      return () => world.services.webhooks.setDisabled(world.admin, webhookId, true);
    },
  },
  'webhooks.replay': {
    audit: ['update-webhook-status'],
    prepare: async (world) => {
      const webhookId = await withWebhook(world);
      return () => world.services.webhooks.replay(world.admin, webhookId, 0);
    },
  },
  'webhooks.test': {
    audit: ['test-webhook'],
    prepare: async (world) => {
      const webhookId = await withWebhook(world);
      return () => world.services.webhooks.test(world.admin, webhookId);
    },
  },
  'webhooks.delete': {
    audit: ['delete-webhook'],
    prepare: async (world) => {
      const webhookId = await withWebhook(world);
      return () => world.services.webhooks.delete(world.admin, webhookId);
    },
  },
  'snapshots.restore': {
    audit: ['restore-secrets'],
    changes: ['secret'],
    prepare: async (world) => {
      const project = await world.project();
      await withSecret(world, project.id);
      const revision = await world.services.changes.latestRevision(world.services.db, project.id);
      await withSecret(world, project.id);
      return () => world.services.snapshots.restore(world.admin, project.id, { environment: 'dev', secretPath: '/', recursive: false, revision });
    },
  },
  'snapshots.rollback': {
    audit: ['restore-secrets'],
    changes: ['secret'],
    prepare: async (world) => {
      const project = await world.project();
      await withSecret(world, project.id);
      const revision = await world.services.changes.latestRevision(world.services.db, project.id);
      await withSecret(world, project.id);
      return () => world.services.snapshots.rollback(world.admin, String(revision));
    },
  },
  'tags.create': {
    audit: ['create-tag'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.tags.create(world.admin, project.id, { slug: 'fresh', color: '#00ff00' });
    },
  },
  'tags.update': {
    audit: ['update-tag'],
    changes: ['tags'],
    prepare: async (world) => {
      const { project, tag } = await withTag(world);
      return () => world.services.tags.update(world.admin, project.id, tag.id, { color: '#0000ff' });
    },
  },
  'tags.delete': {
    audit: ['delete-tag'],
    changes: ['tags'],
    prepare: async (world) => {
      const { project, tag } = await withTag(world);
      return () => world.services.tags.delete(world.admin, project.id, tag.id);
    },
  },
  'integrationAuths.createWithAccessToken': {
    audit: ['authorize-integration'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.integrationAuths.createWithAccessToken(world.admin, { projectId: project.id, integration: 'github', accessToken: 'provider-token' });
    },
  },
  'integrationAuths.delete': {
    audit: ['unauthorize-integration'],
    changes: ['integration'],
    prepare: async (world) => {
      const { auth } = await withIntegration(world);
      return () => world.services.integrationAuths.delete(world.admin, auth.id);
    },
  },
  'integrationAuths.deleteByType': {
    audit: ['unauthorize-integration'],
    changes: ['integration'],
    prepare: async (world) => {
      const { project } = await withIntegration(world);
      return () => world.services.integrationAuths.deleteByType(world.admin, { projectId: project.id, integration: 'github' });
    },
  },
  'integrationAuths.ensureKubernetesAuth': {
    audit: ['authorize-integration'],
    prepare: async (world) => {
      const project = await world.project();
      return () => world.services.integrationAuths.ensureKubernetesAuth(world.admin, project.id);
    },
  },
  'integrations.create': {
    audit: ['create-integration'],
    changes: ['integration'],
    prepare: async (world) => {
      const project = await world.project();
      const auth = await world.services.integrationAuths.createWithAccessToken(world.admin, {
        projectId: project.id,
        integration: 'github',
        accessToken: 'provider-token',
      });
      return () =>
        world.services.integrations.create(world.admin, { integrationAuthId: auth.id, sourceEnvironment: 'dev', secretPath: '/', isActive: true, metadata: {} });
    },
  },
  'integrations.update': {
    audit: ['update-integration'],
    changes: ['integration'],
    prepare: async (world) => {
      const { integration } = await withIntegration(world);
      return () => world.services.integrations.update(world.admin, integration.id, { isActive: false });
    },
  },
  'integrations.delete': {
    audit: ['delete-integration'],
    changes: ['integration'],
    prepare: async (world) => {
      const { integration } = await withIntegration(world);
      return () => world.services.integrations.delete(world.admin, integration.id, { shouldDeleteIntegrationSecrets: false });
    },
  },
  'integrations.sync': {
    audit: ['manual-sync-integration'],
    changes: ['integration'],
    prepare: async (world) => {
      const { integration } = await withIntegration(world);
      return () => world.services.integrations.sync(world.admin, integration.id);
    },
  },
  'integrations.upsertManaged': {
    audit: ['authorize-integration', 'create-integration'],
    changes: ['integration'],
    quiet: true,
    prepare: async (world) => {
      const project = await world.project();
      // as the in-process operator calls it (no token): quiet; an operator over HTTP is not (test/api/change-stream.test.ts)
      return () => world.services.integrations.upsertManaged({ ...world.admin, tokenId: null }, managed(project.id, `ns/managed-${next()}`));
    },
  },
  'integrations.upsertManagedRecord': {
    audit: ['authorize-integration', 'create-integration'],
    changes: ['integration'],
    quiet: true,
    prepare: async (world) => {
      const project = await world.project();
      // upsertManaged with the record it inserted, as the in-process port calls it
      return () => world.services.integrations.upsertManagedRecord({ ...world.admin, tokenId: null }, managed(project.id, `ns/managed-${next()}`));
    },
  },
  'integrations.deleteManaged': {
    audit: ['delete-integration'],
    changes: ['integration'],
    quiet: true,
    prepare: async (world) => {
      const project = await world.project();
      const managedBy = `ns/managed-${next()}`;
      await world.services.integrations.upsertManaged(world.admin, managed(project.id, managedBy));
      return () => world.services.integrations.deleteManaged({ ...world.admin, tokenId: null }, managedBy);
    },
  },
  'integrations.recordSyncResult': {
    // the operator's bookkeeping after a sync: neither audited nor in the change feed (it would wake the operator again)
    audit: [],
    prepare: async (world) => {
      const { integration } = await withIntegration(world);
      return () => world.services.integrations.recordSyncResult(integration.id, { isSynced: true, syncMessage: null, syncedRevision: 1 });
    },
  },
  'integrations.recordSyncResultAs': {
    // recordSyncResult for the operator of the record's cluster, after its checks: the same bookkeeping
    audit: [],
    prepare: async (world) => {
      const project = await world.project();
      const record = await world.services.integrations.upsertManaged(world.admin, managed(project.id, `ns/synced-${next()}`));
      return () => world.services.integrations.recordSyncResultAs(world.admin, record.id, { isSynced: true, syncMessage: null, syncedRevision: 1 });
    },
  },
  'integrations.recordReloadResult': {
    // how far a workload reload got: bookkeeping like recordSyncResult
    audit: [],
    prepare: async (world) => {
      const { integration } = await withIntegration(world);
      return () => world.services.integrations.recordReloadResult(integration.id, { reloadedRevision: 1 });
    },
  },
  'integrations.recordReloadResultAs': {
    audit: [],
    prepare: async (world) => {
      const project = await world.project();
      const record = await world.services.integrations.upsertManaged(world.admin, managed(project.id, `ns/reloaded-${next()}`));
      return () => world.services.integrations.recordReloadResultAs(world.admin, record.id, { reloadedRevision: 1 });
    },
  },
  'auditLogStreams.create': {
    audit: ['create-audit-log-stream'],
    prepare: async (world) => () => world.services.auditLogStreams.create(world.admin, { url: 'http://127.0.0.1:9/audit' }),
  },
  'auditLogStreams.update': {
    audit: ['update-audit-log-stream'],
    prepare: async (world) => {
      const { auditLogStream } = await world.services.auditLogStreams.create(world.admin, { url: 'http://127.0.0.1:9/audit' });
      return () => world.services.auditLogStreams.update(world.admin, auditLogStream.id, { headers: [{ key: 'Authorization', value: 'Bearer x' }] });
    },
  },
  'auditLogStreams.delete': {
    audit: ['delete-audit-log-stream'],
    prepare: async (world) => {
      const { auditLogStream } = await world.services.auditLogStreams.create(world.admin, { url: 'http://127.0.0.1:9/audit' });
      return () => world.services.auditLogStreams.delete(world.admin, auditLogStream.id);
    },
  },
  'clusters.register': {
    audit: ['create-cluster'],
    prepare: async (world) => () => world.services.clusters.register(world.admin, { name: `cluster-${next()}` }),
  },
  'clusters.delete': {
    audit: ['delete-cluster'],
    prepare: async (world) => {
      const cluster = await world.services.clusters.register(world.admin, { name: `cluster-${next()}` });
      return () => world.services.clusters.delete(world.admin, cluster.id);
    },
  },
  'dynamicSecrets.create': {
    audit: ['create-dynamic-secret'],
    prepare: async (world) => {
      const { place, inputs } = await withDynamicSecret(world);
      return () => world.services.dynamicSecrets.create(world.admin, place, { name: `pg-${next()}`, provider: { type: 'sql-database', inputs }, defaultTTL: '1h' });
    },
  },
  'dynamicSecrets.update': {
    audit: ['update-dynamic-secret'],
    prepare: async (world) => {
      const { place, name } = await withDynamicSecret(world);
      return () => world.services.dynamicSecrets.update(world.admin, place, name, { defaultTTL: '2h' });
    },
  },
  'dynamicSecrets.delete': {
    audit: ['delete-dynamic-secret'],
    prepare: async (world) => {
      const { place, name } = await withDynamicSecret(world);
      return () => world.services.dynamicSecrets.delete(world.admin, place, name, false);
    },
  },
  'dynamicSecretLeases.create': {
    audit: ['create-dynamic-secret-lease'],
    prepare: async (world) => {
      const { place, name } = await withDynamicSecret(world);
      return async () => {
        const created = await world.services.dynamicSecretLeases.create(world.admin, place, { dynamicSecretName: name });
        leaseRoles.add(created.data.DB_USERNAME);
      };
    },
  },
  'dynamicSecretLeases.renew': {
    audit: ['renew-dynamic-secret-lease'],
    prepare: async (world) => {
      const { place, leaseId } = await withLease(world);
      return () => world.services.dynamicSecretLeases.renew(world.admin, place, leaseId, { ttl: '1m' });
    },
  },
  'dynamicSecretLeases.revoke': {
    audit: ['revoke-dynamic-secret-lease'],
    prepare: async (world) => {
      const { place, leaseId } = await withLease(world);
      return () => world.services.dynamicSecretLeases.revoke(world.admin, place, leaseId, false);
    },
  },
  'clusters.bindIdentity': {
    audit: ['bind-cluster-identity'],
    prepare: async (world) => {
      const cluster = await world.services.clusters.register(world.admin, { name: `cluster-${next()}` });
      const identityId = await world.identity();
      return () => world.services.clusters.bindIdentity(world.admin, cluster.id, identityId);
    },
  },
  'clusters.unbindIdentity': {
    audit: ['unbind-cluster-identity'],
    prepare: async (world) => {
      const cluster = await world.services.clusters.register(world.admin, { name: `cluster-${next()}` });
      const identityId = await world.identity();
      await world.services.clusters.bindIdentity(world.admin, cluster.id, identityId);
      return () => world.services.clusters.unbindIdentity(world.admin, cluster.id, identityId);
    },
  },
};

let app: TestApp;
let world: World;
let sso: TestOidcProvider | undefined;

beforeAll(async () => {
  tokenReviews = await startLocalServer((_request, response) =>
    json(response, 201, { status: { authenticated: true, user: { username: 'system:serviceaccount:shop:web' } } }),
  );
  const provider = await startOidcProvider([OIDC_CALLBACK]);
  sso = provider;
  app = await startTestApp();
  const { token } = await bootstrap(app);
  const origin = { ip: '127.0.0.1', userAgent: 'mutations test', userAgentType: 'other' as const };
  const services = app.services;
  // the admin acts for this server's own cluster too, as the in-process operator does (its claims, records and sync results)
  const admin = { ...(await services.auth.authenticate(`Bearer ${token}`, origin)), cluster: 'local' };
  world = {
    services,
    admin,
    origin,
    sso: { provider, orgSlug: (await app.database.db.selectFrom('organizations').select('slug').where('id', '=', admin.orgId).executeTakeFirstOrThrow()).slug },
    async project() {
      const slug = `p${next()}`;
      const created = await services.projects.create(admin, { projectName: slug, slug });
      return { id: created.id, slug };
    },
    async identity(projectId) {
      const identity = await services.identities.create(admin, { name: `identity-${next()}`, organizationId: admin.orgId, role: 'member' });
      if (projectId) await services.identityMemberships.add(admin, projectId, identity.id, [{ role: 'viewer', isTemporary: false }]);
      return identity.id;
    },
    async user() {
      const email = `user-${next()}@example.com`;
      const password = 'a long password';
      const [invite] = await services.invites.invite(admin, { organizationId: admin.orgId, emails: [email], role: 'member' });
      const accepted = await services.invites.accept({ email, organizationId: admin.orgId, inviteToken: invite!.inviteToken, password }, origin);
      return { id: accepted.user.id, email, password };
    },
  };
});
afterAll(async () => {
  for (const role of leaseRoles) await adminQuery(LEASE_SERVER, `DROP ROLE IF EXISTS "${role}"`);
  if (leaseDatabaseMade) await adminQuery(LEASE_SERVER, `DROP DATABASE IF EXISTS ${leaseDatabase}`);
  await tokenReviews?.close();
  await app?.close();
  await sso?.close();
});

function methodsOf(services: Services): string[] {
  const names: string[] = [];
  for (const [name, service] of Object.entries(services)) {
    if (Object.hasOwn(INFRASTRUCTURE, name)) continue;
    const prototype = Object.getPrototypeOf(service) as object;
    for (const method of Object.getOwnPropertyNames(prototype)) if (method !== 'constructor') names.push(`${name}.${method}`);
  }
  return names.sort();
}

test('every service method is classified: a write with its case here, a read, or run inside a unit', () => {
  const methods = methodsOf(app.services);
  const classified = new Set([...Object.keys(WRITES), ...READS, ...INSIDE_UNITS, ...Object.keys(UNAUDITED_WRITES), ...Object.keys(MULTI_UNIT_WRITES)]);
  expect(
    methods.filter((method) => !classified.has(method)),
    'methods not listed in this file',
  ).toEqual([]);
  expect(
    [...classified].filter((method) => !methods.includes(method)),
    'listed methods that do not exist',
  ).toEqual([]);
});

const auditRows = async () => app.database.db.selectFrom('auditLogs').select(['id', 'eventType']).orderBy('id').execute();
const changeRows = async () => app.database.db.selectFrom('changeLog').select(['revision', 'kind']).orderBy('revision').execute();

/** Makes every INSERT into `table` fail, for the length of `work`. */
async function refusingInserts<T>(table: 'audit_logs' | 'change_log', work: () => Promise<T>): Promise<T> {
  const db = app.database.db;
  await sql.raw(`CREATE FUNCTION refuse_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'insert refused by the test'; END $$`).execute(db);
  await sql.raw(`CREATE TRIGGER refuse_insert BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION refuse_insert()`).execute(db);
  try {
    return await work();
  } finally {
    await sql.raw(`DROP TRIGGER refuse_insert ON ${table}`).execute(db);
    await sql.raw('DROP FUNCTION refuse_insert()').execute(db);
  }
}

/** Wake-ups of in-process change subscribers while `work` runs (counted when its promise settles). */
async function countingWakeUps(work: () => Promise<unknown>): Promise<{ wakeUps: number; error?: unknown }> {
  let wakeUps = 0;
  const listener = () => void wakeUps++;
  app.services.changes.on('committed', listener);
  try {
    await work();
    return { wakeUps };
  } catch (error) {
    return { wakeUps, error };
  } finally {
    app.services.changes.off('committed', listener);
  }
}

describe.each(Object.entries(WRITES))('%s', (_name, write) => {
  test('commits its audit entries and change rows together, and wakes subscribers before it returns', async () => {
    const run = await write.prepare(world);
    const audit = await auditRows();
    const changes = await changeRows();

    if (write.audit.length > 0) {
      const refused = await refusingInserts('audit_logs', () => countingWakeUps(run));
      expect(refused.error, 'the write fails when its audit row cannot be written').toBeDefined();
      expect(refused.wakeUps).toBe(0);
      expect(await auditRows()).toEqual(audit);
      expect(await changeRows()).toEqual(changes);
    }
    if (write.changes) {
      const before = await snapshotDatabase(app.database);
      const refused = await refusingInserts('change_log', () => countingWakeUps(run));
      expect(refused.error, 'the write fails when its change row cannot be written').toBeDefined();
      expect(refused.wakeUps).toBe(0);
      expect(await snapshotDatabase(app.database), 'nothing of the write stays: its audit rows neither').toEqual(before);
    }

    const done = await countingWakeUps(run);
    expect(done.error).toBeUndefined();
    expect(done.wakeUps, 'woken at once, in process (NOTIFY plays no part in this count)').toBe(write.changes && !write.quiet ? 1 : 0);
    const before = new Set(audit.map((row) => row.id));
    const added = (await auditRows()).filter((row) => !before.has(row.id)).map((row) => row.eventType);
    expect(added.sort()).toEqual([...write.audit].sort());
    expect((await changeRows()).slice(changes.length).map((row) => row.kind)).toEqual(write.changes ?? []);
  });
});
