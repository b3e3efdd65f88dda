import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Keyring } from '../../src/crypto/keyring.ts';
import { rotateRootKey } from '../../src/installation/root-key.ts';
import { openReviewerJwt } from '../../src/kubernetes-auth/reviewer-jwt-cipher.ts';
import { type AccessFixture, accessFixture, inject } from '../support/access-fixture.ts';
import { json, type LocalServer, startLocalServer } from '../support/local-https.ts';
import { snapshotDatabase, startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Kubernetes Auth's configuration routes, and what Coffer's call to a TokenReview API looks like and survives.
 * Logins against a real control plane: test/cluster/workload-login.test.ts.
 */
let app: TestApp;
let fx: AccessFixture;
let apiserver: LocalServer;
const base = '/api/v1/auth/kubernetes-auth/identities';
const REVIEWER = 'reviewer-jwt-SECRET-6d1f';
const CALLER = 'caller-jwt-SECRET-91ab';

beforeAll(async () => {
  app = await startTestApp();
  fx = await accessFixture(app, 'k8s-project');
  // Stands in for the network, not for Kubernetes: what Coffer sends, and answers no apiserver should give.
  apiserver = await startLocalServer((request, response) => {
    if (request.url?.startsWith('/redirect')) return void response.writeHead(307, { location: 'https://169.254.169.254/' }).end();
    if (request.url?.startsWith('/huge')) return json(response, 201, { status: { authenticated: true }, padding: 'x'.repeat(400 * 1024) });
    if (request.url?.startsWith('/error')) return json(response, 500, { message: 'apiserver detail LEAKED-BODY' });
    json(response, 201, { status: { authenticated: false, error: 'LEAKED-BODY' } });
  });
});
afterAll(async () => {
  await apiserver?.close();
  await app?.close();
});

async function attach(name: string, body: Record<string, unknown>) {
  const identity = await fx.identity(name, 'member', 'viewer');
  const response = await app.request('POST', `${base}/${identity.id}`, { token: fx.token, body });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return { ...identity, config: response.body.identityKubernetesAuth };
}

const login = (identityId: string, jwt: string) => inject(app, 'POST', '/api/v1/auth/kubernetes-auth/login', { body: { identityId, jwt } });

describe('configuration routes', () => {
  test('attach answers Infisical’s shape with the defaults, and the token reviewer JWT is never answered, audited or stored in clear', async () => {
    const identity = await attach('k8s-defaults', {
      kubernetesHost: 'https://kubernetes.default.svc/',
      tokenReviewerJwt: REVIEWER,
      allowedNamespaces: 'shop, shop-staging',
    });
    expect(identity.config).toEqual({
      id: expect.any(String),
      identityId: identity.id,
      kubernetesHost: 'https://kubernetes.default.svc',
      caCert: '',
      allowedNamespaces: 'shop, shop-staging',
      allowedNames: '',
      allowedAudience: '',
      accessTokenTTL: 2592000,
      accessTokenMaxTTL: 2592000,
      accessTokenNumUsesLimit: 0,
      accessTokenTrustedIps: [
        { ipAddress: '0.0.0.0', type: 'ipv4', prefix: 0 },
        { ipAddress: '::', type: 'ipv6', prefix: 0 },
      ],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const fetched = await app.request('GET', `${base}/${identity.id}`, { token: fx.token });
    expect(fetched.body.identityKubernetesAuth).toEqual(identity.config);
    const updated = await app.request('PATCH', `${base}/${identity.id}`, { token: fx.token, body: { allowedNames: 'web', accessTokenTTL: 60 } });
    expect(updated.body.identityKubernetesAuth).toMatchObject({ allowedNamespaces: 'shop, shop-staging', allowedNames: 'web', accessTokenTTL: 60 });
    const dump = JSON.stringify(await snapshotDatabase(app.database));
    expect(dump).not.toContain(REVIEWER);
    expect(JSON.stringify([identity.config, fetched.body, updated.body])).not.toContain(REVIEWER);
    const audit = await app.database.db.selectFrom('auditLogs').select(['eventType', 'eventMetadata']).execute();
    expect(audit.map((row) => row.eventType)).toEqual(
      expect.arrayContaining(['add-identity-kubernetes-auth', 'get-identity-kubernetes-auth', 'update-identity-kubernetes-auth']),
    );
    expect(JSON.stringify(audit)).not.toContain(REVIEWER);
    expect(app.logs.join('\n')).not.toContain(REVIEWER);
    const row = await app.database.db.selectFrom('identityKubernetesAuths').selectAll().where('identityId', '=', identity.id).executeTakeFirstOrThrow();
    expect(openReviewerJwt(new Keyring(Buffer.from(app.keys.encryptionKey, 'base64')), identity.id, row.encryptedTokenReviewerJwt)).toBe(REVIEWER);
    const cleared = await app.request('PATCH', `${base}/${identity.id}`, { token: fx.token, body: { tokenReviewerJwt: null } });
    expect(cleared.status).toBe(200);
    const after = await app.database.db.selectFrom('identityKubernetesAuths').selectAll().where('identityId', '=', identity.id).executeTakeFirstOrThrow();
    expect(after.encryptedTokenReviewerJwt).toBeNull();
  });

  test('a sealed token reviewer JWT belongs to its identity: copied into another row it does not open', async () => {
    const first = await attach('k8s-seal-a', { kubernetesHost: 'https://a.example.com', tokenReviewerJwt: REVIEWER });
    const second = await attach('k8s-seal-b', { kubernetesHost: 'https://b.example.com' });
    const sealed = await app.database.db
      .selectFrom('identityKubernetesAuths')
      .select('encryptedTokenReviewerJwt')
      .where('identityId', '=', first.id)
      .executeTakeFirstOrThrow();
    const keyring = new Keyring(Buffer.from(app.keys.encryptionKey, 'base64'));
    expect(() => openReviewerJwt(keyring, second.id, sealed.encryptedTokenReviewerJwt)).toThrow();
  });

  test.each([
    ['an http host', { kubernetesHost: 'http://kubernetes.default.svc' }, 422],
    ['a host with credentials', { kubernetesHost: 'https://user:pw@kubernetes.default.svc' }, 422],
    ['a host with a query', { kubernetesHost: 'https://kubernetes.default.svc/?x=1' }, 422],
    ['a host that is not a URL', { kubernetesHost: 'kubernetes.default.svc' }, 422],
    ['no host', {}, 422],
    ['a CA that is not a certificate', { kubernetesHost: 'https://k.example.com', caCert: '-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----' }, 422],
    ['a TTL above the max TTL', { kubernetesHost: 'https://k.example.com', accessTokenTTL: 100, accessTokenMaxTTL: 50 }, 400],
    ['an invalid trusted range', { kubernetesHost: 'https://k.example.com', accessTokenTrustedIps: [{ ipAddress: '10.0.0.0/33' }] }, 422],
  ])('attach with %s is refused and changes nothing', async (_name, body, status) => {
    const identity = await fx.identity(`k8s-bad-${Math.random()}`);
    const before = await snapshotDatabase(app.database);
    const response = await app.request('POST', `${base}/${identity.id}`, { token: fx.token, body });
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, error: expect.any(String), reqId: expect.any(String) });
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });

  test('attaching twice, identities without Kubernetes Auth, unknown ones and another organization’s are refused and change nothing', async () => {
    const identity = await attach('k8s-twice', { kubernetesHost: 'https://k.example.com' });
    const bare = await fx.identity('k8s-bare');
    const foreign = await fx.foreignAdmin('k8s-foreign-org');
    const before = await snapshotDatabase(app.database);
    expect((await app.request('POST', `${base}/${identity.id}`, { token: fx.token, body: { kubernetesHost: 'https://k.example.com' } })).status).toBe(400);
    expect(
      (await app.request('POST', `${base}/00000000-0000-4000-8000-000000000000`, { token: fx.token, body: { kubernetesHost: 'https://k.example.com' } })).status,
    ).toBe(404);
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const body = method === 'PATCH' ? { body: { allowedNames: 'x' } } : {};
      expect((await app.request(method, `${base}/${bare.id}`, { token: fx.token, ...body })).status, method).toBe(404);
      expect((await app.request(method, `${base}/${identity.id}`, { token: foreign, ...body })).status, method).toBe(404);
    }
    expect((await app.request('PATCH', `${base}/${identity.id}`, { token: fx.token, body: { accessTokenTTL: 10, accessTokenMaxTTL: 5 } })).status).toBe(400);
    expect(await snapshotDatabase(app.database)).toEqual(before);
  });
});

describe('the call to the TokenReview API', () => {
  test('posts a TokenReview of the caller’s token to the configured host, with the reviewer JWT (or else the token itself) as bearer', async () => {
    const withReviewer = await attach('k8s-shape', { kubernetesHost: apiserver.url, caCert: apiserver.caCert, tokenReviewerJwt: REVIEWER, allowedAudience: 'coffer' });
    const withoutReviewer = await attach('k8s-shape-self', { kubernetesHost: apiserver.url, caCert: apiserver.caCert });
    apiserver.requests.length = 0;
    const refused = await login(withReviewer.id, CALLER);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ statusCode: 401, error: 'UnauthorizedError', message: 'Invalid credentials' });
    await login(withoutReviewer.id, CALLER);
    expect(apiserver.requests.map(({ method, path, authorization }) => ({ method, path, authorization }))).toEqual([
      { method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews', authorization: `Bearer ${REVIEWER}` },
      { method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews', authorization: `Bearer ${CALLER}` },
    ]);
    expect(JSON.parse(apiserver.requests[0]!.body)).toEqual({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: CALLER, audiences: ['coffer'] },
    });
    expect(JSON.parse(apiserver.requests[1]!.body)).toEqual({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: CALLER } });
    expect(JSON.stringify(refused.body)).not.toContain('LEAKED-BODY');
    const logs = app.logs.join('\n');
    expect(logs).not.toContain('LEAKED-BODY');
    expect(logs).not.toContain(CALLER);
    expect(logs).not.toContain(REVIEWER);
  });

  test.each([
    ['a redirect (never followed)', '/redirect', 'ca', 'outbound call failed: status 307'],
    ['an answer over the size limit', '/huge', 'ca', 'outbound call failed: too-large'],
    ['an error answer (its body never echoed)', '/error', 'ca', 'outbound call failed: status 500'],
    ['a server the CA does not vouch for', '', 'none', 'outbound call failed: unreachable'],
  ])('%s: 401, nothing issued, and the log names only the reason', async (_name, prefix, ca, reason) => {
    const identity = await attach(`k8s-outbound-${Math.random()}`, { kubernetesHost: `${apiserver.url}${prefix}`, ...(ca === 'ca' ? { caCert: apiserver.caCert } : {}) });
    const before = await snapshotDatabase(app.database, ['login_throttles', 'audit_logs']);
    const response = await login(identity.id, CALLER);
    expect(response.status).toBe(401);
    expect(response.body.message).toBe('Invalid credentials');
    expect(await snapshotDatabase(app.database, ['login_throttles', 'audit_logs'])).toEqual(before);
    const logged = app.logs.filter((line) => line.includes(identity.id) && line.includes('workload login refused')).join('\n');
    expect(logged).toContain(reason);
    expect(app.logs.join('\n')).not.toContain('LEAKED-BODY');
  });

  test('a host that does not answer is refused with the same 401', async () => {
    const closed = await startLocalServer(() => undefined);
    await closed.close();
    const identity = await attach('k8s-closed', { kubernetesHost: closed.url, caCert: closed.caCert });
    const response = await login(identity.id, CALLER);
    expect(response.status).toBe(401);
    expect(response.body.message).toBe('Invalid credentials');
  });
});

describe('root key rotation', () => {
  test('re-seals every token reviewer JWT under the new key', async () => {
    const rotating = await startTestApp();
    try {
      const rfx = await accessFixture(rotating, 'k8s-rotate');
      const identity = await rfx.identity('k8s-rotated');
      expect(
        (await rotating.request('POST', `${base}/${identity.id}`, { token: rfx.token, body: { kubernetesHost: 'https://k.example.com', tokenReviewerJwt: REVIEWER } }))
          .status,
      ).toBe(200);
      const current = Buffer.from(rotating.keys.encryptionKey, 'base64');
      const next = Buffer.alloc(32, 7);
      await rotateRootKey(rotating.database.db, current, next);
      const row = await rotating.database.db.selectFrom('identityKubernetesAuths').selectAll().where('identityId', '=', identity.id).executeTakeFirstOrThrow();
      expect(openReviewerJwt(new Keyring(next), identity.id, row.encryptedTokenReviewerJwt)).toBe(REVIEWER);
      expect(() => openReviewerJwt(new Keyring(current), identity.id, row.encryptedTokenReviewerJwt)).toThrow();
    } finally {
      await rotating.close();
    }
  });
});
