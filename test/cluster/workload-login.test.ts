import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { apiStatus, createTestNamespace, kubeClients, type TestNamespace } from '../k8s/helpers.ts';
import { type AccessFixture, accessFixture } from '../support/access-fixture.ts';
import { selfSignedCertificate } from '../support/local-https.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Kubernetes Auth against the real test control plane: service-account tokens from its own issuer
 * (TokenRequest), reviewed by its TokenReview API over TLS verified with its CA from the kubeconfig.
 */
process.env.COFFER_TEST_BACKEND ??= 'postgres';

const admin = kubeClients();
const rbac = admin.kc.makeApiClient(RbacAuthorizationV1Api);
const server = inject('kubeServer');
const caCert = Buffer.from(admin.kc.getCurrentCluster()!.caData!, 'base64').toString('utf8');
const base = '/api/v1/auth/kubernetes-auth/identities';
const SECRET = 'postgres://shop@db:5432/shop';

let app: TestApp;
let fx: AccessFixture;
let ns: TestNamespace;
let elsewhere: TestNamespace;
const bindings: string[] = [];

async function serviceAccount(namespace: string, name: string, { reviewer = false } = {}) {
  await admin.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  if (!reviewer) return;
  const binding = `coffer-test-${namespace}-${name}`;
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: binding },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
  bindings.push(binding);
}

/** A token of the service account from the control plane's TokenRequest API. */
async function tokenOf(namespace: string, name: string, audiences?: string[]): Promise<string> {
  const requested = await admin.core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { expirationSeconds: 600, ...(audiences ? { audiences } : {}) } },
  });
  return requested.status!.token!;
}

async function identityWith(name: string, config: Record<string, unknown>) {
  const identity = await fx.identity(name, 'member', 'viewer');
  const attached = await app.request('POST', `${base}/${identity.id}`, { token: fx.token, body: { kubernetesHost: server, caCert, ...config } });
  expect(attached.status, JSON.stringify(attached.body)).toBe(200);
  return identity.id;
}

const login = (identityId: string, jwt: string) => app.request('POST', '/api/v1/auth/kubernetes-auth/login', { body: { identityId, jwt } });

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app, 'k8s-login');
  await fx.call('POST', '/api/v3/secrets/raw/DATABASE_URL', { workspaceId: fx.projectId, environment: 'dev', secretValue: SECRET });
  ns = await createTestNamespace('workload-login');
  elsewhere = await createTestNamespace('workload-elsewhere');
  await serviceAccount(ns.name, 'reviewer', { reviewer: true });
  await serviceAccount(ns.name, 'web', { reviewer: true });
  await serviceAccount(ns.name, 'other');
  await serviceAccount(elsewhere.name, 'web');
});
afterAll(async () => {
  for (const name of bindings) {
    try {
      await rbac.deleteClusterRoleBinding({ name });
    } catch (error) {
      if (apiStatus(error) !== 404) throw error;
    }
  }
  await ns?.cleanup();
  await elsewhere?.cleanup();
  await app?.close();
});

describe('with a token reviewer JWT and a bound audience', () => {
  let identityId: string;
  beforeAll(async () => {
    identityId = await identityWith('k8s-web', {
      tokenReviewerJwt: await tokenOf(ns.name, 'reviewer'),
      allowedNamespaces: ns.name,
      allowedNames: 'web',
      allowedAudience: 'coffer',
    });
  });

  test('the allowed service account logs in with its projected token, and the access token reads secrets', async () => {
    const response = await login(identityId, await tokenOf(ns.name, 'web', ['coffer']));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ accessToken: expect.any(String), expiresIn: 2592000, accessTokenMaxTTL: 2592000, tokenType: 'Bearer' });
    const secrets = await app.request('GET', '/api/v3/secrets/raw', { token: response.body.accessToken, query: { workspaceId: fx.projectId, environment: 'dev' } });
    expect(secrets.status).toBe(200);
    expect(secrets.body.secrets).toEqual([expect.objectContaining({ secretKey: 'DATABASE_URL', secretValue: SECRET })]);
    const audit = await app.database.db.selectFrom('auditLogs').select('eventMetadata').where('eventType', '=', 'login-identity-kubernetes-auth').execute();
    expect(audit.map((row) => row.eventMetadata)).toEqual([expect.objectContaining({ identityId, subject: `${ns.name}/web` })]);
  });

  // Request shapes in test/clients/workload-login-contracts.test.ts (versions and source paths there):
  // the operator sends a fresh TokenRequest token (600 s, its serviceAccountTokenAudiences), the CLI
  // and ESO a projected token file; organizationSlug only when configured.
  test.each([
    ['Infisical operator v0.11.5 kubernetesAuth', 'k8-operator/v0.11.5', undefined],
    ['Infisical CLI v0.43.121 `login --method kubernetes --organization-slug`', 'cli', 'clients'],
    ['ESO v2.9.0 kubernetesAuthCredentials', 'infisical-go-sdk', undefined],
  ])('%s: its login request gets the four fields the SDK reads, and its refused login the 401 it reports', async (_name, userAgent, organizationSlug) => {
    const headers = { 'user-agent': userAgent, 'content-type': 'application/json', accept: 'application/json' };
    const send = async (jwt: string) =>
      app.request('POST', '/api/v1/auth/kubernetes-auth/login', { headers, body: { identityId, jwt, ...(organizationSlug ? { organizationSlug } : {}) } });
    const response = await send(await tokenOf(ns.name, 'web', ['coffer']));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ accessToken: expect.any(String), expiresIn: 2592000, accessTokenMaxTTL: 2592000, tokenType: 'Bearer' });
    const secrets = await app.request('GET', '/api/v3/secrets/raw', {
      headers: { 'user-agent': userAgent },
      token: response.body.accessToken,
      query: { workspaceId: fx.projectId, environment: 'dev' },
    });
    expect(secrets.body.secrets).toEqual([expect.objectContaining({ secretKey: 'DATABASE_URL', secretValue: SECRET })]);
    const refused = await send(await tokenOf(ns.name, 'other', ['coffer']));
    expect(refused).toMatchObject({ status: 401, body: { message: 'Invalid credentials', reqId: expect.stringMatching(/./) } });
  });

  test.each([
    ['another service account of the namespace', () => tokenOf(ns.name, 'other', ['coffer'])],
    ['the same name in another namespace', () => tokenOf(elsewhere.name, 'web', ['coffer'])],
    ['a token for another audience', () => tokenOf(ns.name, 'web', ['not-coffer'])],
    ['a token for the API server’s own audience', () => tokenOf(ns.name, 'web')],
    ['a user’s token, not a service account’s', async () => inject('kubeTokens').admin],
    ['a forged token', async () => (await tokenOf(ns.name, 'web', ['coffer'])).replace(/\.[^.]+$/, '.c2lnbmF0dXJl')],
  ])('%s is refused with a 401 that names nothing', async (_name, make) => {
    const response = await login(identityId, await make());
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ statusCode: 401, error: 'UnauthorizedError', message: 'Invalid credentials' });
    expect(JSON.stringify(response.body)).not.toContain(ns.name);
  });
});

describe('without a token reviewer JWT: the token reviews itself', () => {
  test('a service account allowed to create TokenReviews logs in; one that is not cannot', async () => {
    const identityId = await identityWith('k8s-self', { allowedNamespaces: ns.name });
    expect((await login(identityId, await tokenOf(ns.name, 'web'))).status).toBe(200);
    expect((await login(identityId, await tokenOf(ns.name, 'other'))).status).toBe(401);
  });
});

test('a CA that did not sign the API server’s certificate refuses every login', async () => {
  const identityId = await identityWith('k8s-wrong-ca', { caCert: (await selfSignedCertificate()).cert, tokenReviewerJwt: await tokenOf(ns.name, 'reviewer') });
  expect((await login(identityId, await tokenOf(ns.name, 'web'))).status).toBe(401);
  const fixed = await app.request('PATCH', `${base}/${identityId}`, { token: fx.token, body: { caCert } });
  expect(fixed.status).toBe(200);
  expect((await login(identityId, await tokenOf(ns.name, 'web'))).status).toBe(200);
});
